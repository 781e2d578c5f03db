"""Test-wide settings: property tests never time out on a slow machine, and CI runs them reproducibly;
every test sees the same "today" (registry.clock), whatever day or hour the suite runs at, and a registry
cache of its own (never the machine's ~/.cache, which outlives the run and other checkouts share)."""
import atexit
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("default", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


def _last_release_day() -> str:
    """The latest effective date of the shipped registry: the suite's today, so that a machine whose clock
    is behind the last release (or a run that crosses midnight) sees the registry as the release left it."""
    days = (m.group(1) for f in (Path(__file__).resolve().parents[1] / "formulas").glob("*.yaml")
            for m in re.finditer(r"^\s*effective: '?(\d{4}-\d{2}-\d{2})", f.read_text(encoding="utf-8"), re.M))
    return max(days)


os.environ["FORMULA_TODAY"] = _last_release_day()  # registry.clock.ENV; subprocesses inherit it
_CACHE = tempfile.mkdtemp(prefix="formula-test-cache-")
os.environ["FORMULA_CACHE_DIR"] = _CACHE  # registry.loader.CACHE_ENV; tests of the cache set their own
atexit.register(shutil.rmtree, _CACHE, True)


@pytest.fixture()
def registry_copy(tmp_path):
    """A private copy of the registry (formulas/ and guidelines/) that a test may edit."""
    from tests.helpers import copy_registry

    return copy_registry(tmp_path)
