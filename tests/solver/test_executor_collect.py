"""The fork server's collection of a child without a pidfd (kernels or seccomp filters that refuse one): the pipe is
read to EOF, then waitpid is polled; at the deadline the child is killed. (On Linux the pidfd path runs everywhere else
in these tests.)"""
from __future__ import annotations

import os
import time

import pytest

from solver.executor import server


def _child(write: bytes, then_sleep: float, code: int) -> tuple[int, int]:
    """Fork a child (its own process group, as the server's children are) that writes `write` and exits with `code`
    after `then_sleep` seconds; (pid, the pipe's read end)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.setpgid(0, 0)
            os.close(r)
            os.write(w, write)
            os.close(w)
            time.sleep(then_sleep)
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


@pytest.fixture
def no_pidfd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "_pidfd", lambda pid: None)


@pytest.mark.usefixtures("no_pidfd")
def test_without_a_pidfd_the_result_is_read_to_eof_and_the_child_reaped() -> None:
    pid, r = _child(b"the result", 0.0, 3)
    try:
        data, killed, status, _ = server._collect(pid, r, time.monotonic() + 10)
    finally:
        os.close(r)
    assert (data, killed, os.WIFEXITED(status), os.WEXITSTATUS(status)) == (b"the result", False, True, 3)


@pytest.mark.usefixtures("no_pidfd")
def test_without_a_pidfd_a_child_past_its_deadline_is_killed() -> None:
    pid, r = _child(b"partial", 30.0, 0)
    try:
        data, killed, status, _ = server._collect(pid, r, time.monotonic() + 0.3)
    finally:
        os.close(r)
    assert killed and data == b"partial"
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9
