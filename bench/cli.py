"""Start-up of the command line: read-only commands cold and warm, against a bare `python -c pass`.

    python3 bench/cli.py [--repeat 5] [--signed N] [--format table|json]

cold: an empty validation cache (a fresh FORMULA_CACHE_DIR), so the command loads every YAML file and runs every
      validation rule, as the first command after any edit of the registry does;
warm: the same command again, the cache filled by the run before (the registry's bytes unchanged).
Each figure is the best wall time of --repeat runs in fresh processes (cold ones each get a new empty cache), as
`timeit` reports: the run least disturbed by other work on a shared machine; the median is in --format json. The
baseline `python -c pass` runs in the same way in the same run. The targets are issue 29's: a warm read-only
command under 0.3 s, a cold `validate` under 1 s, a warm one-case `solve` under 0.4 s.

--signed N also times the warm reads (list, show, history, pending) on a copy of the registry holding N signed
decisions (signed reviews by a test committee's ssh-keygen keys, made once before timing; verification results
cached as for the shipped registry), beside the same commands on the shipped registry in the same run (issue 39).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bytecode import write_bytecode  # (bench/bytecode.py, beside this script)

ROOT = Path(__file__).resolve().parents[1]
SOLVE = ["solve", "--calculator", "body-mass-index", "--entities", '{"weight": [70, "kg"], "height": [175, "cm"]}']
# (name, argv, which figure has a target, target in seconds)
COMMANDS: list[tuple[str, list[str], str, float]] = [
    ("list", ["list"], "warm", 0.3),
    ("show", ["show", "meld-na"], "warm", 0.3),
    ("history", ["history", "meld-na"], "warm", 0.3),
    ("pending", ["pending"], "warm", 0.3),
    ("diff", ["diff", "meld-na", "1.0.1", "1.1.0"], "warm", 0.3),
    ("due", ["due"], "warm", 0.3),
    ("validate", ["validate"], "cold", 1.0),
    ("solve", SOLVE, "warm", 0.4),
]


def _time(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return elapsed


def _cpu(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run; CPU (user + system of the child) is what other work on a shared machine
    leaves least changed, so the signed and shipped registries are also compared by it."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = _time(argv, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def measure(repeat: int) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "COLUMNS": "100"}
    env.pop("FORMULA_REGISTRY_ROOT", None)
    write_bytecode()
    base = min(_time([sys.executable, "-c", "pass"], env) for _ in range(repeat))
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        for name, argv, which, target in COMMANDS:
            cmd = [sys.executable, "-m", "cli", *argv]
            cold = []
            for k in range(repeat):
                cold.append(_time(cmd, {**env, "FORMULA_CACHE_DIR": str(Path(tmp) / f"{name}-{k}")}))
            warm_env = {**env, "FORMULA_CACHE_DIR": str(Path(tmp) / f"{name}-warm")}
            _time(cmd, warm_env)  # fills the cache
            warm = [_time(cmd, warm_env) for _ in range(repeat)]
            c, w = min(cold), min(warm)
            got = w if which == "warm" else c
            rows.append({"command": "formula " + " ".join(a if " " not in a else "'…'" for a in argv),
                         "cold_s": c, "warm_s": w, "cold_x": c / base, "warm_x": w / base,
                         "cold_median_s": statistics.median(cold), "warm_median_s": statistics.median(warm),
                         "target": f"{which} < {target} s", "met": got < target})
    return {"python_c_pass_s": base, "repeat": repeat, "rows": rows}


READS = [name for name, _, which, _ in COMMANDS if name in ("list", "show", "history", "pending")]


def signed_registry(dest: Path, n: int, env: dict[str, str]) -> Path:
    """A copy of the registry with `n` signed decisions: reviews of the active versions, up to 10 a calculator."""
    import shutil

    for d in ("formulas", "guidelines"):
        shutil.copytree(ROOT / d, dest / d, ignore=shutil.ignore_patterns(".registry.lock", ".journal.json", "drafts"))
    key = dest / "keys" / "reviewer"
    key.parent.mkdir()
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "reviewer", "-f", str(key)], check=True,
                   capture_output=True, timeout=60)
    pub = Path(f"{key}.pub").read_text(encoding="utf-8").split()
    policy = dest / "formulas" / "policy"
    with open(policy / "allowed_signers", "a", encoding="utf-8") as f:
        f.write(f'reviewer namespaces="formula-registry" {pub[0]} {pub[1]}\n')
    text = (policy / "governance.yaml").read_text(encoding="utf-8").replace(
        "people: {}", "people:\n  reviewer: {name: R. Reviewer, roles: [chair]}")
    (policy / "governance.yaml").write_text(text, encoding="utf-8")
    slugs = sorted(p.stem for p in (dest / "formulas").glob("*.yaml") if p.stem != "units")
    order = ["meld-na"] + [s for s in slugs if s != "meld-na"]  # the calculator `show` and `history` read first
    code = ("import sys\nfrom cli.main import main\nfrom registry.loader import clear_cache\n"
            "for slug in sys.argv[3:]:\n    clear_cache()\n"
            "    assert main(['review', slug, '--key', sys.argv[2], '--root', sys.argv[1]]) == 0, slug\n")
    todo = [order[i // 10] for i in range(n)] if n <= 10 * len(order) else []
    if len(todo) != n:
        raise SystemExit(f"--signed {n}: at most {10 * len(order)} (10 reviews a calculator)")
    subprocess.run([sys.executable, "-c", code, str(dest), str(key), *todo], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return dest


def measure_signed(n: int, repeat: int) -> list[dict[str, object]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "COLUMNS": "100"}
    env.pop("FORMULA_REGISTRY_ROOT", None)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-cli-signed-") as tmp:
        cache = {**env, "FORMULA_CACHE_DIR": str(Path(tmp) / "cache")}
        root = signed_registry(Path(tmp) / "registry", n, cache)
        for name, argv, _, target in COMMANDS:
            if name not in READS:
                continue
            times, cpu = {}, {}
            for label, extra in (("shipped", []), ("signed", ["--root", str(root)])):
                cmd = [sys.executable, "-m", "cli", *argv, *extra]
                _time(cmd, cache)  # fills the cache
                runs = [_cpu(cmd, cache) for _ in range(repeat)]
                times[label], cpu[label] = min(w for w, _ in runs), min(c for _, c in runs)
            rows.append({"command": "formula " + " ".join(argv), "shipped_warm_s": times["shipped"],
                         "signed_warm_s": times["signed"], "ratio": times["signed"] / times["shipped"],
                         "shipped_cpu_s": cpu["shipped"], "signed_cpu_s": cpu["signed"],
                         "cpu_ratio": cpu["signed"] / cpu["shipped"],
                         "target": f"warm < {target} s", "met": times["signed"] < target})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs per figure, the best printed (default 5)")
    ap.add_argument("--signed", type=int, default=0, metavar="N",
                    help="also time the warm reads on a registry holding N signed decisions (issue 39)")
    ap.add_argument("--format", choices=["table", "json"], default="table", help="table for people, json for scripts")
    args = ap.parse_args()
    res = measure(max(1, args.repeat))
    if args.signed > 0:
        res["signed"] = {"decisions": args.signed, "rows": measure_signed(args.signed, max(1, args.repeat))}
    if args.format == "json":
        print(json.dumps(res, indent=2))
        return 0
    print(f"python -c pass: {res['python_c_pass_s']:.3f} s (best of {res['repeat']}); ratios are to it")
    print(f"{'command':<52} {'cold s':>7} {'x':>5} {'warm s':>7} {'x':>5}  target")
    for r in res["rows"]:  # type: ignore[union-attr]
        print(f"{r['command']:<52} {r['cold_s']:7.3f} {r['cold_x']:5.0f} {r['warm_s']:7.3f} {r['warm_x']:5.0f}  "
              f"{r['target']} {'met' if r['met'] else 'MISSED'}")
    if args.signed > 0:
        print(f"\nwarm, on a registry holding {args.signed} signed decisions, beside the shipped registry:")
        print(f"{'command':<24} {'shipped s':>9} {'signed s':>9} {'x':>5} {'CPU shipped':>11} {'CPU signed':>10} "
              f"{'x':>5}  target")
        for r in res["signed"]["rows"]:  # type: ignore[index]
            print(f"{r['command']:<24} {r['shipped_warm_s']:9.3f} {r['signed_warm_s']:9.3f} {r['ratio']:5.2f} "
                  f"{r['shipped_cpu_s']:11.3f} {r['signed_cpu_s']:10.3f} {r['cpu_ratio']:5.2f}  "
                  f"{r['target']} {'met' if r['met'] else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
