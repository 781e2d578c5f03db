"""Library speed: every reference case through `compute`, both variants, against a 1-second budget.

The baseline in the same run is reading and parsing the case file itself, so the ratio shows what
validation, unit conversion and provenance recording cost on top of touching the data once.

    python bench/library.py [--repeat N] [--format json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from registry.loader import clear_cache, get_registry  # noqa: E402
from solver.data import REFERENCE_CASES as CASES  # noqa: E402
from solver.library import compute  # noqa: E402


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--format", choices=["table", "json"], default="table")
    args = ap.parse_args()

    def parse():
        return [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines()]

    rows = parse()

    def load():
        clear_cache()
        get_registry()

    t_load = best(load, args.repeat)
    compute(2, rows[0]["entities"], variant="benchmark")  # import every calculator module once

    def run(variant: str):
        def go():
            for r in rows:
                try:
                    compute(r["calculator_id"], r["entities"], variant=variant)
                except ValueError:
                    pass  # the published variant refuses a few inputs by design

        return go

    t_parse = best(parse, args.repeat)
    t_bench = best(run("benchmark"), args.repeat)
    t_pub = best(run("published"), args.repeat)
    n = len(rows)
    result = {
        "cases": n,
        "registry_load_validate_s": round(t_load, 4),
        "parse_file_s": round(t_parse, 4),
        "benchmark_variant_s": round(t_bench, 4),
        "published_variant_s": round(t_pub, 4),
        "benchmark_cases_per_s": round(n / t_bench),
        "published_cases_per_s": round(n / t_pub),
        "ratio_compute_to_parse": round(t_bench / t_parse, 1),
        "share_of_1s_budget": round(t_bench, 3),
    }
    if args.format == "json":
        print(json.dumps(result, indent=2))
    else:
        print(f"registry load + validate      {t_load * 1000:8.1f} ms")
        print(f"parse {n} cases (baseline)   {t_parse * 1000:8.1f} ms")
        print(f"benchmark variant, all cases  {t_bench * 1000:8.1f} ms  {n / t_bench:9.0f} cases/s  "
              f"{t_bench / t_parse:5.1f}x the parse")
        print(f"published variant, all cases  {t_pub * 1000:8.1f} ms  {n / t_pub:9.0f} cases/s")
        print(f"whole file in {t_bench:.3f} s of a 1 s budget ({'OK' if t_bench < 1 else 'OVER'})")
    return 0 if t_bench < 1 else 1


if __name__ == "__main__":
    sys.exit(main())
