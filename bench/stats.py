"""Statistics speed: 10,000 calculator-cluster bootstrap draws for one paired comparison over
5,500 rows (1,100 cases x 5 seeds, 55 calculators), against a 2-second budget.

The baseline in the same run is a plain pandas loop with the same draws (rows split by
calculator once; per draw: pick 55 calculators, concatenate their rows, take the mean difference). It is timed on
--baseline-draws draws and scaled to the full count, so the bench stays short; both must give the
same resampled gaps on the draws they share, which is checked before timing is reported.

    python bench/stats.py [--draws 10000] [--baseline-draws 300] [--repeat 3] [--format json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from audit import stats  # noqa: E402

BUDGET_S = 2.0


def synthetic(seed: int = 0) -> pd.DataFrame:
    """1,100 cases (20 per calculator) x 5 seeds with calculator-level structure, like Table 7's inputs."""
    rng = np.random.default_rng(seed)
    calc = np.repeat(np.arange(55), 20)
    case = np.arange(1100)
    pa = np.clip(rng.normal(0.8, 0.15, 55), 0, 1)[calc]
    pb = np.clip(rng.normal(0.7, 0.2, 55), 0, 1)[calc]
    frames = [pd.DataFrame({"calculator": calc, "case": case, "seed": s, "a": rng.random(1100) < pa,
                            "b": rng.random(1100) < pb}) for s in range(42, 47)]
    return pd.concat(frames, ignore_index=True)


def pandas_loop(df: pd.DataFrame, draws: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    df = df.assign(d=df["a"].astype(int) - df["b"].astype(int))
    parts = dict(tuple(df.groupby("calculator")))  # each calculator's rows, split once
    groups = sorted(parts)
    out = []
    for _ in range(draws):
        picks = rng.integers(0, len(groups), size=len(groups))
        sample = pd.concat([parts[groups[i]] for i in picks])
        out.append(100.0 * sample["d"].mean())
    return np.array(out)


def best(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=10_000)
    ap.add_argument("--baseline-draws", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--format", choices=["table", "json"], default="table")
    args = ap.parse_args()

    df = synthetic()
    diff = (df["a"].astype(float) - df["b"].astype(float)).to_numpy()
    calc = df["calculator"].to_numpy()
    t_fast, ci = best(lambda: stats.cluster_ci(diff, calc, args.draws, 0), args.repeat)
    t_base, base = best(lambda: pandas_loop(df, args.baseline_draws, 0), 1)
    same = np.allclose(stats.bootstrap_gaps(diff, calc, args.baseline_draws, 0), base, atol=1e-9)
    t_base_full = t_base * args.draws / args.baseline_draws
    t_all, _ = best(lambda: stats.paired(df["a"].to_numpy(), df["b"].to_numpy(), df["case"].to_numpy(), calc,
                                         draws=args.draws, seed=0), args.repeat)
    result = {
        "rows": len(df), "cases": 1100, "calculators": 55, "draws": args.draws,
        "cluster_bootstrap_s": round(t_fast, 4), "budget_s": BUDGET_S, "within_budget": t_fast < BUDGET_S,
        "pandas_loop_s_scaled": round(t_base_full, 2), "pandas_loop_draws_timed": args.baseline_draws,
        "ratio": round(t_base_full / t_fast, 1), "same_draws_agree": bool(same),
        "all_table7_statistics_s": round(t_all, 3), "cluster_ci": [round(x, 3) for x in ci],
    }
    if args.format == "json":
        print(json.dumps(result, indent=2))
    else:
        print(f"{len(df)} rows, 1,100 cases, 55 calculators, {args.draws} draws")
        print(f"cluster bootstrap (audit.stats):   {t_fast:.4f} s (budget {BUDGET_S} s)  CI {result['cluster_ci']}")
        print(f"pandas loop, same draws:           {t_base_full:.2f} s (timed on {args.baseline_draws} draws, "
              f"scaled)  same gaps: {same}")
        print(f"ratio: {result['ratio']}x faster")
        print(f"every Table 7 statistic (gap, both CIs, perm p, McNemar, ICC, n_eff): {t_all:.3f} s")
    return 0 if same and t_fast < BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
