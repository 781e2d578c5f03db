"""Helpers shared by tests in every folder: a private copy of the registry, and running the command line."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli.main import main
from registry.loader import PROJECT_ROOT, default_root  # noqa: F401 (PROJECT_ROOT: re-exported for tests)

# The registry as committed, exported by tests/conftest.py (never the checkout's working tree: a local draft
# or edit there changes nothing the suite reads). Tests read it; tests that edit take a copy_registry.
SHIPPED_ROOT = default_root()


def copy_registry(dest: Path) -> Path:
    """Copy the shipped formulas/ and guidelines/ into `dest` (a registry root of its own)."""
    for d in ("formulas", "guidelines"):
        shutil.copytree(SHIPPED_ROOT / d, dest / d)
    return dest


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`formula ARGV...` in this process: (exit status, stdout, stderr)."""
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    """Replace `owner.name` with a wrapper that still calls it; the returned list grows by one per call."""
    calls: list[int] = []
    real = getattr(owner, name)

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")
