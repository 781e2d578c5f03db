"""Where the registry's caches live: $FORMULA_CACHE_DIR, else $XDG_CACHE_HOME/formula-registry or
~/.cache/formula-registry; an empty $FORMULA_CACHE_DIR turns caching off. (A module of its own so that the
signature checks, which validation runs, read it without importing the loader.)"""
from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "FORMULA_CACHE_DIR"


def cache_folder() -> Path | None:
    """The cache folder, or None when caching is off."""
    if os.environ.get(CACHE_ENV) == "":
        return None
    base = os.environ.get(CACHE_ENV) or os.environ.get("XDG_CACHE_HOME")
    folder = Path(base) if base else Path.home() / ".cache"
    return folder if os.environ.get(CACHE_ENV) else folder / "formula-registry"
