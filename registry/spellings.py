"""How real exports spell the registry's units and options, read without guessing: the rules, over registry data.

The aliases and codes are data (formulas/units.yaml `spellings:`, a choice input's `codes:`); these functions say
what a spelling may be read as for one input. The library reads units through its converter
(`solver.library.units.Converter.read_unit`, which calls `read_unit` here) and cleans a whole call in
`solver.library.spelling`; `formula validate` runs the same readings over every input (`problems`), so a table
that would make a spelling ambiguous is refused before anything reads it.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

from registry.schema import Input, InputKind, UnitsFile

MICRO_SIGN, GREEK_MU = "\u00b5", "\u03bc"  # the registry spells micro with U+00B5


KEEP_SUPERSCRIPTS = frozenset("\u00b2\u00b3")
# the non-ASCII spellings normalised so far ("µmol/L", "µg" are common inputs): a lookup measured 60 ns against
# 770 ns for normalising "µmol/L" again; bounded, as the spellings come from the callers
_NORMALISED: dict[str, str] = {}
MAX_NORMALISED = 1024


def normalise_unit(unit: str) -> str:
    """A unit string in the registry's spelling: NFKC (full-width letters, compatibility forms), then the
    Greek mu (U+03BC, which NFKC also makes of the micro sign) as the micro sign U+00B5."""
    if unit.isascii():  # the common case: nothing to normalise
        return unit
    out = _NORMALISED.get(unit)
    if out is None:
        # per character, keeping the superscripts the registry spells units with (m², m³), which NFKC folds to digits
        out = "".join(c if c in KEEP_SUPERSCRIPTS else unicodedata.normalize("NFKC", c) for c in unit)
        out = out.replace(GREEK_MU, MICRO_SIGN)
        if len(_NORMALISED) < MAX_NORMALISED:
            _NORMALISED[unit] = out
    return out


class AmbiguousSpelling(ValueError):
    """A spelling that reads as two different things for one input: never guessed, both readings named."""

    def __init__(self, given: object, readings: Sequence[object]):
        self.given, self.readings = given, tuple(readings)
        super().__init__(f"{given!r} could mean {' or '.join(repr(r) for r in self.readings)}: "
                         "give one of them as written")


def _aliases(units: UnitsFile) -> dict[str, list[str]]:
    """The registry's unit aliases without case: {folded alias: [its units]} (two when the table is ambiguous,
    which `formula validate` refuses)."""
    out: dict[str, list[str]] = {}
    for alias, unit in units.spellings.units.items():
        got = out.setdefault(normalise_unit(alias).casefold(), [])
        if unit not in got:
            got.append(unit)
    return out


def unit_key(unit: str, aliases: dict[str, list[str]]) -> str:
    """What a unit means, as far as spelling goes: each part between slashes through the alias table (a part with
    two readings keeps its own spelling), without case. Two spellings with one key are one unit."""
    parts = []
    for part in normalise_unit(unit).split("/"):
        found = aliases.get(part.casefold(), [])
        parts.append((found[0] if len(found) == 1 else part).casefold())
    return "/".join(parts)


def unit_readings(units: UnitsFile, given: str, accepted: Sequence[str]) -> list[str]:
    """Every accepted unit `given` may be read as, one per meaning: as written, without case, or through the
    registry's aliases (whole, or part by part between slashes: 'umol/l' is 'µmol/L'). Empty when none."""
    typed = normalise_unit(given.strip())
    if typed in accepted:
        return [typed]
    aliases = _aliases(units)
    wanted = {typed.casefold()}
    variants: list[list[str]] = []
    for part in typed.split("/"):
        variants.append([part.casefold()] + [u.casefold() for u in aliases.get(part.casefold(), [])])
    wanted.update("/".join(c) for c in _product(variants))
    wanted.update(u.casefold() for u in aliases.get(typed.casefold(), []))
    by_meaning: dict[str, str] = {}
    for a in accepted:
        if a.casefold() in wanted:
            by_meaning.setdefault(unit_key(a, aliases), a)  # 'mm Hg' and 'mm hg' are one reading
    return list(by_meaning.values())


