"""Test-wide settings: property tests never time out on a slow machine, and CI runs them reproducibly;
the registry the suite reads is the one committed (a private export, whatever the working tree holds);
every test sees the same "today" (registry.clock), whatever day or hour the suite runs at, and a registry
cache of its own (never the machine's ~/.cache, which outlives the run and other checkouts share)."""
import atexit
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("default", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


CHECKOUT = Path(__file__).resolve().parents[1]


def _shipped_registry() -> Path:
    """The registry as committed (formulas/ and guidelines/ of git's HEAD), exported once per run into a
    folder of its own: the suite tests what ships, never a local draft or edit in the checkout's working
    tree. Outside a git checkout: a copy of the working tree, its drafts, journal and lock left out."""
    dest = Path(tempfile.mkdtemp(prefix="formula-test-registry-"))
    atexit.register(shutil.rmtree, dest, True)
    try:
        blob = subprocess.run(["git", "-C", str(CHECKOUT), "archive", "--format=tar", "HEAD", "formulas", "guidelines"],
                              capture_output=True, check=True, timeout=60).stdout
        with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
            tar.extractall(dest, filter="data")
        if (dest / "formulas").is_dir() and (dest / "guidelines").is_dir():
            return dest
    except (OSError, subprocess.SubprocessError, tarfile.TarError):
        pass
    ignore = shutil.ignore_patterns(".registry.lock", ".journal.json", "drafts", "*.tmp")
    for d in ("formulas", "guidelines"):
        shutil.rmtree(dest / d, ignore_errors=True)
        shutil.copytree(CHECKOUT / d, dest / d, ignore=ignore)
    return dest


SHIPPED = _shipped_registry()
os.environ["FORMULA_REGISTRY_ROOT"] = str(SHIPPED)  # registry.loader.ROOT_ENV: the default root, subprocesses too


def _last_release_day() -> str:
    """The latest effective date of the shipped registry: the suite's today, so that a machine whose clock
    is behind the last release (or a run that crosses midnight) sees the registry as the release left it."""
    days = (m.group(1) for f in (SHIPPED / "formulas").glob("*.yaml")
            for m in re.finditer(r"^\s*effective: '?(\d{4}-\d{2}-\d{2})", f.read_text(encoding="utf-8"), re.M))
    return max(days)


os.environ["FORMULA_TODAY"] = _last_release_day()  # registry.clock.ENV; subprocesses inherit it
_CACHE = tempfile.mkdtemp(prefix="formula-test-cache-")
os.environ["FORMULA_CACHE_DIR"] = _CACHE  # registry.loader.CACHE_ENV; tests of the cache set their own
atexit.register(shutil.rmtree, _CACHE, True)


@pytest.fixture(autouse=True)
def _clock_reached_the_fixed_day(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite fixes the day ($FORMULA_TODAY) at the registry's dates, and walkthroughs move it on a few days;
    the machine's clock, past which nothing is signed (registry.clock.real_today), is taken to have reached that
    day in this process (tests/registry/test_signing_clock.py restores the real one). Subprocesses see the real
    clock: they sign on the last release day, which a machine's clock has passed."""
    from registry import clock

    genuine = clock.real_today
    monkeypatch.setattr(clock, "real_today", lambda: max(genuine(), clock.today()))


@pytest.fixture()
def registry_copy(tmp_path):
    """A private copy of the registry (formulas/ and guidelines/) that a test may edit."""
    from tests.helpers import copy_registry

    return copy_registry(tmp_path)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On a pytest-xdist worker: hand the figures its tests recorded to the controller (tests/summary.py)."""
    from tests import summary

    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output[summary.KEY] = summary.export()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """On the pytest-xdist controller: merge the figures of a worker that has finished."""
    from tests import summary

    text = getattr(node, "workeroutput", {}).get(summary.KEY)
    if text:
        summary.merge(text)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from tests import summary

    for title, line in summary.lines():
        terminalreporter.write_sep("-", title)
        if line is not None:
            terminalreporter.write_line(line)


@pytest.fixture(autouse=True)
def _no_inherited_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no $COLUMNS and no --wide left over from another: a width a test wants it sets
    itself, so tests pass in any order (the suite's shell may itself export COLUMNS)."""
    from registry import tables

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(tables, "WIDE", False)
    monkeypatch.setattr(tables, "WIDE_OPTION", False)
