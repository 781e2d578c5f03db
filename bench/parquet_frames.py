"""`bench/columnar.py --frames parquet`: the whole `formula batch` process on a Parquet cohort against the loop.

Per benchmark calculator, a Parquet file of --rows rows (default 1,000,000) is written to a temporary folder in the
schema `formula convert --to parquet` writes (a value column and a dictionary `<name>_unit` column per quantity,
bool criteria, dictionary choices, null where a row gives nothing): the calculator's entity blocks (the shipped
reference cases and one-shot rows, or --split) converted, repeated to --rows rows, and every number given with a
unit moved by a random factor in [0.95, 1.05] (kept to the decimals of real records) so that most rows are
distinct patients, as a real cohort has them. Then, in the same run:

- `batch`: `formula batch FILE --calculator SLUG --variant benchmark --out OUT.parquet` as a child process, from
  start to exit (Python start, imports, registry, file read, compute, output written); `MB` is the child's
  own peak resident memory (ru_maxrss from wait4, the child forked from a small launcher: see `_LAUNCH`);
- `loop`: `compute` in a Python loop over --loop-rows rows drawn from the file, each row as the file holds it
  (the rows built beforehand: not timed), timed and scaled to --rows (marked ~); every answer of those rows must
  equal the batch output's to the bit. `ratio` is loop / batch, the figure the targets are judged on; `+read`
  adds to the loop the time to build those rows from the Arrow table (`held_rows`: what any scalar loop over the
  file must also do, and the lowest such cost, as no pandas row objects are made);
- `fixed`: the same command on a 1-row file of the same schema (the cost of a process that computes nothing),
  and `kernel`: compute_many on the whole table in this process, file read excluded;
- `floor`: the least any Python command doing this job takes on the same file: a program that starts Python,
  imports numpy and pyarrow, reads the file by row groups and writes it back with one column of zeros, computing
  nothing (`_FLOOR`: no registry, no checks, no kernel), timed as `batch` is. `ceil` is loop / floor, the ratio
  `formula batch` would reach if everything it does beyond that took no time at all.

Targets (issue 48): every calculator >= 15x, the median >= 30x, peak < 1 GB. Below a
target, `why` names the largest part of the batch's time and its share: `fixed` (the process's fixed cost),
`kernel` (compute_many on the table in memory) or `file` (the rest: reading and writing the Parquet file). The
summary also counts the calculators whose `ceil` is under 15x, and the median `ceil`: where those miss the
targets, no Python command can meet them on this machine, whatever it computes.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np

try:
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError:  # the install command's venv has no parquet support
    sys.exit("bench/parquet_frames.py needs pyarrow: pip install -e '.[parquet]'")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from registry.loader import get_registry  # noqa: E402
from solver.cohort_table import entities_table  # noqa: E402
from solver.library import CalculatorError, compute, compute_many  # noqa: E402
from solver.library.units import Converter  # noqa: E402
from solver.library.vectorised import columnar  # noqa: E402

SEED = 20261205


def cohort_table(blocks: list[dict[str, Any]], rows: int) -> Any:
    """The blocks in the cohort schema, repeated to `rows`, numbers with a unit moved by up to 5 %."""
    units = get_registry().units
    assert units is not None
    base = entities_table(blocks, Converter(units, exact=False))
    table = base.take(pa.array(np.resize(np.arange(base.num_rows), rows)))
    rng = np.random.default_rng(SEED)
    for name in list(table.schema.names):
        unit = f"{name}_unit"
        if unit not in table.schema.names or not pa.types.is_floating(table.schema.field(name).type):
            continue
        col = table.column(name).combine_chunks()
        v = np.asarray(col.fill_null(np.nan).to_numpy(zero_copy_only=False), dtype=float)
        moved = np.round(v * rng.uniform(0.95, 1.05, rows), 2)
        array = pa.array(moved, mask=np.isnan(v), type=pa.float64())
        table = table.set_column(table.schema.get_field_index(name), name, array)
    return table


def held_rows(table: Any) -> list[dict[str, Any]]:
    """Each row as the file holds it, as `compute` takes it (null: not given; a value and its unit as a pair)."""
    import json

    names = table.schema.names
    out = []
    for rec in table.to_pylist():
        row: dict[str, Any] = {}
        for k in sorted(names):
            v = rec[k]
            if v is None or (k.endswith("_unit") and k[:-5] in names):
                continue
            unit = rec.get(f"{k}_unit") if f"{k}_unit" in names else None
            row[k] = [v, unit] if unit is not None else json.loads(v) if isinstance(v, str) and v[:1] == "[" else v
        out.append(row)
    return out


def _loop(slug: str, rows: list[dict[str, Any]]) -> tuple[float, list[Any]]:
    t = time.perf_counter()
    got: list[Any] = []
    for ents in rows:
        try:
            v = compute(slug, ents, variant="benchmark").value
            got.append(v.isoformat() if hasattr(v, "isoformat") else list(v) if isinstance(v, tuple) else v)
        except CalculatorError:
            got.append(None)
    return time.perf_counter() - t, got


# Runs a command as its own child and reports its wall time and peak memory. The bench process itself is large
# (the tables it builds): Linux counts the memory of the process a child was forked from in the child's
# ru_maxrss (it survives exec), so `formula batch` is forked from this small launcher instead (`python -S`).
_LAUNCH = ("import os, subprocess, sys, time\n"
           "t = time.perf_counter()\n"
           "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
           "_, status, use = os.wait4(p.pid, 0)\n"
           "sys.stderr.write(f'\\n#bench {time.perf_counter() - t} {use.ru_maxrss} {os.waitstatus_to_exitcode(status)}\\n')\n")


# The floor: the least a Python command can do for this job (read the file, write it back with an answer column),
# computing nothing: Python, numpy and pyarrow imported, no registry. The column is built from a buffer, as
# `formula batch` builds its own (pyarrow's `pa.array` of a numpy array imports pandas: solver/library/arrow_buffers).
_FLOOR = ("import sys\n"
          "import numpy as np\n"
          "import pyarrow as pa\n"
          "import pyarrow.parquet as pq\n"
          "writer = None\n"
          "for batch in pq.ParquetFile(sys.argv[1]).iter_batches(batch_size=262144):\n"
          "    zeros = pa.Array.from_buffers(pa.float64(), batch.num_rows, [None, pa.py_buffer(np.zeros(batch.num_rows))])\n"
          "    table = pa.Table.from_batches([batch]).append_column('value', zeros)\n"
          "    writer = writer or pq.ParquetWriter(sys.argv[2], table.schema, use_dictionary=False)\n"
          "    writer.write_table(table)\n"
          "writer.close()\n")


def _floor(path: Path, out: Path) -> float:
    """Wall seconds of `_FLOOR` on the file, as a child process timed as `_batch` times `formula batch`."""
    return _child([sys.executable, "-c", _FLOOR, str(path), str(out)], "floor")[0]


def _batch(path: Path, out: Path, slug: str) -> tuple[float, float, str]:
    """(wall seconds, the child's peak RSS in MB, its stderr) of `formula batch` as a child process."""
    return _child([sys.executable, "-m", "cli", "batch", str(path), "--calculator", slug, "--variant", "benchmark",
                   "--out", str(out), "--allow-errors", "--no-progress"], slug)


def _child(cmd: list[str], label: str) -> tuple[float, float, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-S", "-c", _LAUNCH, *cmd], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    said, _, report = done.stderr.rpartition("\n#bench ")
    wall, peak_kb, code = report.split()
    if int(code) != 0:
        raise SystemExit(f"{label}: {cmd[1:3]} exited {code}: {said}")
    return float(wall), int(peak_kb) / 1024, said.strip()


def run_one(slug: str, blocks: list[dict[str, Any]], args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    table = cohort_table(blocks, args.rows)
    path, out, one = folder / f"{slug}.parquet", folder / f"{slug}.out.parquet", folder / f"{slug}.1.parquet"
    pq.write_table(table, path, row_group_size=args.row_group)
    pq.write_table(table.slice(0, 1), one)
    picks = np.sort(np.random.default_rng(SEED).choice(args.rows, min(args.loop_rows, args.rows), replace=False))
    t = time.perf_counter()
    sample = held_rows(table.take(picks))
    t_rows = time.perf_counter() - t
    _loop(slug, sample[:50])  # warm: the library's plans and caches (the loop is scaled from a sample)
    t_loop, want = _loop(slug, sample)
    walls, peaks = [], []
    for _ in range(args.repeat):
        wall, peak, said = _batch(path, out, slug)
        walls.append(wall)
        peaks.append(peak)
    fixed = min(_batch(one, folder / "one.out.parquet", slug)[0] for _ in range(args.repeat))
    floor = min(_floor(path, folder / "floor.out.parquet") for _ in range(args.repeat))
    t = time.perf_counter()
    compute_many(slug, table, variant="benchmark")
    kernel = time.perf_counter() - t
    got = pq.read_table(out, columns=["value"]).column("value").take(picks).to_pylist()
    bad = [i for i, (a, b) in enumerate(zip(got, want)) if not _same(a, b)]
    assert not bad, f"{slug}: formula batch differs from compute on sampled rows {bad[:5]}"
    loop, rows = t_loop * args.rows / len(sample), t_rows * args.rows / len(sample)
    batch = min(walls)
    return {"calculator": slug, "rows": args.rows, "batch_s": round(batch, 2), "loop_s_scaled": round(loop, 1),
            "ratio": round(loop / batch, 1), "rows_s_scaled": round(rows, 1), "read_ratio": round((loop + rows) / batch, 1),
            "peak_mb": round(max(peaks)), "fixed_s": round(fixed, 2), "floor_s": round(floor, 2),
            "ceiling": round(loop / floor, 1),
            "kernel_s": round(kernel, 2), "vectorised": "vectorised" in said, "loop_rows": len(sample)}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, (int, float)):  # (the file's value column is one arrow type)
        return a == b or (math.isnan(a) and b is None)
    return a == b


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    from benchmark_frames import entity_blocks
    from bytecode import write_bytecode

    write_bytecode()  # (as an install has it: see bench/bytecode.py)

    reg = get_registry()
    blocks = entity_blocks(Path(args.split) if args.split else None, reg)
    out = []
    with tempfile.TemporaryDirectory(prefix="formula-parquet-bench-") as tmp:
        for slug in args.only or sorted(blocks):
            if columnar(slug, reg) is None:
                out.append({"calculator": slug, "columnar": False})
                continue
            out.append(run_one(slug, blocks[slug], args, Path(tmp)))
            print(_line(out[-1]), file=sys.stderr, flush=True)
    return out


def _why(r: dict[str, Any]) -> str:
    """Below 15x: the largest part of the batch's time, of three: the fixed cost of a process (Python, imports,
    registry), the kernel (compute_many on the table in memory) and the rest (reading and writing the file)."""
    if r["ratio"] >= 15:
        return ""
    if not r["vectorised"]:
        return "row by row: its kernel has no columnar form"
    parts = {"fixed": r["fixed_s"], "kernel": r["kernel_s"], "file": max(r["batch_s"] - r["fixed_s"] - r["kernel_s"], 0)}
    name = max(parts, key=lambda k: parts[k])
    return f"{name} {parts[name] / r['batch_s']:.0%}"


def _ceilings(timed: list[dict[str, Any]]) -> str:
    """What the floor leaves: the calculators that no Python command could bring to 15x, and the median ceiling."""
    low = sorted((r for r in timed if r["ceiling"] < 15), key=lambda r: r["ceiling"])
    med = statistics.median(r["ceiling"] for r in timed)
    return (f"ceilings (loop / floor: reading the file and writing it back with a column of zeros): "
            f"{len(low)} of {len(timed)} under 15x" + (" (" + ", ".join(f"{r['calculator']} {r['ceiling']:.1f}x"
                                                                       for r in low) + ")" if low else "")
            + f"; median {med:.1f}x" + ("; so no Python command meets the targets on this machine"
                                        if low or med < 30 else ""))


def _line(r: dict[str, Any]) -> str:
    if r.get("columnar") is False:
        return f"{r['calculator'][:22]:22} row by row (not columnar)"
    return (f"{r['calculator'][:22]:22} {r['batch_s']:>5.2f} {r['loop_s_scaled']:>6.1f} {r['ratio']:>5.1f}x "
            f"{r['read_ratio']:>5.1f}x {r['floor_s']:>5.2f} {r['ceiling']:>5.1f}x {r['peak_mb']:>4} {_why(r)}")


def table(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    timed = [r for r in results if r.get("columnar") is not False]
    head = [textwrap.fill(f"formula batch on {args.rows:,}-row Parquet files (row groups of {args.row_group:,}), "
                          f"whole process, best of {args.repeat}; the loop timed on {args.loop_rows:,} rows of "
                          "each file and scaled (~)", 80),
            f"{'calculator':22} {'batch':>5} {'loop~':>6} {'ratio':>6} {'+read':>6} {'floor':>5} {'ceil':>6} "
            f"{'MB':>4} why"]
    lines = head + [_line(r) for r in results]
    if timed:
        low = [r for r in timed if r["ratio"] < 15]
        med = statistics.median(r["ratio"] for r in timed)
        peak = max(r["peak_mb"] for r in timed)
        lines.append(f"targets: {len(timed) - len(low)} of {len(timed)} at 15x or more"
                     + (" (below: " + ", ".join(f"{r['calculator']} {r['ratio']:.1f}x" for r in low) + ")" if low else "")
                     + f"; median {med:.1f}x (target 30x: {'met' if med >= 30 else 'not met'}); peak {peak} MB "
                     f"(target < 1000 MB: {'met' if peak < 1000 else 'not met'})")
        lines.append(_ceilings(timed))
    return "\n".join(lines[:len(head) + len(results)] + [textwrap.fill(x, 80, subsequent_indent="    ")
                                                           for x in lines[len(head) + len(results):]])
