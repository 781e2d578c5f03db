"""`formula batch` (and `formula solve --batch`): calculators over a CSV or parquet table.

Reads the table (a parquet file streamed by row group, as Arrow record batches), runs
`solver.library.compute_many` with a progress bar on a terminal, and writes the table back with two
more columns, `value` and `error` (one bad row never fails the batch); with several calculators, a
`<slug>` and a `<slug>_error` column each. A table that has no column for a required input is refused
before anything is computed (exit 2), naming the inputs, the table's columns and a `--columns` mapping.
The output is written atomically (temporary file in the same folder, fsync, rename).

`formula solve --batch` is the same command reached through `formula solve`: this module adds
its options to the solve parser (registered after `solver.solve_cli`), so solve_cli itself stays
untouched.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from registry import jsontext
from registry.cliutil import add_root
from registry.counted_nouns import agree, counted
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
    p = sub.add_parser("batch",
                       description="Compute calculators for every row of a table with the verified library "
                       "(vectorised where the formula allows); writes the table with a value and an error column per "
                       "calculator. A parquet file is streamed by row group (schema: docs/guide/cohorts-parquet.md); "
                       "a table with no column for a required input is refused before anything runs (exit 2).")
    _add_options(p, batch_required=True)
    p.add_argument("--calculator", required=True, action="append", metavar="ID",
                   help="benchmark id or registry slug; repeat it (or separate ids with commas) to compute several "
                   "calculators in one pass: each gets a <slug> and a <slug>_error column")
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
    data = jsontext.loads(text, unique=True)
    if not isinstance(data, dict):
        raise ValueError("--columns must be a JSON object mapping entity names to columns")
    return {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}


@contextmanager
def _reading(src: Path) -> Iterator[None]:
    """A table that cannot be read (not Parquet, not UTF-8, no header, ...) as one message naming the file and
    what to do, instead of the reader's words alone."""
    try:
        yield
    except UnicodeDecodeError as e:
        raise ValueError(f"{src}: not UTF-8 text (byte {e.start}); save the table as UTF-8 CSV or as Parquet") from None
    except (OSError, ValueError) as e:  # (pyarrow's ArrowInvalid and pandas' parser errors are ValueErrors)
        hint = ("write it with pyarrow or pandas, or make one from benchmark entities with `formula convert --to "
                "parquet`" if src.suffix == ".parquet" else "its first line must name the columns")
        kind = "Parquet" if src.suffix == ".parquet" else "CSV"
        raise ValueError(f"cannot read {src} as a {kind} table ({e}); {hint}") from None


def _read(path: Path):
    import pandas as pd

    with _reading(path):
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path)


def _write(frame, path: Path, *, csv_guard: bool = True, values: list[str] | None = None) -> None:
    from registry.atomic import atomic_output

    with atomic_output(path) as tmp:
        if path.suffix == ".parquet":
            frame.to_parquet(tmp, index=False)
        else:
            csv_frame(frame, guard=csv_guard, values=values).to_csv(tmp, index=False)


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


def _refs(given: Any) -> list[str | int]:
    """The calculators asked for (repeated --calculator, or ids separated by commas)."""
    out: list[str | int] = []
    for arg in given if isinstance(given, list) else [given]:
        for ref in str(arg).split(","):
            ref = ref.strip()
            if ref:
                out.append(int(ref) if ref.isdigit() else ref)
    return out


def _table_columns(src: Path) -> list[str]:
    """The column names of the input table (a parquet file's schema; a CSV file's header)."""
    with _reading(src):
        if src.suffix == ".parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(src).names)
        import pandas as pd

        return [str(c) for c in pd.read_csv(src, nrows=0).columns]


def _per_calculator(calcs: list[Any], columns: dict[str, Any] | None) -> list[dict[str, Any] | None]:
    """The part of --columns each calculator reads; a key that is an input of none is refused."""
    if not columns:
        return [None] * len(calcs)
    inputs = [{i.name for i in c.inputs} for c in calcs]
    unknown = sorted(k for k in columns if not any(k in names for names in inputs))
    if unknown:
        raise ValueError(f"--columns maps unknown input(s) {', '.join(map(repr, unknown))}; inputs: "
                         f"{', '.join(sorted(set().union(*inputs) - {'*'}))}")
    return [{k: v for k, v in columns.items() if k in names} for names in inputs]


def _near(name: str, have: list[str]) -> str:
    """The column that is most likely `name` spelled otherwise (case, spaces, underscores; or holding it, as
    `serum_creatinine` holds `creatinine`), or COLUMN: a suggestion for the --columns hint, never applied."""
    key = "".join(ch for ch in name.lower() if ch.isalnum())
    plain = {c: "".join(ch for ch in c.lower() if ch.isalnum()) for c in have if not c.endswith("_unit")}
    same = [c for c, k in plain.items() if k == key]
    holds = [c for c, k in plain.items() if len(key) >= 4 and key in k]
    return (same or holds or ["COLUMN"])[0]


