"""`bench/columnar.py --frames benchmark`: `compute_many` on frames shaped like the benchmark's own entities.

A user's frame is the benchmark's test split read as it is: each row's "Relevant Entities" JSON turned into
columns (`pandas.DataFrame.from_records`), so units change from row to row, a criterion a row does not give is an
empty cell (NaN in an object column) and values are `[number, "unit"]` lists. The entities come from the split
given with --split (CSV or parquet, docs/guide/evaluators.md, "The data"), or else from what the package ships: the 2,200 reference
cases and the 55 one-shot rows, whose entity blocks are in the benchmark's own format (medcalc/VOCAB.md).

Per calculator two frames: its rows repeated to --rows (default 1,000,000), and a --sample-rows (2,000) sample
drawn from them. Against, in the same run: `compute` in a Python loop over the same rows as the frame holds them
(timed on the distinct rows and scaled for the large frame; on every row of the sample). Printed: the ratio
loop/compute_many on each frame (`large`, `2k`; `2k ms` is compute_many's time on the sample), `left` (valid rows
of the large frame that the arrays refused and `compute` answered alone: 0 is the target), `typed` (rows whose
number the arrays hold but whose int/float type they cannot tell, ints among floats: answered by `compute` once
per distinct combination of cells), `calls` (the `compute` calls made, error rows included) and `ceil` (the loop
over the time `entity_columns` alone takes to read the large frame: the ratio no kernel could beat), and `1 ms`
(compute_many on the sample's first row alone: the fixed cost of a call, best of 5 x --repeat).
"""
from __future__ import annotations

import argparse
import math
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from registry.loader import Registry, get_registry
from solver.data import ONE_SHOT, REFERENCE_CASES, read_benchmark
from solver.library import CalculatorError, compute, compute_many
from solver.library.batch import entity_columns
from solver.library.core import resolve
from solver.library.vectorised import columnar


def entity_blocks(split: Path | None, reg: Registry) -> dict[str, list[dict[str, Any]]]:
    """calculator slug -> the entity blocks of its rows (the split's, or the shipped reference and one-shot rows)."""
    sources = [split] if split is not None else [REFERENCE_CASES, ONE_SHOT]
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sources:
        for row in read_benchmark(path).rows:
            out.setdefault(resolve(row.calculator_id, reg).slug, []).append(row.entities)
    return out


def frame_of(blocks: list[dict[str, Any]], rows: np.ndarray) -> pd.DataFrame:
    """The frame a user gets from these entity blocks: one column per entity, the blocks picked by `rows`."""
    base = pd.DataFrame.from_records(blocks)
    return base.iloc[rows].reset_index(drop=True)


