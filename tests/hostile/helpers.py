"""Shared helpers for the hostile-registry tests: a private copy of the registry that a test edits
as an attacker who controls one registry file would, and the command line run as a real process."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from registry.loader import PROJECT_ROOT, clear_cache, load
from registry.validate import validate
from registry.yamlio import rt_dump, rt_load
from tests.helpers import SHIPPED_ROOT


def hostile_copy(tmp_path: Path) -> Path:
    """A registry root of its own under tmp_path (formulas/ and guidelines/ of the checkout)."""
    root = tmp_path / "registry"
    for d in ("formulas", "guidelines"):
        shutil.copytree(SHIPPED_ROOT / d, root / d, ignore=shutil.ignore_patterns(".registry.lock", ".journal.json",
                                                                                   "drafts"))
    return root


def edit_yaml(path: Path, change: Callable[[Any], None]) -> None:
    """Edit a registry file as a person would (round-trip: comments and order kept)."""
    data = rt_load(path)
    change(data)
    path.write_text(rt_dump(data), encoding="utf-8")


def problems(root: Path) -> list[tuple[str, str, str]]:
    """(file, rule code, message) of every problem `formula validate` reports for `root`."""
    clear_cache()
    reg = load(root)
    validate(reg)
    return [(p.path, p.code, str(p)) for p in reg.problems]


def formula(root: Path | None, *argv: str, timeout: float = 120, cwd: Path | None = None,
            env: dict[str, str] | None = None, memory_mb: int | None = None) -> subprocess.CompletedProcess[str]:
    """`formula ARGV... [--root ROOT]` as a separate process (the attack surface is the command itself).

    `memory_mb` caps the child's address space, so a payload that would exhaust the machine fails the
    test instead (raises `subprocess.TimeoutExpired` past `timeout`).
    """
    args = [sys.executable, "-m", "cli", *argv] + (["--root", str(root)] if root is not None else [])
    full_env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), **(env or {})}

    def limit() -> None:
        if memory_mb is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))

    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=str(cwd or PROJECT_ROOT),
                          env=full_env, preexec_fn=limit if memory_mb else None)
