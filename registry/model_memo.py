"""Values worked out from a registry's models, kept beside the very objects they came from (`registry.snapshot_extras`
says which, and why).

A warm read-only command starts from the pickled registry (`registry.snapshot`), whose model classes have built no
serializer yet: the first `model_dump` in a process builds pydantic's schemas, measured 26-40 ms here, a tenth of a
warm `show` or `history` on a registry with signed decisions. The dumps those commands need (each version's record
hash, the units file as plain data) are therefore made once, when the snapshot is written, stored in it, and taken
up again when it is read. A value is used only while its source is the very object it was made from (pickling keeps
that identity), so an edited entry, always a new object (`registry.schema.Strict`), is worked out afresh.

Measured gain (2026-12-03, this 2-core machine, a registry with 100 signed decisions, best of 11 runs interleaved
with the same tree less this memo): warm `show meld-na` 0.333 -> 0.268 s, `history meld-na` 0.316 -> 0.271 s;
`list` and `pending`, which dump nothing, unchanged within the runs' spread.
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar

T = TypeVar("T")
MAX_KEPT = 8192  # sources remembered in one process (a registry has a few hundred); past it, the memo starts again

_kept: dict[tuple[str, int], tuple[Any, Any]] = {}  # (kind, id(source)) -> (source, value)


def kept(kind: str, source: Any, make: Callable[[Any], T]) -> T:
    """`make(source)`, worked out once per source object in this process (or taken from the snapshot)."""
    hit = _kept.get((kind, id(source)))
    if hit is not None and hit[0] is source:
        return hit[1]
    value = make(source)
    if len(_kept) >= MAX_KEPT:
        _kept.clear()
    _kept[(kind, id(source))] = (source, value)
    return value


def adopt(entries: list[tuple[str, Any, Any]]) -> None:
    """Take up the values a snapshot carried (their sources are the unpickled registry's own objects)."""
    for kind, source, value in entries:
        if len(_kept) >= MAX_KEPT:
            _kept.clear()
        _kept[(kind, id(source))] = (source, value)
