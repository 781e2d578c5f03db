"""What the library returns: the value, and exactly which registry content produced it."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

Value = float | int | dt.date | tuple[int, int]


@dataclass(frozen=True)
class InputRecord:
    given: Any
    value: Any
    unit: str | None


@dataclass(frozen=True)
class Result:
    value: Value
    unit: str | None
    calculator: str
    version: str
    variant: str
    content_hash: str = ""  # the content hash of `version` (registry.versions.active_hash), as REGISTRY.lock records it
    inputs: dict[str, InputRecord] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # broken plausibility rules (benchmark variant)

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
        return out


def make_result(value: Value, unit: str | None, calculator: str, version: str, variant: str, content_hash: str,
                inputs: dict[str, InputRecord], warnings: list[str]) -> Result:
    """`Result(...)` for the library's hot path: the same fields, set without the frozen dataclass's
    per-field `object.__setattr__` calls (a third of a BMI call's overhead once)."""
    r = _new(Result)
    d = r.__dict__  # stored one by one: cheaper than building a keyword dict to update from
    d["value"] = value
    d["unit"] = unit
    d["calculator"] = calculator
    d["version"] = version
    d["variant"] = variant
    d["content_hash"] = content_hash
    d["inputs"] = inputs
    d["warnings"] = warnings
    return r


_new = object.__new__


def make_record(given: Any, value: Any, unit: str | None) -> InputRecord:
    """`InputRecord(given, value, unit)` without the frozen dataclass's per-field `object.__setattr__` calls."""
    r = _new(InputRecord)
    d = r.__dict__
    d["given"] = given
    d["value"] = value
    d["unit"] = unit
    return r