def _missing(src: Path, calcs: list[Any], columns: list[dict[str, Any] | None]) -> str | None:
    """The refusal of a table without a column for some required input (None: every one is there)."""
    import textwrap

    from solver.library.arrow_columns import missing_inputs

    have = _table_columns(src)
    lines, fix = [], {}
    for calc, cols in zip(calcs, columns):
        gone = missing_inputs(calc, have, cols)
        if gone:
            lines.append(f"{calc.slug} needs {', '.join(map(repr, gone))}")
            for name in gone:
                fix[name] = _near(name, have)
    if not lines:
        return None
    wrap = lambda text: textwrap.fill(text, 78, subsequent_indent="  ", break_on_hyphens=False)  # noqa: E731
    return "\n".join([f"error: {src.name} has no column for a required input (nothing was computed):",
                       *(wrap(f"  {line}") for line in lines),
                       wrap(f"  the table's columns: {', '.join(have) or '(none)'}"),
                       "  map each input to a column ([column, unit] gives a whole column one unit):",
                       *_mapping(fix)])


def _mapping(fix: dict[str, str]) -> list[str]:
    """`--columns '{...}'` as lines of at most 80 characters (a quoted argument may span lines in a shell)."""
    items = [f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for k, v in fix.items()]
    lines, line = [], "    --columns '{"
    for k, item in enumerate(items):
        piece = item + (", " if k < len(items) - 1 else "}'")
        if len(line) + len(piece.rstrip()) > 80 and not line.endswith("{"):
            lines.append(line.rstrip())
            line = "      "
        line += piece
    return [*lines, line]


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
    shown = not args.no_progress and sys.stderr.isatty()
    try:
        bar_type: Any = _Quiet
        if shown:  # (importing tqdm costs 0.02 s, a tenth of a small Parquet batch: only for a bar that shows)
            import tqdm

            bar_type = tqdm.tqdm
        if src.suffix != ".parquet":  # (a Parquet file is read and computed without pandas: 0.15 s of the command)
            import pandas as pd  # noqa: F401
    except ImportError as e:
        print(f"error: batch needs pandas and tqdm ({e})", file=sys.stderr)
        return 1
    from registry.loader import get_registry
    from solver.library import CalculatorError, resolve

    try:
        calcs = [resolve(ref, get_registry()) for ref in _refs(args.calculator)]
        per = _per_calculator(calcs, columns)
        refusal = _missing(src, calcs, per)
        if refusal is not None:
            say(printable(refusal, multiline=True), file=sys.stderr)
            return 2
        if src.suffix == ".parquet":
            from solver import batch_stream

            total, errors, attrs = batch_stream.run(src, dst, calcs, args.variant, per, bar_type,
                                                    progress=shown,
                                                    csv_guard=not getattr(args, "no_csv_guard", False))
        else:
            total, errors, attrs = _run_in_memory(src, dst, calcs, args, per, bar_type)
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
    return _summary(calcs, args, attrs, total, errors, dst)


def _summary(calcs: list[Any], args: argparse.Namespace, attrs: list[dict[str, Any]], total: int, errors: int,
             dst: Path) -> int:
    """One line per calculator (its values and row errors), then exit 3 when a row has no value (unless allowed)."""
    for a in attrs:
        how = "vectorised" if a["vectorised"] else "row by row"
        print(f"{a['calculator']} {a['version']} ({args.variant}, {how}): {counted(total - a['errors'], 'value')}, "
              f"{counted(a['errors'], 'row error')} -> {dst}", file=sys.stderr)
    if errors and not args.allow_errors:
        print(f"error: {errors} of {counted(total, 'row')} {agree(errors, 'has', 'have')} no value (see the error "
              f"column of {dst}); pass --allow-errors "
              "to accept a table with row errors", file=sys.stderr)
        return 3
    return 0


class _Quiet:
    """The progress bar where none is shown (--no-progress, or stderr not a terminal): tqdm's calls, doing nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


class _Refused(Exception):
    """A table the command refuses before computing (printed as `error: ...`, exit 1)."""


def _run_in_memory(src: Path, dst: Path, calcs: list[Any], args: argparse.Namespace,
                   columns: list[dict[str, Any] | None], tqdm: Any) -> tuple[int, int, list[dict[str, Any]]]:
    import numpy as np

    from solver.batch_stream import result_names
    from solver.library import compute_many

    try:
        frame = _read(src)
    except ImportError:
        raise
    except Exception as e:  # pandas raises many kinds for an unreadable table
        raise _Refused(f"cannot read {src}: {e}") from None
    names = result_names([c.slug for c in calcs])
    clash = [c for pair in names for c in pair if c in frame.columns]
    if clash:
        raise _Refused(f"{src} already has column(s) {', '.join(clash)}; rename them first")
    bar = tqdm(total=len(frame) * len(calcs), unit="row", disable=args.no_progress or not sys.stderr.isatty(),
               file=sys.stderr)
    out = frame.copy()
    failed = np.zeros(len(frame), dtype=bool)
    attrs: list[dict[str, Any]] = []
    try:
        for calc, cols, (vname, ename) in zip(calcs, columns, names):
            res = compute_many(calc.slug, frame, variant=args.variant, columns=cols, progress=bar.update)
            out[vname] = res["value"].tolist()
            out[ename] = res["error"].tolist()
            wrong = res["error"].notna().to_numpy()
            failed |= wrong
            attrs.append({**res.attrs, "errors": int(wrong.sum())})
    finally:
        bar.close()
    _write(out, dst, csv_guard=not getattr(args, "no_csv_guard", False), values=[v for v, _ in names])
    return len(frame), int(failed.sum()), attrs