def _product(variants: list[list[str]]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = [()]
    for options in variants:
        out = [o + (v,) for o in out for v in dict.fromkeys(options)]
    return out


def read_unit(units: UnitsFile, given: str, accepted: Sequence[str]) -> str:
    """The accepted unit `given` stands for; `given` normalised when it stands for none (the caller refuses it with
    its usual message). Raises `AmbiguousSpelling` when it could stand for two."""
    found = unit_readings(units, given, accepted)
    if len(found) > 1:
        raise AmbiguousSpelling(given, found)
    return found[0] if found else normalise_unit(given)


def _fold(s: str) -> str:
    return normalise_unit(s.strip()).casefold()


def choice_readings(units: UnitsFile, spec: Input, given: str) -> list[str]:
    """The options `given` may be read as: as written, without case, or through a code (the input's own, then
    the registry's shared codes for options the input has). One per option; empty when none."""
    if given in spec.options:
        return [given]
    folded = _fold(given)
    found = [o for o in spec.options if _fold(o) == folded]
    for table in (spec.codes, units.spellings.choices):
        found += [o for code, o in table.items() if _fold(code) == folded and o in spec.options]
    return list(dict.fromkeys(found))


def read_choice(units: UnitsFile, spec: Input, given: Any) -> Any:
    """The option a string stands for; anything else as given (the library refuses what is not an option)."""
    if not isinstance(given, str):
        return given
    found = choice_readings(units, spec, given)
    if len(found) > 1:
        raise AmbiguousSpelling(given, found)
    return found[0] if found else given


def read_flag(units: UnitsFile, given: Any) -> Any:
    """True or False for a yes/no written as a code of the registry ('yes', 'N', '1', or the numbers 1 and 0);
    anything else as given."""
    if isinstance(given, bool):
        return given
    if given == "True" or given == "False":  # the benchmark's own spelling (medcalc/VOCAB.md), with or without a table
        return given == "True"
    if isinstance(given, int) and given in (0, 1):
        given = str(given)
    if not isinstance(given, str):
        return given
    folded = _fold(given)
    found = list(dict.fromkeys(v for code, v in units.spellings.booleans.items() if _fold(code) == folded))
    if len(found) > 1:
        raise AmbiguousSpelling(given, found)
    return found[0] if found else given


def accepted_parts(spec: Input) -> list[str]:
    """The units an input accepts, a joined form ('ft+in') also by its parts."""
    out = list(spec.accepted_units)
    for u in spec.accepted_units:
        if "+" in u:
            out += [p for p in u.split("+") if p not in out]
    return out


def spellings_of(units: UnitsFile, spec: Input) -> list[str]:
    """Every spelling besides its own that an input reads (for `formula show` and the guide), e.g. "lb -> lbs"."""
    out: list[str] = []
    if spec.kind == InputKind.choice:
        for table in (spec.codes, units.spellings.choices):
            out += [f"{code} -> {o}" for code, o in table.items() if o in spec.options]
    elif spec.kind == InputKind.boolean:
        out += [f"{code} -> {'yes' if v else 'no'}" for code, v in units.spellings.booleans.items()]
    elif spec.accepted_units and spec.kind != InputKind.special:
        accepted = accepted_parts(spec)
        for alias, unit in units.spellings.units.items():
            if unit in accepted or any(unit in a.split("/") for a in accepted):
                out.append(f"{alias} -> {unit}")
    return list(dict.fromkeys(out))


def problems(units: UnitsFile, inputs: Sequence[Input]) -> list[tuple[str, str]]:
    """(input, what is wrong) for every spelling that an input would read two ways with these tables: an alias or
    code read as two different units or options, or a code that reads as an option the input lacks. `formula
    validate` runs it over every calculator, so an ambiguous table never reaches a reading."""
    out: list[tuple[str, str]] = []
    aliases = _aliases(units)
    for folded, targets in sorted(aliases.items()):
        if len(targets) > 1:
            out.append(("(units.yaml)", f"unit alias {folded!r} reads as {' and '.join(map(repr, targets))}"))
    for spec in inputs:
        out += [(spec.name, m) for m in _input_problems(units, spec, aliases)]
    return out


def _input_problems(units: UnitsFile, spec: Input, aliases: dict[str, list[str]]) -> list[str]:
    out = []
    if spec.kind == InputKind.choice:
        for code in [*spec.codes, *units.spellings.choices, *spec.options]:
            found = choice_readings(units, spec, code)
            if len(found) > 1:
                out.append(f"{code!r} could mean {' or '.join(map(repr, found))}: remove one of the codes")
    elif spec.accepted_units and spec.kind != InputKind.special:
        accepted = accepted_parts(spec)
        for spelling in [*units.spellings.units, *accepted]:
            found = unit_readings(units, spelling, accepted)
            if len(found) > 1:
                out.append(f"unit {spelling!r} could mean {' or '.join(map(repr, found))}: remove the alias or "
                           "one of the accepted units")
    return list(dict.fromkeys(out))
