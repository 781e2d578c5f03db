"""Shared helpers for tests that change a registry: a private copy, the CLI in-process, a fingerprint."""
from __future__ import annotations

import hashlib
import os
import shutil
import signal
import time
from pathlib import Path

from cli.main import main
from registry.loader import clear_cache, get_registry, load
from registry.validate import validate
from registry.versions import bump
from tests.helpers import SHIPPED_ROOT

SODIUM = "sodium-correction-hyperglycemia"
# the shipped sodium correction's versions, its active one and what a minor release of it becomes
# (read from the registry, so a maintainer's release never breaks these tests)
SODIUM_VERSIONS = [v.version for v in get_registry().calculators[SODIUM].versions]
OLD = get_registry().calculators[SODIUM].active.version
NEW = bump(OLD, "minor")
NEWER = bump(NEW, "minor")


def copy_registry(dst: Path) -> Path:
    for d in ("formulas", "guidelines"):
        shutil.copytree(SHIPPED_ROOT / d, dst / d, ignore=shutil.ignore_patterns(".registry.lock", ".journal.json",
                                                                                  "drafts"))
    return dst


def formula(capsys, root: Path, *argv: str) -> tuple[int, str, str]:
    """Run `formula ARGV --root ROOT` in-process; (exit code, stdout, stderr)."""
    clear_cache()
    code = main([*argv, "--root", str(root)])
    out = capsys.readouterr()
    return code, out.out, out.err


def problems(root: Path) -> list[str]:
    clear_cache()
    reg = load(root)
    validate(reg)
    return [str(p) for p in reg.problems]


def fingerprint(root: Path) -> dict[str, str]:
    """Every file under the registry with the hash of its bytes: to prove a refusal wrote nothing."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != ".registry.lock"}


def kill_at(proc, parent, step: int, wait: float) -> bool:
    """Let the forked child `proc` report `step` events (its writes, renames, removals) through `parent`, a pipe
    end, then SIGKILL it, unless it reports "exit" first (waiting `wait` seconds at most for each event); True
    when it finished by itself. The child is joined either way."""
    seen, finished = 0, False
    while seen < step and parent.poll(wait):
        kind, _ = parent.recv()
        seen += 1
        if kind == "exit":
            finished = True
            break
    if not finished:
        time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    proc.join(30)
    return finished
