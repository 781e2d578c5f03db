"""Bounds on a model's reply, for every caller that reads one (arms, scorer, runner, replay engine).

A reply is untrusted text of any size. Anything longer than `MAX_REPLY_CHARS` (64 Ki characters,
far above the longest reply any arm's token cap allows) is never parsed: a text arm reads it as
`unreadable`, the extraction arm as `unreadable`, the executor as `rejected` (before any parsing,
in the caller). So the cost of reading a reply in the calling process is bounded by the cap, and a
1 MB reply is decided in microseconds by its length alone.

`results.jsonl` keeps such a reply small: its first `STORED_PREFIX_CHARS` characters plus its
length (`reply_chars`) and SHA-256 (`reply_sha256`). Since only the length decided its outcome,
the replay engine gives it back at its recorded length (`replayed`), which decides the same way.
"""
from __future__ import annotations

import hashlib
from typing import Any

from solver.executor.policy import MAX_REPLY_CHARS

STORED_PREFIX_CHARS = 2_000
PADDING = "\u2026"  # what stands in for the part of an over-long reply that was not stored


def too_long(text: Any) -> str | None:
    """Why a reply is not read (it is over the cap), or None."""
    if isinstance(text, str) and len(text) > MAX_REPLY_CHARS:
        return f"reply is {len(text)} characters, over the {MAX_REPLY_CHARS}-character cap; not read"
    return None


def stored(text: str | None) -> dict[str, Any]:
    """The fields that store a reply in a results row or call record: the reply itself, or, over the cap,
    its prefix with `reply_chars` and `reply_sha256`."""
    if text is None or len(text) <= MAX_REPLY_CHARS:
        return {"reply": text}
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return {"reply": text[:STORED_PREFIX_CHARS], "reply_chars": len(text), "reply_sha256": f"sha256:{digest}"}


def replayed(turn: dict[str, Any]) -> str:
    """A stored reply as the model gave it, or, for one stored truncated, its prefix padded to its length."""
    text = turn.get("reply") or ""
    n = turn.get("reply_chars")
    if isinstance(n, int) and n > len(text):
        return text + PADDING * min(n - len(text), MAX_REPLY_CHARS + 1 - len(text))
    return text
