"""The paper's way, kept for comparison: a fresh `python -I` interpreter per program.

`run_fresh(source)` starts one interpreter that runs RUNNER (server.fresh_main):
the same extraction, checker, limits and sandbox as the fork server's
children, only with the interpreter start-up paid for every program.  bench/executor.py uses
it as the baseline; it is also a fallback that needs no long-lived process.
"""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import time

from solver.executor.outcome import Outcome
from solver.executor.policy import DEFAULT_POLICY, HASH_SEED, WALL_SECONDS, get_policy
from solver.executor.pool import clean_env, interpreter_command
from solver.executor.server import classify

RUNNER = "from solver.executor.server import fresh_main; fresh_main()"


def run_fresh(source: str, policy: str = DEFAULT_POLICY) -> Outcome:
    """Run one program in a new isolated interpreter (slow; the paper's method)."""
    chosen = get_policy(policy).name
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.Popen(
        interpreter_command(RUNNER) + [chosen],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=clean_env(),
        cwd="/",
        start_new_session=True,
    )
    killed = False
    try:
        out, _ = proc.communicate(source.encode("utf-8", errors="replace"), timeout=WALL_SECONDS)
    except subprocess.TimeoutExpired:
        killed = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        out, _ = proc.communicate()
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rc = proc.returncode
    sig = -rc if rc is not None and rc < 0 else None
    code = rc if rc is not None and rc >= 0 else None
    wire = classify(out[:65536], sig, code, cpu, wall, killed)
    return Outcome.from_wire({**wire, "policy": chosen, "hash_seed": HASH_SEED})
