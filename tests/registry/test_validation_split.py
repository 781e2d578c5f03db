"""Validation's text rules in a forked child: the same problems in the same order, and a failed child costs
only time (registry.validation_split)."""
from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from registry import loader, validation_split
from registry.validate import validate
from tests.helpers import edit


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child runs here: idle threads another test left behind (a thread pool's workers) hold no lock."""
    monkeypatch.setattr(validation_split.threading, "active_count", lambda: 1)
    if not validation_split.usable():
        pytest.skip("this machine gives the process one core: no child is ever forked")  # pragma: no cover


def _problems(root: Path, parallel: bool) -> list[tuple[str, int, str, str, str]]:
    reg = loader.load(root)
    validate(reg, parallel=parallel)
    return [(p.path, p.line, p.field, p.problem, p.code) for p in reg.problems]


def _break(root: Path, text: bool) -> set[str]:
    """A problem for each rule group run apart: a snapshot and a released version (the lock rule), and a text
    or the catalogue (the text rules; a text that does not render leaves the catalogue unchecked)."""
    f = root / "formulas"
    edit(f / "history" / "anion-gap" / "1.0.0.yaml", "anion", "Anion")
    edit(f / "ideal-body-weight.yaml", "value: 2.3", "value: 2.4")
    if text:
        edit(f / "body-mass-index.yaml", "BMI = weight", "BMI = {{ c.no_such_constant }} weight", count=2)
        return {"R-SNAPSHOT", "R-LOCK-CHANGED", "R-TEXT"}
    edit(f / "texts" / "delta-gap.md", "Delta", "delta")
    return {"R-SNAPSHOT", "R-LOCK-CHANGED", "R-CATALOGUE"}


@pytest.mark.parametrize("text", [True, False], ids=["text", "catalogue"])
def test_parallel_validation_finds_what_sequential_finds_in_its_order(registry_copy: Path, forking: None,
                                                                       text: bool) -> None:
    assert _problems(registry_copy, True) == _problems(registry_copy, False) == []
    expected = _break(registry_copy, text)
    found = _problems(registry_copy, False)
    assert {c for *_, c in found} >= expected, found
    assert _problems(registry_copy, True) == found


def test_the_lock_rule_reports_nothing_the_catalogue_rule_waits_on() -> None:
    """The catalogue rule may run before the lock rule's problems exist only while the lock rule reports no
    code of codes.UNREADABLE (the problems the catalogue rule reads)."""
    import inspect
    import re

    from registry import codes
    from registry import validate as v

    source = "".join(inspect.getsource(f) for f in (v._lock, v._snapshot, v._live))
    reported = {getattr(codes, name) for name in re.findall(r"codes\.([A-Z_]+)", source)}
    assert reported and not reported & codes.UNREADABLE


@pytest.mark.parametrize("how", ["raises", "killed", "exits"])
def test_a_child_that_fails_gives_none_and_here_runs_once(how: str, forking: None) -> None:
    ran: list[int] = []

    def there() -> int:
        if how == "raises":
            raise RuntimeError("broken")
        if how == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(0)  # leaves without writing a result

    assert validation_split.beside(there, lambda: ran.append(os.getpid())) is None
    assert ran == [os.getpid()]


def test_the_child_s_result_comes_back(forking: None) -> None:
    parent = os.getpid()
    got = validation_split.beside(lambda: (os.getpid(), list(range(100_000))), lambda: None)  # more than a pipe holds
    assert got is not None and got[0] != parent and got[1] == list(range(100_000))


def test_no_child_beside_another_thread() -> None:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not validation_split.usable()
        ran: list[int] = []
        assert validation_split.beside(lambda: 1, lambda: ran.append(1)) is None and ran == [1]
    finally:
        stop.set()
        t.join()
