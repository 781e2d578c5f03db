"""What the library returns: the value, and exactly which registry content produced it.

Both records are immutable named tuples: a case makes one `Result` and one `InputRecord` per input it
reads, so they are built with `new_tuple` (`tuple.__new__`: no keyword handling), and the common
records (a flag given as True or False) can be shared safely.
"""
from __future__ import annotations

import datetime as dt
from typing import Any, NamedTuple

Value = float | int | dt.date | tuple[int, int]


class InputRecord(NamedTuple):
    given: Any
    value: Any
    unit: str | None


class Result(NamedTuple):
    value: Value
    unit: str | None
    calculator: str
    version: str
    variant: str
    content_hash: str  # the content hash of `version` (registry.versions.active_hash), as REGISTRY.lock records it
    inputs: dict[str, InputRecord]  # each input read: as given, as used, in which unit
    warnings: list[str]  # broken plausibility rules (benchmark variant)
    # the results of the dependencies this computation used (nested ones first), in the order they finished:
    # what an answer record lists as its sub-results (a dependency the formula did not need is not computed)
    subs: tuple["Result", ...] = ()
    # the steps behind the value (`solver.library.working.Step`), the last one the answer: empty unless
    # `compute(..., working=True)` asked for them
    working: tuple[Any, ...] = ()

    def to_json(self) -> dict[str, Any]:
        v: Any = self.value
        if isinstance(v, dt.date):
            v = v.isoformat()
        elif isinstance(v, tuple):
            v = list(v)
        out: dict[str, Any] = {"value": v, "unit": self.unit, "calculator": self.calculator,
                               "version": self.version, "content_hash": self.content_hash, "variant": self.variant}
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.working:
            out["working"] = [s.to_json() for s in self.working]
        return out


# A Result or InputRecord is built as `new_tuple(Result, (value, unit, ...))`, every field in order: `tuple.__new__`
# rather than the class call (which handles keywords and defaults) measured 100 ns against 217 ns per record, and 140 ns
# through a helper function that calls it; a case makes one Result and three or four records
new_tuple = tuple.__new__
