"""Reading a registry file only when it is a plain file: never through a symbolic link, never a device or pipe.

Registry files come from pull requests, and a symbolic link in one (to `/proc/self/mem`, a FIFO, a file
outside the repository) would make a reader hang, fail with a traceback or show another file's contents.
Every reader of registry files goes through `read_bytes`: the file is opened with O_NOFOLLOW (a link as the
last component is refused by the kernel, so the target is never opened) and O_NONBLOCK (a pipe cannot hang
the open), and the open descriptor must be a regular file (fstat, so nothing changes between check and read).
`links` finds the links and special files anywhere under a folder, which validation reports by name.
"""
from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class FileRefused(OSError):
    """A registry path that is not a plain file (a link, device, pipe or folder): the message names the path."""

    def __init__(self, path: Path | str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = str(path)
        self.why = why

    def __str__(self) -> str:
        return f"{self.path}: {self.why}"


LINK = "is a symbolic link: a registry file is a plain file, never a link (replace the link by the file itself)"
SPECIAL = "is not a regular file (a device, pipe, socket or folder): a registry file is plain text"


LINKED_FOLDER = ("is a symbolic link: a registry folder is a plain folder, never a link (replace the link by the "
                 "folder itself); nothing in it was read")
FOLDER_LINK = ("is inside a registry folder that is a symbolic link ({folder}): registry folders are plain "
               "folders, never links (replace the link by the folder itself)")
TOP_FOLDERS = ("formulas", "guidelines", "results")  # a registry's own folders; policy, history, texts, drafts below


def linked_folder(path: Path | str) -> Path | None:
    """The first folder between `path` and its registry folder (formulas/, guidelines/ or results/, that one
    included) that is a symbolic link, or None; None too for a path under none of them (a file given by hand).

    O_NOFOLLOW guards the file's own name only: a linked `formulas/policy` would still be followed to its target."""
    chain: list[Path] = []
    folder = Path(path).parent
    for _ in range(6):
        chain.append(folder)
        if folder.name in TOP_FOLDERS:
            return next((d for d in chain if os.path.islink(d)), None)
        if folder.parent == folder:
            return None
        folder = folder.parent
    return None


# the files read by the running write (`reading_once`): (path, inode, size, mtime) -> (the limit read with, bytes)
_ONCE: list[dict[tuple[str, int, int, int], tuple[int | None, bytes]]] = []


@contextmanager
def reading_once() -> Iterator[None]:
    """Within a write under the registry lock (`registry.governance.writeplan.writing`), each file is read from disk
    once: a later read of the same file, unchanged (same inode, size and modification time, looked at without
    following a link), gets the bytes already read. Nobody else writes while the lock is held; what the command
    itself writes is committed by rename, which makes a new inode and so a new read."""
    _ONCE.append({})
    try:
        yield
    finally:
        _ONCE.pop()


def read_bytes(path: Path | str, limit: int | None = None) -> bytes:
    """The bytes of the plain file `path` (at most `limit` + 1 of them, so a caller can tell it is too big).

    FileNotFoundError when nothing is there; FileRefused, naming the path, for a link or a special file."""
    if not _ONCE:
        return _read_bytes(path, limit)
    try:
        st = os.lstat(path)
    except OSError:
        return _read_bytes(path, limit)
    key = (os.fspath(path), st.st_ino, st.st_size, st.st_mtime_ns)
    memo = _ONCE[-1]
    hit = memo.get(key)
    if hit is not None and (hit[0] is None or len(hit[1]) <= hit[0]):  # the whole file was read
        return hit[1] if limit is None else hit[1][: limit + 1]
    data = _read_bytes(path, limit)
    memo[key] = (limit, data)
    return data


def _open_plain(path: Path | str) -> int:
    """A descriptor on the plain file `path`; FileRefused for a link, a file in a linked registry folder or a
    special file (closed again)."""
    folder = linked_folder(path)
    if folder is not None:
        raise FileRefused(path, FOLDER_LINK.format(folder=folder.name))
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as e:
        if e.errno == errno.ELOOP or (e.errno == errno.EMLINK and os.path.islink(path)):
            raise FileRefused(path, LINK) from None
        raise FileRefused(path, f"cannot be opened ({e.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise FileRefused(path, SPECIAL)
    return fd


def _read_bytes(path: Path | str, limit: int | None) -> bytes:
    fd = _open_plain(path)
    try:
        chunks, left = [], (limit + 1 if limit is not None else -1)
        while left:
            chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left = left - len(chunk) if left > 0 else left
        return b"".join(chunks)
    except OSError as e:
        raise FileRefused(path, f"cannot be read ({e.strerror})") from None
    finally:
        os.close(fd)


class TooBig(FileRefused):
    """A file (or one line of it) over the size its reader accepts; the message names the file and the limit."""


def read_capped(path: Path | str, limit: int, what: str = "file") -> bytes:
    """`read_bytes`, refused (TooBig, naming the file and the limit) when the file is over `limit` bytes."""
    blob = read_bytes(path, limit)
    if len(blob) > limit:
        raise TooBig(path, f"is over {limit:,} bytes, more than a {what} may hold; it is not read (is it the "
                     "right file, or damaged?)")
    return blob


def lines(path: Path | str, line_limit: int, file_limit: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes without the newline) for each line of the plain file `path`, read a block at a time:
    a line over `line_limit` bytes comes as None, never held whole; TooBig past `file_limit` bytes in all."""
    fd = _open_plain(path)
    with os.fdopen(fd, "rb", buffering=1 << 16) as f:
        total, n = 0, 0
        while True:
            raw = f.readline(line_limit + 1)
            if not raw:
                return
            n += 1
            total += len(raw)
            long = len(raw) > line_limit and not raw.endswith(b"\n")
            while long and not raw.endswith(b"\n") and raw:  # skip the rest of an over-long line, a block at a time
                raw = f.readline(1 << 16)
                total += len(raw)
                if total > file_limit:
                    break
            if total > file_limit:
                raise TooBig(path, f"is over {file_limit:,} bytes, more than a results or log file may hold; "
                             "split it or check that it is the right file")
            yield n, None if long else raw.rstrip(b"\n")


def read_text(path: Path | str, limit: int | None = None) -> str:
    """`read_bytes` decoded as UTF-8 (UnicodeDecodeError as ever when it is not)."""
    return read_bytes(path, limit).decode("utf-8")


def is_plain(path: Path) -> bool:
    """Whether `path` itself (not a link's target) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def links(folder: Path) -> list[Path]:
    """Every symbolic link and special file under `folder` (links to folders are not followed), sorted."""
    found: list[Path] = []
    if not folder.is_dir() or folder.is_symlink():
        return [folder] if folder.is_symlink() else []
    for base, dirs, files in os.walk(folder, followlinks=False):
        for name in dirs + files:
            p = Path(base) / name
            mode = os.lstat(p).st_mode
            if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                found.append(p)
    return sorted(found)
