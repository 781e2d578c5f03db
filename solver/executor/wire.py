"""Framing between the client and a fork server: 4-byte big-endian length + UTF-8 JSON.

Kept free of POSIX-only imports so the client can load it anywhere and fail
with a clear message where fork servers cannot run.
"""
from __future__ import annotations

import json
import os
import struct

TYPE_CHECKING = False  # `typing` stays out of the fork server (see __init__)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

_HEADER = struct.Struct(">I")
_MAX_FRAME_BYTES = 64 * 1024 * 1024


def encode_frame(obj: Any) -> bytes:
    """One JSON frame as bytes (ASCII-escaped, so lone surrogates survive)."""
    data = json.dumps(obj, allow_nan=False).encode()
    return _HEADER.pack(len(data)) + data


def write_frame(fd: int, obj: Any) -> None:
    """Send one JSON frame."""
    view = memoryview(encode_frame(obj))
    while view:
        view = view[os.write(fd, view) :]


def read_exact(fd: int, n: int) -> bytes | None:
    """Exactly n bytes, or None if the stream ends first."""
    chunks: list[bytes] = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> Any | None:
    """One JSON frame, or None at end of stream."""
    header = read_exact(fd, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > _MAX_FRAME_BYTES:
        raise ValueError(f"frame of {size} bytes")
    data = read_exact(fd, size)
    return None if data is None else json.loads(data)
