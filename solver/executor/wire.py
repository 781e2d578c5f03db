"""Framing between the client and a fork server: 4-byte big-endian length + payload.

Requests (client to server, and to a fresh interpreter) are marshal data:
plain str, int, None and dict that only our own client writes, read in one C
call.  A server's answer is either a relayed child result (RESULT_TAG, a fixed
header and the child's raw bytes, which the client classifies) or JSON (the
hello, and outcomes the server decided without a child).  What a child writes
is only ever read as JSON.  Doing little per program here matters: every page
a fork server writes between two forks is copied (see server.py).

Kept free of POSIX-only imports so the client can load it anywhere and fail
with a clear message where fork servers cannot run.
"""
from __future__ import annotations

import json
import marshal
import os
import struct

TYPE_CHECKING = False  # `typing` stays out of the fork server (see __init__)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

_HEADER = struct.Struct(">I")
_MAX_FRAME_BYTES = 64 * 1024 * 1024
CHECKED_MARK = b"C"    # a child writes it once its program has passed the checker
RESULT_TAG = b"R"      # a relayed child result; a JSON answer starts with "{"
# signal that ended the child (-1: it exited), exit status (-1: none), killed at the wall limit, CPU s, wall s
_RESULT = struct.Struct(">iiBdd")


def encode_frame(obj: Any) -> bytes:
    """One JSON frame as bytes (ASCII-escaped, so lone surrogates survive)."""
    data = json.dumps(obj, allow_nan=False).encode()
    return _HEADER.pack(len(data)) + data


def encode_request(request: dict[str, Any]) -> bytes:
    """One request frame (marshal keeps lone surrogates too)."""
    data = marshal.dumps(request)
    return _HEADER.pack(len(data)) + data


def encode_result(data: bytes, sig: int | None, exit_code: int | None, cpu_s: float, wall_s: float,
                  killed: bool) -> bytes:
    """One relayed child result: what the child wrote and how it ended."""
    head = _RESULT.pack(-1 if sig is None else sig, -1 if exit_code is None else exit_code, killed, cpu_s, wall_s)
    return _HEADER.pack(len(RESULT_TAG) + len(head) + len(data)) + RESULT_TAG + head + data


def decode_result(payload: bytes) -> tuple[bytes, int | None, int | None, float, float, bool] | None:
    """(data, sig, exit status, cpu_s, wall_s, killed) of a relayed result, in
    classify's order; None for a payload that is not one."""
    if payload[:1] != RESULT_TAG or len(payload) < 1 + _RESULT.size:
        return None
    sig, code, killed, cpu_s, wall_s = _RESULT.unpack_from(payload, 1)
    data = payload[1 + _RESULT.size :]
    return data, None if sig < 0 else sig, None if code < 0 else code, cpu_s, wall_s, bool(killed)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte (one write, as a rule)."""
    written = os.write(fd, data)
    if written < len(data):
        view = memoryview(data)[written:]
        while view:
            view = view[os.write(fd, view) :]


def write_frame(fd: int, obj: Any) -> None:
    """Send one JSON frame."""
    write_all(fd, encode_frame(obj))


def read_exact(fd: int, n: int) -> bytes | None:
    """Exactly n bytes, or None if the stream ends first (one read, as a rule)."""
    if not n:
        return b""
    first = os.read(fd, min(n, 1 << 20))
    if len(first) == n:
        return first
    if not first:
        return None
    chunks = [first]
    n -= len(first)
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_payload(fd: int) -> bytes | None:
    """One frame's payload, or None at end of stream."""
    header = read_exact(fd, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > _MAX_FRAME_BYTES:
        raise ValueError(f"frame of {size} bytes")
    return read_exact(fd, size)


def read_frame(fd: int) -> Any | None:
    """One JSON frame, or None at end of stream."""
    data = read_payload(fd)
    return None if data is None else json.loads(data)


def read_request(fd: int) -> Any | None:
    """One request frame, or None at end of stream."""
    data = read_payload(fd)
    return None if data is None else marshal.loads(data)
