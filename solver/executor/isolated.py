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

from solver.executor.classify import classify
from solver.executor.outcome import Outcome
from solver.executor.policy import DEFAULT_POLICY, HASH_SEED, TIME_ZONE, WALL_SECONDS, get_policy
from solver.executor.pool import clean_env, interpreter_command, request
from solver.executor.wire import encode_request

RUNNER = "from solver.executor.server import fresh_main; fresh_main()"


def run_fresh(source: str, policy: str = DEFAULT_POLICY, python_flags: list[str] | None = None) -> Outcome:
    """Run one program in a new interpreter (slow; the paper's method).

    By default the interpreter starts like a fork server (-S -P, fixed hash
    seed).  `python_flags=["-I"]` starts a plain `python -I` instead, with its
    `site` import and a random hash seed (recorded as unknown): the baseline
    the benchmark compares with."""
    chosen = get_policy(policy).name
    argv = interpreter_command(RUNNER)
    if python_flags is not None:
        argv = [argv[0], *python_flags, *argv[-2:]]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=clean_env(),
        cwd="/",
        start_new_session=True,
    )
    killed = False
    try:
        out, _ = proc.communicate(encode_request(request(source, chosen)), timeout=WALL_SECONDS)
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
    seeded = python_flags is None or not {"-I", "-E"} & set(python_flags)
    return Outcome.from_wire({**wire, "policy": chosen, "hash_seed": HASH_SEED if seeded else None,
                              "time_zone": TIME_ZONE})
