"""What a change costs: bench/compute.py and bench/columnar.py on two git revisions, interleaved.

    python bench/compare.py REV_A REV_B [--rounds 3] [--frames benchmark|uniform] [--rows 200000]
                            [--only SLUG] [--repeat 1] [--no-compute] [--instructions] [--format json]

Each revision is checked out into a git worktree of its own in a temporary folder (removed afterwards) and
this checkout's bench scripts (or with --harness own, the revision's) run there with this Python, in the
same process settings (PYTHONHASHSEED=0, the revision's own
registry, a cache folder of its own), alternately A B, B A, ... for --rounds rounds, so that a busy moment of
the machine falls on both alike. For every figure (`compute` cases per second, one call of BMI and CKD-EPI,
each calculator's compute_many time) it prints the time of B over the time of A: the median over the rounds
and its spread (lowest to highest); under 1.00 B is faster. Use it for any change on the hot path (solver/
library, its units and rounding), and quote its lines in the commit message.

Timings of one revision differ by a few per cent from process to process (memory layout, the machine's other
work), so a change of 1 % hides in their spread. `--instructions` adds a count that does not: the machine
instructions `compute` takes per reference case on each revision (valgrind's callgrind, three passes over the
revision's own solver/embedded/reference_cases.jsonl less one warm-up pass; about a minute a revision).

bench/compute.py needs `medcalc-bench` installed (it is the baseline there); without it those figures are
left out and said so. With --harness own, `--frames benchmark` needs both revisions to have bench/benchmark_frames.py.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


class CompareError(Exception):
    """A revision that git does not know, or a bench that failed: named, with what it printed."""


def _git(*args: str, cwd: Path = ROOT) -> str:
    got = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if got.returncode:
        raise CompareError(f"git {' '.join(args)}: {got.stderr.strip() or got.stdout.strip()}")
    return got.stdout.strip()


def _env(tree: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"PYTHONHASHSEED": "0", "FORMULA_REGISTRY_ROOT": str(tree), "FORMULA_CACHE_DIR": str(cache)})
    return env


def _run(tree: Path, cache: Path, script: str, argv: list[str]) -> dict[str, Any]:
    got = subprocess.run([sys.executable, f"bench/{script}", *argv, "--format", "json"], cwd=tree,
                         env=_env(tree, cache), capture_output=True, text=True)
    if got.returncode:
        tail = "\n".join((got.stderr or got.stdout).strip().splitlines()[-6:])
        raise CompareError(f"{tree.name}: bench/{script} {' '.join(argv)} failed (exit {got.returncode}):\n{tail}")
    return json.loads(got.stdout)


def figures(tree: Path, cache: Path, args: argparse.Namespace, with_compute: bool) -> dict[str, float]:
    """figure name -> seconds (lower is faster) from one run of each bench in this worktree."""
    out: dict[str, float] = {}
    if with_compute:
        got = _run(tree, cache, "compute.py", ["--repeat", str(args.repeat)])
        out["compute: reference cases"] = 1 / got["compute_cases_per_s"]
        for slug in ("body-mass-index", "ckd-epi-2021"):
            if slug in got:
                out[f"compute: one call {slug}"] = 1 / got[slug]["compute_calls_per_s"]
    argv = ["--rows", str(args.rows), "--repeat", str(args.repeat)]
    if args.frames == "benchmark":
        argv += ["--frames", "benchmark", "--sample-rows", str(args.sample_rows)]
    else:
        argv += ["--loop-rows", "500"]
    for slug in args.only or []:
        argv += ["--only", slug]
    for r in _run(tree, cache, "columnar.py", argv)["results"]:
        if r.get("columnar") is not False:
            out[f"compute_many: {r['calculator']}"] = r["compute_many_s"]
            if "sample_ms" in r:
                out[f"compute_many {args.sample_rows:,} rows: {r['calculator']}"] = r["sample_ms"] / 1e3
    return out


# `compute` over the revision's reference cases: a warm-up pass, then argv[1] more (the instructions of the passes
# are the difference of two counts, so imports and the warm-up fall out)
_COUNTED = ("import json, sys\n"
            "from solver.library import CalculatorError, compute\n"
            "cases = [(c['calculator_id'], c['entities']) for c in\n"
            "         map(json.loads, open('solver/embedded/reference_cases.jsonl', encoding='utf-8'))]\n"
            "for _ in range(1 + int(sys.argv[1])):\n"
            "    for cid, e in cases:\n"
            "        try:\n"
            "            compute(cid, e, variant='benchmark')\n"
            "        except CalculatorError:\n"
            "            pass\n"
            "print(len(cases))\n")


def instructions(tree: Path, cache: Path, passes: int = 3) -> float:
    """Machine instructions `compute` takes per reference case in this worktree (valgrind's callgrind)."""
    # the registry's snapshot is written first, outside valgrind: validated under valgrind (50 times slower), the
    # registry's texts overrun their 2 s render budget, the registry has problems, and `compute` then checks it on
    # every call (2.98 million instructions a case instead of 90,000)
    warm = subprocess.run([sys.executable, "-c", _COUNTED, "0"], cwd=tree, env=_env(tree, cache), capture_output=True,
                          text=True)
    if warm.returncode:
        raise CompareError(f"{tree.name}: the counted passes failed (exit {warm.returncode}): {warm.stderr[-400:]}")
    counts = []
    for n in (0, passes):
        got = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c",
                              _COUNTED, str(n)], cwd=tree, env=_env(tree, cache), capture_output=True, text=True)
        total = [line for line in got.stderr.splitlines() if "Collected :" in line]
        if got.returncode or not total:
            raise CompareError(f"{tree.name}: valgrind failed (exit {got.returncode}): {got.stderr.strip()[-400:]}")
        counts.append((int(total[-1].split(":")[-1]), int(got.stdout.split()[-1])))
    (base, cases), (more, _) = counts
    return (more - base) / (passes * cases)