def row_entities(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Each row as the frame holds it (an empty cell not given; numpy scalars as Python values): what a loop over
    the frame hands to `compute`."""
    out = []
    for rec in frame.to_dict("records"):
        e = {}
        for k, v in rec.items():
            v = v.item() if isinstance(v, np.generic) else v
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            e[k] = v
        out.append(e)
    return out


def _loop(slug: str, ents: list[dict[str, Any]]) -> tuple[list[Any], list[str | None]]:
    values: list[Any] = []
    errors: list[str | None] = []
    for e in ents:
        try:
            v = compute(slug, e, variant="benchmark").value
            values.append(v.isoformat() if hasattr(v, "isoformat") else list(v) if isinstance(v, tuple) else v)
            errors.append(None)
        except CalculatorError as err:
            values.append(None)
            errors.append(str(err))
    return values, errors


def _same(a: Any, b: Any) -> bool:
    return a == b and type(a) is type(b)


def _best(fn: Any, repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def run_one(slug: str, blocks: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    reg = get_registry()
    k = len(blocks)
    big = frame_of(blocks, np.resize(np.arange(k), args.rows))
    sample = frame_of(blocks, np.random.default_rng(20261202).integers(0, k, args.sample_rows))
    distinct, sample_ents = row_entities(big.iloc[:k]), row_entities(sample)
    compute_many(slug, big.iloc[:50], variant="benchmark")  # warm: library functions, registry plans
    t_many = _best(lambda: compute_many(slug, big, variant="benchmark"), args.repeat)
    res = compute_many(slug, big, variant="benchmark")
    t_loop = _best(lambda: _loop(slug, distinct), args.repeat) * args.rows / k
    t_small = _best(lambda: compute_many(slug, sample, variant="benchmark"), args.repeat)
    t_small_loop = _best(lambda: _loop(slug, sample_ents), args.repeat)
    one = sample.iloc[:1]
    t_one = _best(lambda: compute_many(slug, one, variant="benchmark"), 5 * args.repeat)  # the fixed cost of a call
    t_read = _best(lambda: entity_columns(big, reg.calculators[slug]), args.repeat)
    want, why = _loop(slug, distinct)
    got = res["value"].tolist()[:k]
    bad = [i for i in range(k) if not (_same(got[i], want[i]) and res["error"].iloc[i] == why[i])]
    assert not bad, f"{slug}: compute_many differs from compute on rows {bad[:5]}"
    small = compute_many(slug, sample, variant="benchmark")
    return {"calculator": slug, "rows": args.rows, "distinct_rows": k, "compute_many_s": round(t_many, 3),
            "loop_s_scaled": round(t_loop, 2), "ratio": round(t_loop / t_many, 1),
            # (attrs an older revision lacks, when bench/compare.py runs this harness on its code: the rows it
            # answered by `compute` that were no error count as left)
            "left": res.attrs.get("left_path", res.attrs["row_by_row"] - int(res["error"].notna().sum())),
            "typed": res.attrs.get("by_combination", 0),
            "errors": int(res["error"].notna().sum()),
            "compute_calls": res.attrs.get("compute_calls", res.attrs["row_by_row"]), "ceiling": round(t_loop / t_read, 1),
            "sample_rows": args.sample_rows, "sample_ms": round(t_small * 1e3, 1),
            "sample_loop_ms": round(t_small_loop * 1e3, 1), "sample_ratio": round(t_small_loop / t_small, 1),
            "sample_left": small.attrs.get("left_path"), "one_row_ms": round(t_one * 1e3, 2)}


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    reg = get_registry()
    blocks = entity_blocks(Path(args.split) if args.split else None, reg)
    out = []
    unknown = sorted(set(args.only or []) - set(blocks))
    if unknown:
        raise SystemExit(f"--only: no entity blocks for {', '.join(unknown)} (a successor formula, or not a benchmark "
                         "calculator: the uniform frames, without --frames benchmark, time those)")
    for slug in args.only or sorted(blocks):
        if columnar(slug, reg) is None:
            out.append({"calculator": slug, "columnar": False})
            continue
        out.append(run_one(slug, blocks[slug], args))
    return out


def table(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    source = args.split or "the shipped reference cases and one-shot rows"
    lines = [textwrap.fill(f"benchmark-shaped frames from {source}: {args.rows:,} rows (large) and a "
                           f"{args.sample_rows:,}-row sample (2k) per calculator; the loop over the same rows", 80),
             f"{'calculator':26} {'large':>6} {'left':>5} {'typed':>7} {'calls':>5} {'ceil':>6} {'2k ms':>6} "
             f"{'2k':>5} {'1 ms':>6}"]
    for r in results:
        if r.get("columnar") is False:
            lines.append(f"{r['calculator']:26} row by row (not columnar)")
            continue
        one = f"{r['one_row_ms']:>6.2f}" if "one_row_ms" in r else f"{'-':>6}"
        lines.append(f"{r['calculator'][:26]:26} {r['ratio']:>5.1f}x {r['left']:>5} {r['typed']:>7} "
                     f"{r['compute_calls']:>5} {r['ceiling']:>5.1f}x {r['sample_ms']:>6.1f} {r['sample_ratio']:>4.1f}x {one}")
    timed = [r for r in results if r.get("columnar") is not False]
    low = sorted((r for r in timed if r["ratio"] < 20), key=lambda r: r["ratio"])
    slow = [r for r in timed if r["sample_ratio"] < 1]
    left = [r for r in timed if r["left"]]
    costly = [r for r in timed if r.get("one_row_ms", 0) >= 5]
    lines.append(f"large frame: {len(timed) - len(low)} of {len(timed)} at 20x or more"
                 + ("; below: " + ", ".join(f"{r['calculator']} {r['ratio']:.1f}x" for r in low) if low else ""))
    lines.append(f"sample: {len(timed) - len(slow)} of {len(timed)} no slower than the loop"
                 + ("; slower: " + ", ".join(r["calculator"] for r in slow) if slow else ""))
    lines.append(f"fixed cost (a 1-row frame, `1 ms`): {len(timed) - len(costly)} of {len(timed)} under 5 ms"
                 + ("; over: " + ", ".join(f"{r['calculator']} {r['one_row_ms']:.1f} ms" for r in costly) if costly else ""))
    lines.append(f"valid rows left alone: {sum(r['left'] for r in timed):,} in {len(left)} calculators"
                 + (": " + ", ".join(r["calculator"] for r in left) if left else ""))
    typed = [r for r in timed if r["typed"]]
    lines.append(f"rows typed by compute per combination: {sum(r['typed'] for r in timed):,} in {len(typed)} "
                 "calculators" + (": " + ", ".join(r["calculator"] for r in typed) if typed else ""))
    head, summary = lines[:len(lines) - 5], lines[len(lines) - 5:]
    return "\n".join(head + [textwrap.fill(line, width=80, subsequent_indent="    ", break_on_hyphens=False)
                             for line in summary])
