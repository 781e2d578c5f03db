"""Throughput of the restricted executor, on the same benign programs, against a fresh interpreter.

    python3 bench/executor.py [--n 500] [--workers N] [--format table|json]
    python3 bench/executor.py --startup-only      # only the start-up workload below (about 10 s)

Steady state, on --n programs:
(a) fresh:  a new `python -I` interpreter per program, one after another (the
            paper's method; same checker, limits and sandbox, see
            solver/executor/isolated.py)
(b) serial: `run_program` one by one (a warm fork server forks a child each)
(c) map:    `Executor(workers).map` over all programs (N fork servers)

Start-up workload, on --startup-n (120) programs, both measured in this run:
(d) `Executor(workers)` created, started and mapped over the programs: the
    executor's start-up is inside the timing (shutdown is not)
(e) a fresh `python -I` interpreter per program, serial, as (a)
The printed ratio is (d)'s programs/s over (e)'s.

Every program still runs in its own fresh process under every limit in all
of them.  The script also checks that they agree on every outcome.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
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


def _key(o: Outcome) -> tuple[str, object]:
    return (o.kind, o.value)


def _cpu() -> float:
    """CPU seconds of this process and of every reaped descendant: less
    sensitive than wall time to other work on a shared machine."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def startup_workload(n: int, workers: int) -> dict[str, object]:
    """(d) and (e): n programs with the executor's start-up inside the timing,
    against a fresh `python -I` per program; both in this run."""
    programs = corpus(n, seed=1)
    cpu0 = _cpu()
    start = time.perf_counter()
    executor = Executor(workers=workers)
    try:
        executor.start()
        mapped = executor.map(programs)
        t_exec = time.perf_counter() - start
    finally:
        executor.shutdown()  # reaps the servers, so their CPU time (and their children's) is counted
    cpu1 = _cpu()
    fresh, t_fresh = _timed(lambda: [run_fresh(p, python_flags=["-I"]) for p in programs])
    cpu2 = _cpu()
    agree = sum(_key(a) == _key(b) for a, b in zip(mapped, fresh))
    rate_exec, rate_fresh = n / t_exec, n / t_fresh
    return {
        "cpu_ms_per_program": {"d_executor_with_startup": (cpu1 - cpu0) / n * 1e3, "e_fresh_python_I": (cpu2 - cpu1) / n * 1e3},
        "programs": n,
        "workers": workers,
        "seconds": {"d_executor_with_startup": t_exec, "e_fresh_python_I": t_fresh},
        "programs_per_s": {"d_executor_with_startup": rate_exec, "e_fresh_python_I": rate_fresh},
        "ratio_d_over_e": rate_exec / rate_fresh,
        "outcomes_agree": agree,
        "valid_values": sum(o.kind == "value" for o in mapped),
    }


def _print_startup(report: dict[str, object]) -> None:
    n, w = report["programs"], report["workers"]
    seconds, rate = report["seconds"], report["programs_per_s"]
    assert isinstance(seconds, dict) and isinstance(rate, dict)
    print(f"start-up workload: {n} programs, executor start-up included")
    print(f"{'(d) Executor(workers=' + str(w) + '): start + map':<42}{seconds['d_executor_with_startup']:>9.2f}"
          f"{rate['d_executor_with_startup']:>12.1f}")
    print(f"{'(e) fresh `python -I` per program, serial':<42}{seconds['e_fresh_python_I']:>9.2f}"
          f"{rate['e_fresh_python_I']:>12.1f}")
    cpu = report["cpu_ms_per_program"]
    assert isinstance(cpu, dict)
    print(f"ratio (d)/(e): {report['ratio_d_over_e']:.1f}x   outcomes identical: "
          f"{report['outcomes_agree']}/{n}; valid values: {report['valid_values']}/{n}")
    print(f"CPU per program (all processes): (d) {cpu['d_executor_with_startup']:.2f} ms, "
          f"(e) {cpu['e_fresh_python_I']:.2f} ms, ratio {cpu['e_fresh_python_I'] / cpu['d_executor_with_startup']:.1f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="number of programs (default 500)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="fork servers for (c) and (d)")
    parser.add_argument("--startup-n", type=int, default=120, help="programs in the start-up workload (default 120)")
    parser.add_argument("--startup-only", action="store_true", help="run only the start-up workload (d)/(e)")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="table for people, json for scripts")
    args = parser.parse_args(argv)

    startup = startup_workload(args.startup_n, args.workers)
    startup_ok = startup["outcomes_agree"] == startup["valid_values"] == args.startup_n
    if args.startup_only:
        if args.format == "json":
            print(json.dumps({"python": sys.version.split()[0], "cpus": os.cpu_count(), "startup": startup}, indent=2))
        else:
            print(f"executor benchmark, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
            _print_startup(startup)
        return 0 if startup_ok else 1

    programs = corpus(args.n)
    fresh, t_fresh = _timed(lambda: [run_fresh(p, python_flags=["-I"]) for p in programs])
    run_program(programs[0])  # start the default fork server outside the timing
    serial, t_serial = _timed(lambda: [run_program(p) for p in programs])
    shutdown()
    with Executor(workers=args.workers) as executor:
        mapped, t_map = _timed(lambda: executor.map(programs))

    agree = sum(_key(a) == _key(b) == _key(c) for a, b, c in zip(fresh, serial, mapped))
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
        "startup": startup,
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
        _print_startup(startup)
    return 0 if agree == args.n and values == args.n and startup_ok else 1


if __name__ == "__main__":
    sys.exit(main())
