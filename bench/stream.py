"""`formula batch` over a parquet file larger than it needs to hold: 10,000,000 rows, peak memory measured.

Generates the table in a temporary folder (written row group by row group, never whole in memory,
never kept in the repository), runs `formula batch` on it in a child process and reads the child's
peak resident memory with resource.getrusage(RUSAGE_CHILDREN). Target: under 1 GB.

    python bench/stream.py [--rows 10000000] [--calculator body-mass-index] [--keep DIR] [--format json]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

try:
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError:  # the install command's venv has no parquet support
    from registry.terminal import install_hint

    sys.exit(f"bench/stream.py needs pyarrow: {install_hint('parquet')}")

ROOT = Path(__file__).resolve().parent.parent
GROUP = 1_000_000


def generate(path: Path, rows: int, seed: int = 20261201) -> None:
    rng = np.random.default_rng(seed)
    writer = None
    for start in range(0, rows, GROUP):
        n = min(GROUP, rows - start)
        table = pa.table({"pid": np.arange(start, start + n),
                          "weight": np.round(rng.normal(78, 17, n).clip(38, 180), 1),
                          "height": np.round(rng.normal(170, 10, n).clip(140, 205), 1)})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    assert writer is not None
    writer.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--keep", type=Path, help="write the tables here instead of a temporary folder")
    ap.add_argument("--format", choices=["table", "json"], default="table")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="formula-stream-") as tmp:
        folder = args.keep or Path(tmp)
        src, dst = folder / "cohort.parquet", folder / "out.parquet"
        t = time.perf_counter()
        generate(src, args.rows)
        t_gen = time.perf_counter() - t
        cmd = [sys.executable, "-m", "cli.main", "batch", str(src), "--calculator", "body-mass-index", "--out", str(dst),
               "--columns", '{"weight": ["weight", "kg"], "height": ["height", "cm"]}', "--no-progress",
               "--allow-errors"]  # the random cohort's extremes give a few implausible BMIs: row errors, reported
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        t_run = time.perf_counter() - t
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return 1
        meta = pq.ParquetFile(dst).metadata
        result = {"rows": args.rows, "generate_s": round(t_gen, 1), "batch_s": round(t_run, 1),
                  "rows_per_s": round(args.rows / t_run), "peak_rss_mb": round(peak_kb / 1024),
                  "generator_peak_rss_mb_before": round(before / 1024), "out_rows": meta.num_rows,
                  "under_1gb": peak_kb / 1024 < 1024, "summary": proc.stderr.strip().splitlines()[-1]}
    if args.format == "json":
        print(json.dumps(result, indent=2))
    else:
        print(f"{args.rows:,} rows: formula batch {result['batch_s']} s ({result['rows_per_s']:,} rows/s), "
              f"peak memory {result['peak_rss_mb']} MB ({'under' if result['under_1gb'] else 'OVER'} 1 GB)")
        print(f"  {result['summary']}")
    return 0 if result["under_1gb"] and result["out_rows"] == args.rows else 1


if __name__ == "__main__":
    sys.exit(main())
