"""Executor.map keeps requests queued at each server: a server that dies loses only the program it ran."""
from __future__ import annotations

import os
import signal
import threading

from solver.executor import Executor
from solver.executor.procs import descendant_pids


def test_map_survives_a_server_killed_mid_batch() -> None:
    programs = [f"import time\ndef solve():\n    time.sleep(0.3)\n    return {i}\n" for i in range(6)]
    before = descendant_pids()
    with Executor(workers=1) as executor:
        (server,) = executor.server_pids()
        killer = threading.Timer(0.45, os.kill, (server, signal.SIGKILL))
        killer.start()
        outcomes = executor.map(programs)
        killer.join()
        assert executor.server_pids() and executor.server_pids() != [server]  # replaced
    kinds = [o.kind for o in outcomes]
    assert kinds.count("crashed") == 1, outcomes
    assert all(o.value == i for i, o in enumerate(outcomes) if o.kind == "value")
    assert descendant_pids() - before == set()


def test_map_with_more_workers_than_programs_and_mixed_inputs() -> None:
    with Executor(workers=3) as executor:
        outcomes = executor.map(["def solve():\n    return 1\n", 5, "", "x" * 1_000_001])  # type: ignore[list-item]
    assert [o.kind for o in outcomes] == ["value", "no_program", "no_program", "rejected"]
