"""results.jsonl: one JSON line per case and seed, appended atomically, read back with torn-line repair.

Each row is one `os.write` of a complete line to a descriptor opened with O_APPEND, then fsync
(rows that finish together share one fsync):
a crash leaves either the whole line or, at worst, a tail without its newline, which `load`
cuts off (the row is then simply run again).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from registry import jsontext
from registry.atomic import atomic_write


class ResultsError(ValueError):
    pass


def encode(row: dict[str, Any]) -> bytes:
    return (json.dumps(row, ensure_ascii=False, sort_keys=False, separators=(",", ":")) + "\n").encode("utf-8")


def _cut(path: Path) -> tuple[int, int]:
    """(the file's size, the offset just past its last newline), read backwards a block at a time."""
    with open(path, "rb") as f:
        size = pos = f.seek(0, os.SEEK_END)
        while pos > 0:
            step = min(1 << 16, pos)
            f.seek(pos - step)
            i = f.read(step).rfind(b"\n")
            if i >= 0:
                return size, pos - step + i + 1
            pos -= step
    return size, 0


def load(path: Path, *, repair: bool = True) -> tuple[list[dict[str, Any]], int]:
    """The complete rows of a results file, and how many bytes of a torn last line were dropped.

    Bounded as every results reader is (registry.jsontext): a line over `LINE_MAX` bytes, a file over
    `RESULTS_MAX` bytes or over one budget of values is refused, naming the file."""
    from registry.plain_files import FileRefused, lines

    if not path.exists():
        return [], 0
    size, cut = _cut(path)
    if size > jsontext.RESULTS_MAX:
        raise ResultsError(f"{path}: over {jsontext.RESULTS_MAX:,} bytes, more than a results file may hold; "
                           "resume into a new --out folder")
    if cut < size and repair:
        with open(path, "r+b") as f:
            f.truncate(cut)
            f.flush()
            os.fsync(f.fileno())
    rows: list[dict[str, Any]] = []
    budget, done = jsontext.Budget(), 0
    try:
        for n, raw in lines(path, jsontext.LINE_MAX, jsontext.RESULTS_MAX):
            if done >= cut:
                break
            if raw is None:
                raise ResultsError(f"{path}:{n}: over {jsontext.LINE_MAX:,} bytes, more than a results line holds")
            done += len(raw) + 1
            if raw.strip():
                rows.append(jsontext.loads(raw, budget=budget))
    except jsontext.JsonError as e:
        raise ResultsError(f"{path}:{n}: not a JSON line ({e}); the file was changed by hand or by another "
                           "tool") from None
    except FileRefused as e:
        raise ResultsError(f"{e}; resume into a new --out folder") from None
    return rows, size - cut


class ResultsFile:
    """Append-only writer (one write + fsync per row)."""

    def __init__(self, path: Path):
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, row: dict[str, Any]) -> None:
        """Write one row and make it durable."""
        self.write(row)
        self.sync()

    def sync(self) -> None:
        """fsync: rows written before this call survive a crash (group commit for rows finishing together)."""
        os.fsync(self.fd)

    def write(self, row: dict[str, Any]) -> None:
        """One os.write of the complete line; call `sync` before counting it as saved."""
        data = encode(row)
        written = os.write(self.fd, data)
        if written != len(data):  # a short write: cut it off so the file ends on a line boundary
            os.ftruncate(self.fd, os.fstat(self.fd).st_size - written)
            raise OSError(f"{self.path}: short write ({written} of {len(data)} bytes)")

    def close(self) -> None:
        os.close(self.fd)


def rewrite(path: Path, rows: list[dict[str, Any]]) -> None:
    """Replace the whole file atomically (temp file in the same folder, fsync, rename)."""
    atomic_write(path, b"".join(encode(row) for row in rows))
