"""`formula batch` (and `formula solve --batch`): one calculator over a CSV or parquet table.

Reads the table, runs `solver.library.compute_many` with a progress bar, and writes the table
back with two more columns, `value` and `error` (one bad row never fails the batch). The output
is written atomically (temporary file in the same folder, fsync, rename).

`formula solve --batch` is the same command reached through `formula solve`: this module adds
its options to the solve parser (registered after `solver.solve_cli`), so solve_cli itself stays
untouched.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from registry.cliutil import add_root
from registry.terminal import printable, say
from solver.batch_output import csv_frame
from solver.library import VARIANTS

SUFFIXES = (".csv", ".parquet")


def _add_options(p: argparse.ArgumentParser, *, batch_required: bool) -> None:
    if batch_required:
        p.add_argument("batch", metavar="FILE", help="input table (.csv or .parquet), one row per patient")
    else:
        p.add_argument("--batch", metavar="FILE", help="compute every row of this table (.csv or .parquet) instead "
                       "of one --entities block; needs --out")
    p.add_argument("--out", metavar="FILE", required=batch_required,
                   help="output table (.csv or .parquet): the input columns plus value and error")
    p.add_argument("--columns", metavar="JSON|@FILE",
                   help='map entity names to columns, e.g. {"creatinine": "scr", "age": ["age_y", "years"]} '
                   "(a [column, unit] pair fixes the unit); default: columns named as the entities, with units "
                   "in <column>_unit or in [value, unit] cells")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-csv-guard", action="store_true",
                   help="write CSV cells verbatim; by default a text cell starting with = + - @ (or a tab or "
                   "carriage return) gets a leading ' so a spreadsheet shows it as text (numbers are never altered)")
    p.add_argument("--allow-errors", action="store_true",
                   help="exit 0 even when some rows have no value (by default such a run exits 3)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("batch", help="one calculator over a CSV or parquet table (a cohort)",
                       description="Compute one calculator for every row of a table with the verified library "
                       "(vectorised where the formula allows); writes the table with value and error columns.")
    _add_options(p, batch_required=True)
    p.add_argument("--calculator", required=True, help="benchmark id or registry slug")
    p.add_argument("--variant", choices=VARIANTS, default="published",
                   help="published: the formulas as published (default); benchmark: the benchmark's reference "
                   "implementation, quirks included")
    add_root(p)
    p.set_defaults(handler=run)

    solve = sub.choices.get("solve")
    if solve is not None:
        _add_options(solve, batch_required=False)
        for action in solve._actions:  # --entities is not needed with --batch; checked in the handler instead
            if action.dest == "entities":
                action.required = False
        single: Callable[[argparse.Namespace], int] = solve.get_default("handler")
        solve.set_defaults(handler=lambda args: _solve(args, single, solve))


def _solve(args: argparse.Namespace, single: Callable[[argparse.Namespace], int],
           parser: argparse.ArgumentParser) -> int:
    if args.batch is None:
        if getattr(args, "entities", None) is None:
            parser.error("the following arguments are required: --entities (or --batch FILE --out FILE)")
        return single(args)
    if getattr(args, "entities", None) is not None:
        parser.error("--entities and --batch exclude each other")
    if args.out is None:
        parser.error("--batch needs --out FILE")
    return run(args)


def _read_columns(arg: str | None) -> dict[str, Any] | None:
    if arg is None:
        return None
    text = arg
    if arg.startswith("@"):
        text = Path(arg[1:]).read_text(encoding="utf-8")
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("--columns must be a JSON object mapping entity names to columns")
    return {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}


def _read(path: Path):
    import pandas as pd

    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path)


def _write(frame, path: Path, *, csv_guard: bool = True) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent or ".")
    os.close(fd)
    try:
        if path.suffix == ".parquet":
            frame.to_parquet(tmp, index=False)
        else:
            csv_frame(frame, guard=csv_guard).to_csv(tmp, index=False)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def _check_paths(src: Path, dst: Path) -> str | None:
    for p, what in ((src, "input"), (dst, "--out")):
        if p.suffix not in SUFFIXES:
            return f"{what} {p} must end in .csv or .parquet"
    if not src.is_file():
        return f"cannot read {src}: no such file"
    if dst.parent and not dst.parent.is_dir():
        return f"cannot write {dst}: folder {dst.parent} does not exist"
    if _same_file(src, dst):
        return f"--out {dst} is the input table: write the results to another file (the input is never overwritten)"
    return None


def run(args: argparse.Namespace) -> int:
    src, dst = Path(args.batch), Path(args.out)
    problem = _check_paths(src, dst)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    try:
        columns = _read_columns(args.columns)
    except (OSError, ValueError) as e:
        print(f"error: --columns: {e}", file=sys.stderr)
        return 1
    try:
        import pandas as pd  # noqa: F401
        from tqdm import tqdm
    except ImportError as e:
        print(f"error: batch needs pandas and tqdm ({e})", file=sys.stderr)
        return 1
    from solver.library import CalculatorError

    calc = int(args.calculator) if str(args.calculator).isdigit() else args.calculator
    try:
        if src.suffix == ".parquet":
            from solver import batch_stream

            total, errors, attrs = batch_stream.run(src, dst, calc, args.variant, columns, tqdm,
                                                    progress=not args.no_progress and sys.stderr.isatty(),
                                                    csv_guard=not getattr(args, "no_csv_guard", False))
        else:
            total, errors, attrs = _run_in_memory(src, dst, calc, args, columns, tqdm)
    except _Refused as e:
        say(printable(f"error: {e}"), file=sys.stderr)  # messages quote the table's text
        return 1
    except ImportError as e:
        from registry.terminal import install_hint

        print(f"error: parquet needs pyarrow: {install_hint('parquet')} ({e})", file=sys.stderr)
        return 1
    except (CalculatorError, ValueError) as e:
        say(printable(f"error: {e}"), file=sys.stderr)  # messages quote the table's cells
        return 1
    except OSError as e:
        print(f"error: cannot write {dst}: {e.strerror or e}", file=sys.stderr)
        return 1
    how = "vectorised" if attrs["vectorised"] else "row by row"
    print(f"{attrs['calculator']} {attrs['version']} ({args.variant}, {how}): {total - errors} values, "
          f"{errors} row errors -> {dst}", file=sys.stderr)
    if errors and not args.allow_errors:
        print(f"error: {errors} of {total} rows have no value (see the error column of {dst}); pass --allow-errors "
              "to accept a table with row errors", file=sys.stderr)
        return 3
    return 0


class _Refused(Exception):
    """A table the command refuses before computing (printed as `error: ...`, exit 1)."""


def _run_in_memory(src: Path, dst: Path, calc: str | int, args: argparse.Namespace, columns: dict[str, Any] | None,
                   tqdm: Any) -> tuple[int, int, dict[str, Any]]:
    from solver.library import compute_many

    try:
        frame = _read(src)
    except ImportError:
        raise
    except Exception as e:  # pandas raises many kinds for an unreadable table
        raise _Refused(f"cannot read {src}: {e}") from None
    clash = [c for c in ("value", "error") if c in frame.columns]
    if clash:
        raise _Refused(f"{src} already has column(s) {', '.join(clash)}; rename them first")
    bar = tqdm(total=len(frame), unit="row", disable=args.no_progress or not sys.stderr.isatty(), file=sys.stderr)
    try:
        res = compute_many(calc, frame, variant=args.variant, columns=columns, progress=bar.update)
    finally:
        bar.close()
    out = frame.copy()
    out["value"] = res["value"].tolist()
    out["error"] = res["error"].tolist()
    _write(out, dst, csv_guard=not getattr(args, "no_csv_guard", False))
    return len(frame), int(res["error"].notna().sum()), dict(res.attrs)
