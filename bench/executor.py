"""Throughput of the restricted executor, three ways, on the same benign programs.

    python3 bench/executor.py [--n 500] [--workers N] [--format table|json]

(a) fresh:  a new `python -I` interpreter per program, one after another (the
            paper's method; same checker, limits and sandbox, see
            solver/executor/isolated.py)
(b) serial: `run_program` one by one (a warm fork server forks a child each)
(c) map:    `Executor(workers).map` over all programs (N fork servers)

Every program still runs in its own fresh process under every limit in all
three.  The script also checks that the three agree on every outcome.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver.executor import Executor, Outcome, run_program, shutdown  # noqa: E402
from solver.executor.isolated import run_fresh  # noqa: E402

TEMPLATES: list[Callable[[random.Random], str]] = [
    lambda r: (
        "import datetime\n"
        "def solve():\n"
        f"    lmp = datetime.date({r.randint(2015, 2024)}, {r.randint(1, 12)}, {r.randint(1, 28)})\n"
        f"    cycle = {r.randint(21, 35)}\n"
        "    return lmp + datetime.timedelta(days=280 + cycle - 28)\n"
    ),
    lambda r: (
        "import math\n"
        "def solve():\n"
        f"    qt, hr = {r.randint(320, 480)}, {r.randint(45, 140)}\n"
        "    return qt / math.sqrt(60 / hr)\n"
    ),
    lambda r: (
        "def solve():\n"
        f"    scr, age, female = {r.uniform(0.4, 4.0):.2f}, {r.randint(18, 90)}, {r.random() < 0.5}\n"
        "    k = 0.7 if female else 0.9\n"
        "    a = -0.241 if female else -0.302\n"
        "    egfr = 142 * min(scr / k, 1) ** a * max(scr / k, 1) ** -1.2 * 0.9938 ** age\n"
        "    return egfr * (1.012 if female else 1)\n"
    ),
    lambda r: (
        "def solve():\n"
        f"    na, cl, hco3, alb = {r.randint(125, 150)}, {r.randint(90, 115)}, {r.randint(10, 30)}, {r.uniform(1.5, 5):.1f}\n"
        "    ag = na - (cl + hco3)\n"
        "    return ag + 2.5 * (4 - alb)\n"
    ),
    lambda r: (
        "def solve():\n"
        f"    age, bun, rr, sbp, dbp, confusion = {r.randint(18, 95)}, {r.randint(5, 60)}, {r.randint(10, 40)}, {r.randint(70, 180)}, {r.randint(40, 110)}, {r.random() < 0.3}\n"  # noqa: E501
        "    score = 0\n"
        "    if confusion:\n"
        "        score += 1\n"
        "    if bun > 19:\n"
        "        score += 1\n"
        "    if rr >= 30:\n"
        "        score += 1\n"
        "    if sbp < 90 or dbp <= 60:\n"
        "        score += 1\n"
        "    if age >= 65:\n"
        "        score += 1\n"
        "    return score\n"
    ),
    lambda r: (
        "from datetime import date\n"
        "def solve():\n"
        f"    lmp = date({r.randint(2018, 2023)}, {r.randint(1, 12)}, {r.randint(1, 28)})\n"
        f"    today = date(2024, {r.randint(1, 12)}, {r.randint(1, 28)})\n"
        "    return divmod((today - lmp).days % 300, 7)\n"
    ),
    lambda r: (
        "import math\n"
        "def solve():\n"
        f"    bili, inr, cr = {r.uniform(0.3, 20):.1f}, {r.uniform(0.8, 4):.2f}, {r.uniform(0.4, 6):.2f}\n"
        "    bili, inr, cr = max(bili, 1.0), max(inr, 1.0), min(max(cr, 1.0), 4.0)\n"
        "    return round(3.78 * math.log(bili) + 11.2 * math.log(inr) + 9.57 * math.log(cr) + 6.43)\n"
    ),
    lambda r: (
        "def solve():\n"
        f"    weight = {r.randint(3, 120)}\n"
        "    if weight <= 10:\n"
        "        return 4 * weight\n"
        "    elif weight <= 20:\n"
        "        return 40 + 2 * (weight - 10)\n"
        "    return 60 + (weight - 20)\n"
    ),
    lambda r: (
        "Here is the program.\n```python\n"
        "def solve():\n"
        f"    points = {{'chf': 1, 'htn': 1, 'age75': 2, 'dm': 1, 'stroke': 2, 'vasc': 1, 'age65': 1, 'female': 1}}\n"
        f"    present = {r.sample(['chf', 'htn', 'age75', 'dm', 'stroke', 'vasc', 'age65', 'female'], r.randint(0, 5))}\n"
        "    return sum([points[k] for k in present])\n"
        "```\n"
    ),
    lambda r: (
        "from datetime import datetime, timedelta\n"
        "def solve():\n"
        f"    lmp = datetime.strptime('{r.randint(1, 12):02d}/{r.randint(1, 28):02d}/{r.randint(2015, 2024)}', '%m/%d/%Y')\n"
        "    return (lmp + timedelta(days=266)).date()\n"
    ),
]


def corpus(n: int, seed: int = 0) -> list[str]:
    """n benign calculator-style programs, deterministic for a seed."""
    rng = random.Random(seed)
    return [TEMPLATES[i % len(TEMPLATES)](rng) for i in range(n)]


def _timed(fn: Callable[[], list[Outcome]]) -> tuple[list[Outcome], float]:
    start = time.perf_counter()
    outcomes = fn()
    return outcomes, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="number of programs (default 500)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="fork servers for (c)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    args = parser.parse_args(argv)

    programs = corpus(args.n)
    fresh, t_fresh = _timed(lambda: [run_fresh(p) for p in programs])
    run_program(programs[0])  # start the default fork server outside the timing
    serial, t_serial = _timed(lambda: [run_program(p) for p in programs])
    shutdown()
    with Executor(workers=args.workers) as executor:
        mapped, t_map = _timed(lambda: executor.map(programs))

    def key(o: Outcome) -> tuple[str, object]:
        return (o.kind, o.value)

    agree = sum(key(a) == key(b) == key(c) for a, b, c in zip(fresh, serial, mapped))
    values = sum(o.kind == "value" for o in mapped)
    rate = {"a_fresh_interpreter": args.n / t_fresh, "b_run_program": args.n / t_serial, "c_executor_map": args.n / t_map}
    report = {
        "programs": args.n,
        "workers": args.workers,
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "seconds": {"a": t_fresh, "b": t_serial, "c": t_map},
        "programs_per_s": rate,
        "ratio_c_over_a": rate["c_executor_map"] / rate["a_fresh_interpreter"],
        "ratio_b_over_a": rate["b_run_program"] / rate["a_fresh_interpreter"],
        "outcomes_agree": agree,
        "valid_values": values,
    }
    if args.format == "json":
        print(json.dumps(report, indent=2))
    else:
        print(f"executor benchmark: {args.n} benign programs, Python {report['python']}, {report['cpus']} CPUs")
        print(f"{'method':<42}{'seconds':>9}{'programs/s':>12}")
        rows = [
            ("(a) fresh `python -I` per program, serial", t_fresh, rate["a_fresh_interpreter"]),
            ("(b) run_program, one by one", t_serial, rate["b_run_program"]),
            (f"(c) Executor(workers={args.workers}).map", t_map, rate["c_executor_map"]),
        ]
        for label, seconds, per_s in rows:
            print(f"{label:<42}{seconds:>9.2f}{per_s:>12.1f}")
        print(f"ratio (c)/(a): {report['ratio_c_over_a']:.1f}x   ratio (b)/(a): {report['ratio_b_over_a']:.1f}x")
        print(f"outcomes identical across (a), (b), (c): {agree}/{args.n}; valid values: {values}/{args.n}")
    return 0 if agree == args.n and values == args.n else 1


if __name__ == "__main__":
    sys.exit(main())
