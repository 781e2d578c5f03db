"""Executor.map keeps requests queued at each server: a server that dies loses only the program it ran.
With several workers, the first server forks the others (spare servers)."""
from __future__ import annotations

import os
import resource
import signal
import threading
import time

import pytest

from solver.executor import Executor, pool
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


# --- spare servers: Executor(workers=n) starts one interpreter, which forks the others once warm ------

spares = pytest.mark.skipif(not pool._spares_supported(), reason="spare servers need pidfds (Linux)")


@spares
def test_the_other_servers_are_forked_by_the_first() -> None:
    before = descendant_pids()
    with Executor(workers=3) as executor:
        first, *others = executor.server_pids()
        assert len(set(others)) == 2 and first not in others
        assert set(others) <= descendant_pids(first)
        outcomes = executor.map([f"def solve():\n    return {i}\n" for i in range(12)])
        assert [o.value for o in outcomes] == list(range(12))
        assert all(o.hash_seed == 0 and o.time_zone == "UTC" and o.policy == "clinical" for o in outcomes)
    assert descendant_pids() - before == set()


@spares
def test_a_killed_spare_server_is_replaced() -> None:
    before = descendant_pids()
    with Executor(workers=2) as executor:
        first, spare = executor.server_pids()
        os.kill(spare, signal.SIGKILL)
        for _ in range(200):  # until its pidfd says it has ended
            if spare not in executor.server_pids():
                break
            time.sleep(0.01)
        assert executor.server_pids() == [first]
        outcomes = executor.map([f"def solve():\n    return {i}\n" for i in range(6)])
        assert [o.value for o in outcomes] == list(range(6))
        assert len(executor.server_pids()) == 2 and spare not in executor.server_pids()
    assert descendant_pids() - before == set()  # the server that forked it reaped it


@spares
def test_the_cpu_time_of_spare_servers_and_their_children_reaches_the_caller() -> None:
    # The first server reaps its spares before it exits, so what they and their
    # children used is in this process's RUSAGE_CHILDREN once the executor is shut down.
    program = "def solve():\n    n = 0\n    for i in range(40000):\n        n += i\n    return n\n"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with Executor(workers=2) as executor:
        outcomes = executor.map([program] * 8)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert all(o.kind == "value" for o in outcomes)
    reaped = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert reaped >= sum(o.cpu_s for o in outcomes)


def test_a_program_given_as_a_str_subclass_runs_as_its_text() -> None:
    class Text(str):
        def __str__(self) -> str:
            return "not this"

    with Executor(workers=1) as executor:
        assert executor.run(Text("def solve():\n    return 7\n")).value == 7


@spares
def test_a_spare_that_does_not_come_up_is_replaced_by_an_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pidfd(self: pool.SpareServer, pid: object) -> None:
        self._pid = pid if isinstance(pid, int) else 0  # as where the kernel refuses pidfds: never watched

    monkeypatch.setattr(pool.SpareServer, "adopt", no_pidfd)
    before = descendant_pids()
    with Executor(workers=2) as executor:
        first, second = executor.server_pids()
        assert second not in descendant_pids(first)  # started by subprocess, not forked by the first
        assert [o.value for o in executor.map([f"def solve():\n    return {i}\n" for i in range(4)])] == [0, 1, 2, 3]
    assert descendant_pids() - before == set()
