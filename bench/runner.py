"""Program-Solve against a loopback OpenAI-compatible server that answers each request after a fixed
delay: the same run at concurrency 1 and 32, in one process, and the ratio (target >= 20).

    python bench/runner.py [--delay 0.2] [--seeds 42 43]

Model waiting, executor work and row writing overlap; at concurrency 32 the run should take about
1/32 of the serial time plus the executor's and the writer's own cost.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver.data import ONE_SHOT  # noqa: E402
from solver.engines import EngineOptions  # noqa: E402
from solver.runner import RunConfig, run  # noqa: E402
from solver.runner.loopback import Loopback  # noqa: E402

PROGRAM = "```python\nimport math\n\ndef solve():\n    return round(math.sqrt(2) * 10, 3)\n```"


def timed(concurrency: int, url: str, seeds: list[int], out: Path) -> tuple[float, int]:
    opts = EngineOptions(model="bench", base_url=url, concurrency=concurrency, retries=0)
    cfg = RunConfig(arm="program-solve", data=ONE_SHOT, out=out, seeds=seeds, engine="openai", engine_options=opts,
                    progress=False, executor_workers=4)
    t = time.perf_counter()
    s = run(cfg)
    return time.perf_counter() - t, s.rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, default=0.2, help="seconds the server waits before each reply")
    ap.add_argument("--seeds", type=int, nargs="+", default=[42, 43])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Loopback(lambda req: PROGRAM, delay=args.delay) as server:
        timed(32, server.url, [41], Path(tmp) / "warm")  # load the registry and start the executor once
        serial, rows = timed(1, server.url, args.seeds, Path(tmp) / "c1")
        wide, _ = timed(32, server.url, args.seeds, Path(tmp) / "c32")
        print(f"Program-Solve, {rows} case-seed rows, server delay {args.delay * 1000:.0f} ms per request")
        print(f"  concurrency  1: {serial:7.2f} s  {rows / serial:7.1f} rows/s")
        print(f"  concurrency 32: {wide:7.2f} s  {rows / wide:7.1f} rows/s   (max in flight: {server.max_in_flight})")
        print(f"  ratio: {serial / wide:.1f}x (target >= 20)")


if __name__ == "__main__":
    main()
