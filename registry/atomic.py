"""Nothing lost, nothing half-written: atomic file writes, a registry-wide lock, and all-or-nothing changes.

A writing command (fix, release, review, approve, lock, texts render) changes several files at
once: the calculator's YAML, a snapshot, REGISTRY.lock and the text catalogue. It does so as a
`Transaction`:

1. under the registry lock (`formulas/.registry.lock`, one writer at a time, across processes),
2. it first writes a journal, `formulas/.journal.json`, holding the previous content of every
   file it is about to change (atomically, so the journal is either whole or absent),
3. then writes each file atomically (a temporary file in the same folder, fsync, rename, fsync of
   the folder),
4. and removes the journal last.

A process killed at any point leaves either no journal (the old or the new state, complete) or a
whole journal, which `formula recover` (and every writing command, before it starts) uses to
roll the files back to the old state. `formula validate` reports a journal it finds.
"""
from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from filelock import FileLock, Timeout

LOCK_NAME = ".registry.lock"
JOURNAL_NAME = ".journal.json"
TMP_SUFFIX = ".tmp"


class LockBusy(Exception):
    """Another writer held the registry lock for longer than the timeout."""


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: str | bytes) -> None:
    """Replace `path` with `data` so that a reader (or a crash) sees the old file or the new one, never part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.parent / f".{path.name}.{os.getpid()}{TMP_SUFFIX}"
    with open(tmp, "wb") as f:
        f.write(blob)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _remove(path: Path) -> None:
    if path.exists():
        path.unlink()
        _fsync_dir(path.parent)


@contextmanager
def registry_lock(formulas_dir: Path, timeout: float = 120.0) -> Iterator[None]:
    """Hold the registry-wide write lock (an OS file lock, released by the kernel if the holder dies)."""
    formulas_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(formulas_dir / LOCK_NAME), timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise LockBusy(f"another command has held {formulas_dir / LOCK_NAME} for {timeout:.0f} s; "
                       "try again when it has finished") from None
    try:
        yield
    finally:
        lock.release()


def journal_path(formulas_dir: Path) -> Path:
    return formulas_dir / JOURNAL_NAME


def read_journal(formulas_dir: Path) -> dict | None:
    p = journal_path(formulas_dir)
    if not p.exists():
        return None
    return json.loads(p.read_text(encoding="utf-8"))


def commit(root: Path, changes: dict[Path, str | None]) -> list[Path]:
    """Write every change (None deletes) all-or-nothing; the caller holds the registry lock.

    Returns the files that actually changed (unchanged content is not rewritten).
    """
    formulas_dir = root / "formulas"
    todo: dict[Path, str | None] = {}
    old: dict[str, str | None] = {}
    for path, new in changes.items():
        before = path.read_text(encoding="utf-8") if path.exists() else None
        if before == new:
            continue
        todo[path] = new
        old[os.path.relpath(path, root)] = before
    if not todo:
        return []
    journal = {"format": 1, "about": "Previous content of files a registry change was writing; "
               "`formula recover` restores them. Written and removed by the formula tools.", "files": old}
    try:
        atomic_write(journal_path(formulas_dir), json.dumps(journal, ensure_ascii=False))
        for path, new in todo.items():
            if new is None:
                _remove(path)
            else:
                atomic_write(path, new)
        _remove(journal_path(formulas_dir))
    except KeyboardInterrupt:
        raise _rolled_back(root, len(todo)) from None
    return list(todo)


class WriteInterrupted(KeyboardInterrupt):
    """Ctrl-C during a multi-file write; the files were rolled back in process (as `formula recover` does)."""


def _rolled_back(root: Path, planned: int) -> WriteInterrupted:
    """Roll back what an interrupted commit wrote, then say what happened (the journal is whole or absent)."""
    restored = recover(root)
    if restored:
        return WriteInterrupted(f"interrupted while writing {planned} file(s); rolled back {len(restored)} file(s) to "
                                "their previous content, so the registry is as it was before the command")
    return WriteInterrupted(f"interrupted before any of {planned} file(s) was written; the registry is unchanged")


def recover(root: Path) -> list[str]:
    """Roll back an interrupted change (restore every journalled file); returns the files restored.

    Also removes temporary files a killed writer left behind. Idempotent: killed while recovering,
    it is simply run again.
    """
    formulas_dir = root / "formulas"
    restored: list[str] = []
    journal = read_journal(formulas_dir)
    if journal is not None:
        for rel, before in journal["files"].items():
            p = root / rel
            if before is None:
                _remove(p)
            else:
                atomic_write(p, before)
            restored.append(rel)
        _remove(journal_path(formulas_dir))
    for folder in (formulas_dir, formulas_dir / "texts", *(formulas_dir / "history").glob("*")):
        if folder.is_dir():
            for tmp in folder.glob(f".*{TMP_SUFFIX}"):
                tmp.unlink()
    return restored