def _has_medcalc() -> bool:
    try:
        import medcalc  # noqa: F401
    except ImportError:
        return False
    return True


def compare(args: argparse.Namespace) -> dict[str, Any]:
    revs = {label: _git("rev-parse", "--verify", f"{rev}^{{commit}}") for label, rev in (("A", args.rev_a),
                                                                                          ("B", args.rev_b))}
    with_compute = args.compute and _has_medcalc()
    with tempfile.TemporaryDirectory(prefix="formula-compare-") as tmp:
        trees = {label: Path(tmp) / label for label in revs}
        try:
            for label, commit in revs.items():
                _git("worktree", "add", "--detach", str(trees[label]), commit)
                if args.harness == "this":  # one harness for both: only the library differs
                    for script in HERE.glob("*.py"):
                        shutil.copy2(script, trees[label] / "bench" / script.name)
            counted = {label: instructions(trees[label], Path(tmp) / f"cache-{label}") for label in trees} \
                if args.instructions else {}
            runs: dict[str, list[dict[str, float]]] = {"A": [], "B": []}
            for k in range(args.rounds):
                for label in ("A", "B") if k % 2 == 0 else ("B", "A"):
                    cache = Path(tmp) / f"cache-{label}"
                    runs[label].append(figures(trees[label], cache, args, with_compute))
        finally:
            for tree in trees.values():
                if tree.exists():
                    subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT,
                                   capture_output=True)
    rows = []
    for name in runs["A"][0]:
        if not all(name in r for r in runs["A"] + runs["B"]):
            continue
        ratios = [b[name] / a[name] for a, b in zip(runs["A"], runs["B"]) if a[name] > 0]
        if ratios:
            rows.append({"figure": name, "median": round(statistics.median(ratios), 3),
                         "low": round(min(ratios), 3), "high": round(max(ratios), 3),
                         "a_s": round(statistics.median(r[name] for r in runs["A"]), 6),
                         "b_s": round(statistics.median(r[name] for r in runs["B"]), 6)})
    out = {"a": revs["A"], "b": revs["B"], "rounds": args.rounds, "frames": args.frames,
           "compute_bench": with_compute, "figures": rows}
    if counted:
        out["instructions_per_case"] = {"a": round(counted["A"]), "b": round(counted["B"]),
                                        "ratio": round(counted["B"] / counted["A"], 5)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev_a", metavar="REV_A", help="the revision to compare against (e.g. main)")
    ap.add_argument("rev_b", metavar="REV_B", help="the revision with the change (e.g. HEAD)")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each revision, interleaved (default 3)")
    ap.add_argument("--frames", choices=["benchmark", "uniform"], default="benchmark",
                    help="the columnar bench's frames (default benchmark: bench/benchmark_frames.py)")
    ap.add_argument("--rows", type=int, default=200_000, help="rows per calculator for compute_many (default 200,000)")
    ap.add_argument("--sample-rows", type=int, default=2_000, help="the small frame's rows (default 2,000)")
    ap.add_argument("--repeat", type=int, default=1, help="timings per figure inside each bench (default 1)")
    ap.add_argument("--only", action="append", help="calculator slug for the columnar bench (repeatable)")
    ap.add_argument("--harness", choices=["this", "own"], default="this",
                    help="this: the bench scripts of this checkout run against both revisions' code (default; "
                         "an older revision then gets today's benches); own: each revision's own scripts")
    ap.add_argument("--no-compute", dest="compute", action="store_false", help="leave bench/compute.py out")
    ap.add_argument("--instructions", action="store_true",
                    help="also count compute's machine instructions per reference case on each revision (valgrind)")
    ap.add_argument("--format", choices=["table", "json"], default="table", help="table for people, json for scripts")
    args = ap.parse_args()
    if args.rounds < 1 or args.rows < 1:
        ap.error("--rounds and --rows must be at least 1")
    if args.instructions and shutil.which("valgrind") is None:
        ap.error("--instructions needs valgrind (Debian: apt-get install valgrind)")
    try:
        result = compare(args)
    except CompareError as e:
        print(f"bench/compare.py: {e}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(result, indent=2))
        return 0
    print(f"B {result['b'][:12]} against A {result['a'][:12]}: time B / time A over {args.rounds} interleaved "
          f"rounds ({args.frames} frames, {args.rows:,} rows)")
    if not result["compute_bench"]:
        print("(bench/compute.py left out: " + ("--no-compute)" if not args.compute else
                                                 "medcalc-bench is not installed, its baseline)"))
    print(f"{'figure':52} {'median':>7} {'spread':>15}")
    for r in result["figures"]:
        spread = f"{r['low']:.2f}-{r['high']:.2f}x"
        print(f"{r['figure'][:52]:52} {r['median']:>6.2f}x {spread:>15}")
    if "instructions_per_case" in result:
        n = result["instructions_per_case"]
        print(f"compute: machine instructions a reference case (valgrind): A {n['a']:,}, B {n['b']:,}, "
              f"B / A {n['ratio']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
