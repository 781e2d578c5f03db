"""Nothing lost, nothing half-written: atomic file writes, a registry-wide lock, and all-or-nothing changes.

A writing command (fix, release, review, approve, lock, texts render) changes several files at
once: the calculator's YAML, a snapshot, REGISTRY.lock and the text catalogue. It does so as a
`Transaction`:

1. under the registry lock (`formulas/.registry.lock`, one writer at a time, across processes),
2. it first writes a journal, `formulas/.journal.json`, holding the previous content of every
   file it is about to change (atomically, so the journal is either whole or absent); every
   entry is a relative path inside the registry's formulas/ folder (no `..`, no link out), and a
   journal that is not is refused unapplied (`JournalRefused`: registry files are untrusted),
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
import stat
import tempfile
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Iterator

from registry import jsontext
from registry.counted_nouns import counted

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


def _new_file_mode(path: Path) -> int:
    """The permissions the written file gets: the replaced file's, else what the umask allows a new file."""
    try:
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode):
            return stat.S_IMODE(st.st_mode)
    except FileNotFoundError:
        pass
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: Path, data: str | bytes) -> None:
    """Replace `path` with `data` so that a reader (or a crash) sees the old file or the new one, never part.

    The temporary file is created exclusively (`O_CREAT | O_EXCL`, never through a symbolic link)
    under an unpredictable name in the target's folder, so nothing planted there is written
    through; the rename then replaces `path` itself (a link at `path` is replaced, not followed).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = data.encode("utf-8") if isinstance(data, str) else data
    with _beside(path, TMP_SUFFIX) as (fd, _):
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())


@contextmanager
def atomic_output(path: Path) -> Iterator[Path]:
    """A temporary file beside `path` for a writer that wants a file name (pandas, pyarrow): what the block wrote
    is fsynced and renamed over `path` when it ends, and removed when it raises, so `path` is never half-written.
    The name is made exclusively and unpredictably in the target's folder, as `atomic_write` makes its own, with
    the mode a new file gets."""
    with _beside(path, path.suffix) as (fd, tmp):
        os.close(fd)
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())


@contextmanager
def _beside(path: Path, suffix: str) -> Iterator[tuple[int, Path]]:
    """(an open descriptor, the name) of a new file in `path`'s folder, made exclusively under an unpredictable name
    with the mode a new file gets there; renamed over `path` when the block ends (the folder then fsynced), removed
    when it raises. The block closes the descriptor."""
    folder = path.parent if str(path.parent) else Path(".")
    mode = _new_file_mode(path)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=folder)
    tmp = Path(name)
    try:
        try:
            os.fchmod(fd, mode)
        except BaseException:
            os.close(fd)
            raise
        yield fd, tmp
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(folder)


def _remove(path: Path) -> None:
    if path.exists():
        path.unlink()
        _fsync_dir(path.parent)


@contextmanager
def registry_lock(formulas_dir: Path, timeout: float = 120.0) -> Iterator[None]:
    """Hold the registry-wide write lock (an OS file lock, released by the kernel if the holder dies)."""
    from filelock import FileLock, Timeout  # (imported by the writers that lock: 8 ms a read-only command saves)

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


class JournalRefused(Exception):
    """A journal the formula tools did not write: an entry outside formulas/, a link out of it, or no journal at all."""


def read_journal(formulas_dir: Path) -> dict | None:
    """The journal of an interrupted change, checked: every entry confined to this registry's formulas/ folder.

    Raises `JournalRefused` (naming the entry) for anything else; nothing of such a journal is ever applied.
    """
    p = journal_path(formulas_dir)
    if not os.path.lexists(p):
        return None
    where = f"{formulas_dir.name}/{JOURNAL_NAME}"
    if p.is_symlink() or not p.is_file():
        raise JournalRefused(f"{where} is a symbolic link or not a regular file: the formula tools never write "
                             "one; inspect it and remove it (nothing of it was applied)")
    try:
        journal = jsontext.read_file(p, jsontext.LOG_MAX, "journal", strict=True)
    except (ValueError, OSError) as e:
        raise JournalRefused(f"{where} is unreadable ({e}); inspect it and remove it (nothing of it was applied)") from None
    files = journal.get("files") if isinstance(journal, dict) else None
    if not isinstance(files, dict):
        raise JournalRefused(f"{where} holds no `files` mapping: not a journal the formula tools write; inspect it "
                             "and remove it (nothing of it was applied)")
    for rel, before in files.items():
        why = journal_entry_problem(formulas_dir.parent, rel, before)
        if why:
            raise JournalRefused(f"{where} is refused: entry {rel!r} {why}; the formula tools never write such a "
                                 "journal: inspect it and remove it (nothing of it was applied)")
    return journal


def journal_entry_problem(root: Path, rel: object, before: object) -> str | None:
    """Why a journal entry may not be applied (None when it may): it must name a file inside root/formulas/
    (a regular file, or none yet, under folders), never a folder: restoring one would fail halfway."""
    if not isinstance(rel, str) or not rel.strip():
        return "is not a file path"
    if not (before is None or isinstance(before, str)):
        return "holds no file content"
    if "\0" in rel or "\\" in rel:
        return "holds a NUL byte or a backslash"
    if os.path.isabs(rel) or rel.startswith("~"):
        return "is an absolute path"
    parts = Path(rel).parts
    if ".." in parts:
        return "contains '..'"
    if len(parts) < 2 or parts[0] != "formulas":
        return "is outside the registry's formulas/ folder"
    target = root / rel
    if target.is_symlink():
        return "is a symbolic link"
    if (root / "formulas").is_symlink() or (root / "formulas").resolve() not in target.resolve().parents:
        return "resolves outside the registry's formulas/ folder (through a symbolic link)"
    if target.name in (JOURNAL_NAME, LOCK_NAME):
        return "names the journal or the registry lock itself"
    if os.path.lexists(target) and not target.is_file():
        return "names a folder or something else that is not a regular file"
    if any(os.path.lexists(p) and not p.is_dir() for p in list(target.parents)[:len(parts) - 1]):
        return "passes through something that is not a folder"
    return None


def _previous(path: Path) -> str | None:
    """A file's content before the change (None: there is none), through the registry's reader: a file the command
    has read already is not read again (`registry.plain_files.reading_once`)."""
    from registry.plain_files import read_text

    try:
        return read_text(path)
    except FileNotFoundError:
        return None


def commit(root: Path, changes: dict[Path, str | None]) -> list[Path]:
    """Write every change (None deletes) all-or-nothing; the caller holds the registry lock.

    Returns the files that actually changed (unchanged content is not rewritten).
    """
    formulas_dir = root / "formulas"
    todo: dict[Path, str | None] = {}
    old: dict[str, str | None] = {}
    for path, new in changes.items():
        rel = os.path.relpath(path, root)
        why = journal_entry_problem(root, rel, None)
        if why:  # `formula recover` would refuse such a journal: refuse before writing anything
            raise JournalRefused(f"cannot write {path} as part of a registry change: it {why}")
        before = _previous(path)
        if before == new:
            continue
        todo[path] = new
        old[rel] = before
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
        return WriteInterrupted(f"interrupted while writing {counted(planned, 'file')}; rolled back {counted(len(restored), 'file')} to "
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
        if folder.is_dir() and not folder.is_symlink():
            for tmp in folder.glob(f".*{TMP_SUFFIX}"):
                tmp.unlink()
    return restored
