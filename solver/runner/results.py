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


def load(path: Path, *, repair: bool = True) -> tuple[list[dict[str, Any]], int]:
    """The complete rows of a results file, and how many bytes of a torn last line were dropped."""
    from registry.regular import FileRefused, read_capped

    if not path.exists():
        return [], 0
    try:
        data = read_capped(path, jsontext.RESULTS_MAX, "results file")
    except FileRefused as e:
        raise ResultsError(f"{e}; resume into a new --out folder") from None
    torn = 0
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        torn = len(data) - cut
        if repair:
            with open(path, "r+b") as f:
                f.truncate(cut)
                f.flush()
                os.fsync(f.fileno())
        data = data[:cut]
    rows = []
    budget = jsontext.Budget()
    for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(jsontext.loads(line, budget=budget))
        except jsontext.JsonError:
            raise ResultsError(f"{path}:{n}: not a JSON line; the file was changed by hand or by another tool") from None
    return rows, torn


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
