"""Fixtures shared by the registry tests."""
from __future__ import annotations

import pytest

from registry import loader


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """An empty FORMULA_CACHE_DIR of the test's own, with the in-process registry cache cleared around it."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(loader.CACHE_ENV, str(folder))
    loader.clear_cache()
    yield folder
    loader.clear_cache()
