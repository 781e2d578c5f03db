"""Input as people and exports write it, read once in the registry's spelling: the one cleanup of a call.

`formula solve`, the MCP and OpenAI tools and Python `solve()` all hand their entities to `clean` before anything
is computed, so the same input is read the same way everywhere: a name that differs from an input only in case
('Sex'), a unit written another way ('lb', 'umol/L', the Greek mu), a choice's code or case ('M', 'female'), a
yes/no written as 'yes', 'N' or 1. What may be read as what is registry data (formulas/units.yaml `spellings:` and
a choice input's `codes:`); a unit's spelling is read by the converter (`Converter.read_unit`), so a table's unit
column is read the same way. Nothing is guessed: a spelling with two readings is refused naming both, and every
reading is kept (`Reading`) for the answer record, as given and as read.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from registry.schema import Calculator, Input, InputKind
from registry.spellings import (
    AmbiguousSpelling,
    accepted_parts,
    choice_readings,
    normalise_unit,
    read_choice,
    read_flag,
)
from solver.library.errors import AmbiguousValue
from solver.library.units import Converter

__all__ = ["AmbiguousSpelling", "Cleaned", "Reading", "choice_readings", "clean", "read_choice", "read_flag"]

# kinds whose value is [number, unit] (or several such pairs); a special input's units are only normalised
_UNIT_KINDS = frozenset({InputKind.quantity, InputKind.measurement, InputKind.age, InputKind.weight,
                         InputKind.height, InputKind.temperature, InputKind.count_per_volume})


@dataclass(frozen=True)
class Reading:
    """One value or name read other than as written: `given` as typed, `read` as the registry spells it."""

    input: str
    given: Any
    read: Any
    what: str  # "name", "unit", "option", "yes/no"

    def as_warning(self) -> str:
        if self.what == "name":
            return f"input {self.given!r} read as {self.read!r} (names are matched without case)"
        return f"{self.input}: {self.given!r} read as {self.read!r} ({self.what})"


@dataclass
class Cleaned:
    """The entities in the registry's spelling, and every reading that made them so."""

    entities: dict[str, Any]
    readings: list[Reading] = field(default_factory=list)

    def warnings(self) -> list[str]:
        return [r.as_warning() for r in self.readings]


def read_units(conv: Converter, spec: Input, given: Any) -> Any:
    """A [number, unit, ...] value with each unit after a number in the registry's spelling."""
    if not isinstance(given, list) or not any(isinstance(v, str) for v in given):
        return given
    accepted = accepted_parts(spec) if spec.kind in _UNIT_KINDS else []
    out = []
    for i, v in enumerate(given):
        if isinstance(v, str) and i and not isinstance(given[i - 1], str):
            v = conv.read_unit(v, accepted) if accepted else normalise_unit(v)
        out.append(v)
    return out


def _name_renames(calc: Calculator, entities: dict[str, Any]) -> dict[str, str]:
    """{given name: input} for a name that differs from one input only in case, unless two inputs fold alike or
    the input's own name is given too."""
    declared = {i.name for i in calc.inputs}
    folded: dict[str, list[str]] = {}
    for name in declared:
        folded.setdefault(name.casefold(), []).append(name)
    out = {}
    for key in entities:
        match = folded.get(key.casefold(), []) if isinstance(key, str) and key not in declared else []
        if len(match) == 1 and match[0] not in entities:
            out[key] = match[0]
    return out


def _value(conv: Converter, spec: Input, given: Any) -> tuple[Any, str]:
    if spec.kind == InputKind.choice:
        return read_choice(conv.units, spec, given), "option"
    if spec.kind == InputKind.boolean:
        return read_flag(conv.units, given), "yes/no"
    return read_units(conv, spec, given), "unit"


def clean(calc: Calculator, conv: Converter, entities: Any) -> Cleaned:
    """`entities` read in the registry's spelling (names, units, options, yes/no), with every reading made.
    Raises `AmbiguousValue` (naming the input and both readings) for a value with two readings; a value nothing reads is left as
    given, for the library to refuse with its own message."""
    if not isinstance(entities, dict):
        return Cleaned(entities)
    renames = _name_renames(calc, entities)
    specs = {i.name: i for i in calc.inputs}
    out: dict[str, Any] = {}
    readings = [Reading(read, typed, read, "name") for typed, read in renames.items()]
    for key, given in entities.items():
        name: str = renames[key] if key in renames else key
        spec = specs.get(name)
        value, what = (given, "") if spec is None else _read(conv, calc.slug, spec, given)
        if value != given or type(value) is not type(given):
            readings.append(Reading(name, given, value, what))
        out[name] = value
    return Cleaned(out, readings)


def _read(conv: Converter, slug: str, spec: Input, given: Any) -> tuple[Any, str]:
    try:
        return _value(conv, spec, given)
    except AmbiguousSpelling as e:
        raise AmbiguousValue(slug, spec.name, str(e)) from None
