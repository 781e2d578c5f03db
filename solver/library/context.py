"""What a calculator function may read: typed, unit-converted inputs and its registry entry.

A calculator function receives a `Context` and returns the raw result. The context gives it
typed, unit-converted inputs (refusing anything it cannot read with a named error), the
calculator's constants and tables from the registry, and the results of the calculators it
depends on (computed through the engine's callback, so this module never imports the engine).
"""
from __future__ import annotations

import datetime as dt
import math
from math import isfinite
from typing import Any, Callable, Iterable

from registry.loader import Registry
from registry.schema import Analyte, Calculator, Table, UnitsFile
from registry.spellings import read_choice, read_flag
from solver.library.calculator_plan import Plan, plan
from solver.library.errors import AmbiguousValue, BadValue, CalculatorError, MissingInput, OutOfRange, UnknownUnit
from solver.library.result import InputRecord, Result, new_tuple
from solver.library.rounding import round_value
from solver.library.unit_hints import unit_hint
from solver.library.units import (
    AmbiguousSpelling,
    ConversionError,
    Converter,
    lookalike_note,
    normalise_unit,
    round_number,
)

# computes a dependency: (calculator, the caller's entities, variant, registry, True, the computation's results of
# dependencies so far) -> Result
SubCompute = Callable[[Calculator, dict[str, Any], str, Registry, bool, "dict[str, Result] | None"], Result]


_CONVERTERS: dict[tuple[int, bool], Converter] = {}
_ABSENT = object()  # an entity not given
# Records are frozen, so the common ones are made once and shared: a flag given as True or False (or absent),
# a choice given as a plain string (the options of the registry, so a bounded set)
_TRUE_RECORD, _FALSE_RECORD = InputRecord(True, True, None), InputRecord(False, False, None)
_CHOICE_RECORDS: dict[str, InputRecord] = {}
_NUMBERS = frozenset({int, float})  # the value types the fast paths accept as they are (bool is not int here)
_NO_POINTS: dict[str, Any] = {}  # a table the plan holds no mapping of: `lookup` reads it


def converter(units: UnitsFile, exact: bool) -> Converter:
    """The converter of this unit data (made once; checked by identity, so edited unit data gets its own)."""
    c = _CONVERTERS.get((id(units), exact))
    if c is None or c.units is not units:
        if len(_CONVERTERS) > 64:
            _CONVERTERS.clear()
        c = _CONVERTERS[(id(units), exact)] = Converter(units, exact)
    return c


# the unit data of the last Context and its two converters (benchmark, published), replaced whole (so a reader never
# pairs one registry's units with another's converters): measured 50 ns against 150 ns for `converter()` per Context
_LAST: list[tuple[Any, Any, Any]] = [(None, None, None)]


class Context:
    """What a calculator function may read. Every accessor records the input it used."""

    __slots__ = ("calc", "slug", "entities", "variant", "benchmark", "reg", "units", "conv", "record",
                 "subs", "_sub_compute", "_specs", "_fields", "_consts", "_pl", "_cache")

    def __init__(self, calc: Calculator, entities: dict[str, Any], variant: str, reg: Registry,
                 sub_compute: SubCompute, pl: Plan | None = None, cache: dict[str, Result] | None = None):
        if pl is None or pl.calc is not calc:
            pl = plan(calc)
        self._pl = pl
        self.calc = calc
        self.slug = pl.slug
        self.entities = entities
        self.variant = variant
        self.benchmark = benchmark = variant == "benchmark"
        self.reg = reg
        units = reg.units
        last = _LAST[0]
        if units is not last[0]:
            if units is None:  # the loader reports a missing units.yaml, and compute refuses such a registry
                raise ValueError("the registry has no unit data (formulas/units.yaml)")
            last = _LAST[0] = (units, converter(units, False), converter(units, True))
        self.units: UnitsFile = units
        self.conv = last[1] if benchmark else last[2]
        self.record: dict[str, InputRecord] = {}
        self._sub_compute = sub_compute
        self.subs: dict[str, Result] | None = None  # the dependencies this computation used (made on first use)
        self._cache = cache  # every dependency's result computed so far for the same entities, shared with nested ones
        self._specs = pl.specs
        self._fields = pl.fields
        self._consts = pl.consts

    # ------------------------------------------------------------------ registry data
    def const(self, name: str) -> Any:
        try:
            return self._consts[name]  # the plan's copy of `calc.constants[name].value`
        except KeyError:
            raise KeyError(f"{self.slug}: constant {name!r} is not in the registry entry") from None

    def table(self, name: str) -> Table:
        try:
            return self.calc.tables[name]
        except KeyError:
            raise KeyError(f"{self.slug}: table {name!r} is not in the registry entry") from None

    def band(self, name: str, x: float) -> float | int:
        bands = self._pl.bands.get(name)
        if bands is not None:  # the plan's bands, tested as `Band.holds` tests them; no band: the table's own answer
            for ge, gt, le, lt, value in bands:
                if (ge is None or x >= ge) and (gt is None or x > gt) and (le is None or x <= le) \
                        and (lt is None or x < lt):
                    return value
        t = self.table(name)
        try:
            return t.band(x)
        except LookupError:
            raise OutOfRange(self.slug, t.variable, f"{x!r} falls in no band of table {name!r}") from None

    def analyte(self, name: str) -> Analyte:
        """The shared unit data (formulas/units.yaml) of the analyte an input names."""
        spec = self.spec(name)
        if spec.analyte is None:
            raise KeyError(f"{self.slug}: input {name!r} names no analyte in the registry entry")
        return self.units.analytes[spec.analyte]

    def lookup(self, name: str, key: str | None) -> float | int:
        mapping = self._pl.maps.get(name)
        if mapping is not None and key in mapping:  # the plan's copy of the table's lookup or points
            return mapping[key]
        t = self.table(name)
        mapping = t.lookup if t.lookup is not None else t.points
        assert mapping is not None
        if key in mapping:
            return mapping[key]
        if t.default is not None:
            return t.default
        raise BadValue(self.slug, t.variable or name, f"{key!r} is not one of: {', '.join(map(repr, mapping))}")

    def r(self, x: float) -> float:
        """Round an intermediate step as the benchmark does (identity in the published variant)."""
        return round_number(x, self.conv.number_rule) if self.benchmark else x

    # ------------------------------------------------------------------ raw access
    def spec(self, name: str):
        try:
            return self._specs[name]
        except KeyError:
            raise KeyError(f"{self.slug}: input {name!r} is not declared in the registry entry") from None

    def has(self, name: str) -> bool:
        return name in self.entities and name in self._specs  # a dependency sees its caller's entities

    def raw(self, name: str) -> Any:
        if name in self._specs and name in self.entities:
            return self.entities[name]
        spec = self.spec(name)  # an input the entry does not declare is a KeyError, given or not
        if spec.required:
            raise MissingInput(self.slug, name, "required input is missing")
        return spec.default

    def note(self, name: str, given: Any, value: Any, unit: str | None) -> Any:
        """Record an input as given and as used (for a calculator that reads a special form itself)."""
        self.record[name] = new_tuple(InputRecord, (given, value, unit))
        return value

    def check_range(self, name: str, value: float, unit: str | None, given: tuple[Any, str] | None = None,
                    linear: bool = True) -> float:
        """Refuse a non-finite value or one outside the input's plausible range (canonical unit). `given` is the
        (number, unit) as typed, when it was converted: the refusal then says it in that unit first, and, for a
        conversion by a factor (`linear`), the range in that unit too."""
        spec = self.spec(name)
        t = type(value)
        if not (t is float or t is int or (isinstance(value, (int, float)) and t is not bool)) or not isfinite(value):
            raise BadValue(self.slug, name, f"expected a finite number, got {value!r}")
        rng = spec.range
        if rng is not None:
            lo, hi = rng
            if not lo <= value <= hi:
                u = f" {unit}" if unit else ""
                if given is None or given[1] == (unit or ""):
                    raise OutOfRange(self.slug, name, f"{value}{u} is outside the plausible range {lo} to {hi}{u}")
                raise OutOfRange(self.slug, name, _out_of_range_as_typed(given, value, u, lo, hi, linear))
        return value

    def _pair(self, name: str) -> tuple[float, str]:
        given = self.raw(name)
        if not ((type(given) is list or isinstance(given, (list, tuple))) and len(given) == 2
                and isinstance(given[1], str)):
            raise BadValue(self.slug, name, f"expected [value, 'unit'], got {given!r}")
        v = given[0]
        t = type(v)
        if not (t is float or t is int) and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise BadValue(self.slug, name, f"expected a number as the value, got {v!r}")
        return v, normalise_unit(given[1])  # "μmol/L" (Greek mu) reads as the registry's "µmol/L"

    def _unit_pair(self, name: str) -> tuple[Any, float, str]:
        """A [value, unit] input with its unit accepted: (its plan fields, value, unit). The common case (a list of a
        number and a unit spelled as the input accepts it, which normalising leaves as it is) is read inline, here and
        in `measurement`, `quantity` and `weight` (a call less per input: measured 680 machine instructions, about 1 %
        of a case); anything else goes through `_pair`'s checks and normalisation."""
        f = self._fields.get(name)
        given = self.entities.get(name, _ABSENT) if f is not None else _ABSENT
        if type(given) is list and len(given) == 2:
            v, unit = given
            if type(unit) is str and unit in f[1] and type(v) in _NUMBERS:  # type: ignore[index]
                return f, v, unit
        v, unit = self._pair(name)
        fields = self._fields[name] if f is None else f
        if fields[1] and unit not in fields[1]:
            unit = self._read_unit(name, unit)  # 'lb' is 'lbs', 'umol/L' is 'µmol/L' (formulas/units.yaml)
            self._accept(name, unit)
        return fields, v, unit

    def _read_unit(self, name: str, unit: str) -> str:
        """The registry's spelling of a unit this input accepts (`Converter.read_unit`); one with two readings is
        refused naming both."""
        try:
            return self.conv.read_unit(unit, self._pl.parts.get(name, []))
        except AmbiguousSpelling as e:
            raise AmbiguousValue(self.slug, name, str(e)) from None

    # ------------------------------------------------------------------ typed accessors
    def quantity(self, name: str) -> float:
        """A [value, unit] concentration converted to the input's canonical unit."""
        f = self._fields.get(name)
        given = self.entities.get(name, _ABSENT) if f is not None else _ABSENT
        if (type(given) is list and len(given) == 2 and type(given[1]) is str
                and given[1] in f[1]  # type: ignore[index]  # (`_unit_pair`'s common case, inline)
                and type(given[0]) in _NUMBERS):
            v, unit = given
        else:
            f, v, unit = self._unit_pair(name)
        _, _, canonical, rng = f  # type: ignore[misc]
        if unit == (canonical or ""):  # already in the canonical unit: the converter returns it as it is
            out = v
        else:
            mm, analyte = self._pl.chemistry[name]  # (plain copies: a registry model's attribute read measured 28 ns
            val = None  # against 7 ns; five a conversion)
            if analyte:
                a_mm, val = self.conv.analyte(analyte)
                mm = mm if mm is not None else a_mm
            try:
                out = self.conv.concentration(v, unit, canonical or "", mm, val)
            except ConversionError as e:
                raise UnknownUnit(self.slug, name, str(e)) from None
        if rng is None or not rng[0] <= out <= rng[1] or not isfinite(out):  # no range, outside it, or not finite
            self.check_range(name, out, canonical, (v, unit))
        self.record[name] = new_tuple(InputRecord, ([v, unit], out, canonical))
        return out

    def measurement(self, name: str) -> float:
        """A [value, unit] read in its canonical unit (the unit string must be an accepted spelling)."""
        f = self._fields.get(name)
        given = self.entities.get(name, _ABSENT) if f is not None else _ABSENT
        if (type(given) is list and len(given) == 2 and type(given[1]) is str
                and given[1] in f[1]  # type: ignore[index]  # (`_unit_pair`'s common case, inline)
                and type(given[0]) in _NUMBERS):
            v, unit = given
        else:
            f, v, unit = self._unit_pair(name)
        canonical, rng = f[2], f[3]  # type: ignore[index]
        if rng is None or not rng[0] <= v <= rng[1] or not isfinite(v):  # no range, outside it, or not finite
            self.check_range(name, v, canonical)
        self.record[name] = new_tuple(InputRecord, ([v, unit], v, canonical))
        return v

    def _accept(self, name: str, unit: str) -> None:
        spec = self.spec(name)
        if spec.accepted_units and unit not in spec.accepted_units:
            raise UnknownUnit(self.slug, name, f"unknown unit {unit!r}; accepted: {', '.join(spec.accepted_units)}"
                              + (unit_hint(unit, spec.accepted_units) or lookalike_note(unit, spec.accepted_units)))

    def _read_parts(self, name: str, given: Any) -> list[Any]:
        """A multi-part value ([70, 'yrs'], [5, 'feet', 10, 'inches']) with each unit read as `_read_unit` reads it."""
        accepted = self._pl.parts.get(name)
        out = list(given)
        if accepted:
            for i in range(1, len(out), 2):
                if isinstance(out[i], str) and out[i] not in accepted:
                    out[i] = self._read_unit(name, out[i])
        return out

    def _accept_parts(self, name: str, units: list[Any]) -> None:
        """A multi-part value ([5, 'ft', 10, 'in']) passes when its joined form ('ft+in') or each unit is accepted."""
        accepted = self.spec(name).accepted_units
        if not accepted or "+".join(map(str, units)) in accepted:
            return
        for unit in units:
            if unit not in accepted:
                raise UnknownUnit(self.slug, name, f"unit {unit!r} is not accepted for this input; accepted: "
                                  f"{', '.join(accepted)}" + unit_hint(unit, accepted))

    def number(self, name: str) -> float:
        given = self.raw(name)
        if isinstance(given, bool) or not isinstance(given, (int, float)):
            raise BadValue(self.slug, name, f"expected a bare number, got {given!r}")
        self.check_range(name, given, self.spec(name).unit)
        return self.note(name, given, given, self.spec(name).unit)

    def flag(self, name: str) -> bool:
        """A boolean; the strings 'True'/'False' count as booleans, absence as the registry default."""
        given = self.entities.get(name, _ABSENT)
        if given is _ABSENT or name not in self._specs:  # not given (or not this calculator's input): an optional
            given = self._pl.absent_flags.get(name, _ABSENT)  # flag's default
        if given is True:
            self.record[name] = _TRUE_RECORD
            return True
        if given is False:
            self.record[name] = _FALSE_RECORD
            return False
        return self._flag(name, given)

    def _flag(self, name: str, given: Any) -> bool:
        """`flag` beyond a given True or False: a default, None, the strings 'True'/'False', or a refusal."""
        if given is _ABSENT:  # not given: the registry's default of an optional input (`raw` refuses the rest)
            spec = self._specs.get(name)
            given = spec.default if spec is not None and not spec.required else self.raw(name)
        if given is None:
            given = False
        if given is True or given is False:
            self.record[name] = _TRUE_RECORD if given else _FALSE_RECORD
            return given
        try:
            out = read_flag(self.units, given)  # 'True', 'yes', 'N', 1 (formulas/units.yaml `spellings.booleans`)
        except AmbiguousSpelling as e:
            raise AmbiguousValue(self.slug, name, str(e)) from None
        if out is not True and out is not False:
            raise BadValue(self.slug, name, f"expected true/false (or 'True'/'False', 'yes'/'no'), got {given!r}")
        self.record[name] = new_tuple(InputRecord, (given, out, None))
        return out

    def flags(self, names: Iterable[str]) -> dict[str, bool]:
        """Several flags, read in order as `flag` reads each: {name: met}."""
        specs, entities, record, absent = self._specs, self.entities, self.record, self._pl.absent_flags
        out = {}
        for name in names:
            given = entities.get(name, _ABSENT)
            if given is _ABSENT or name not in specs:  # not given (or not this calculator's input, which a dependency
                given = absent.get(name, _ABSENT)  # sees among its caller's entities): an optional flag's default
            if given is True:
                record[name] = _TRUE_RECORD
                out[name] = True
            elif given is False:
                record[name] = _FALSE_RECORD
                out[name] = False
            else:
                out[name] = self._flag(name, given)
        return out

    def points(self, met: dict[str, bool], table: str = "points") -> float:
        """The sum of `table`'s weights of the criteria met, in order (a criterion the table lacks: `lookup`)."""
        mapping = self._pl.maps.get(table, _NO_POINTS)
        total: float = 0
        for name, yes in met.items():
            if yes:
                total += mapping[name] if name in mapping else self.lookup(table, name)
        return total

    def choice(self, name: str) -> str | None:
        options = self._pl.options.get(name)
        given = self.entities.get(name, _ABSENT) if options is not None else _ABSENT
        if type(given) is str and given in options:  # type: ignore[operator]  # the common case: an option
            rec = _CHOICE_RECORDS.get(given)
            if rec is not None:
                self.record[name] = rec
                return given
        return self._choice(name)

    def _choice(self, name: str) -> str | None:
        """`choice` beyond an option seen before: an absent or None value, a refusal, a record made."""
        spec = self.spec(name)
        given = self.entities.get(name, _ABSENT)
        if given is _ABSENT:
            given = self.raw(name)
        if given is None and not spec.required:
            return self.note(name, None, None, None)
        if not isinstance(given, str) or given not in spec.options:
            if isinstance(given, str):  # a code or another case ('F', 'female')
                try:
                    read = read_choice(self.units, spec, given)
                except AmbiguousSpelling as e:
                    raise AmbiguousValue(self.slug, name, str(e)) from None
                if read in spec.options:
                    return self.note(name, given, read, None)
            raise BadValue(self.slug, name, f"{given!r} is not one of: {', '.join(map(repr, spec.options))}")
        rec = _CHOICE_RECORDS.get(given) if type(given) is str else None
        if rec is None:
            rec = new_tuple(InputRecord, (given, given, None))
            if type(given) is str and len(_CHOICE_RECORDS) < 4096:
                _CHOICE_RECORDS[given] = rec
        self.record[name] = rec
        return given

    def date(self, name: str) -> dt.date:
        given = self.raw(name)
        try:
            m, d, y = (int(p) for p in str(given).split("/"))
            out = dt.date(y, m, d)
        except (ValueError, TypeError):
            raise BadValue(self.slug, name, f"expected a date as 'MM/DD/YYYY', got {given!r}") from None
        return self.note(name, given, out, None)

    def age(self, name: str = "age") -> float:
        f = self._fields.get(name)
        given = self.entities.get(name, _ABSENT) if f is not None else _ABSENT
        if (type(given) is list and len(given) == 2 and type(given[0]) in _NUMBERS and type(given[1]) is str
                and f is not None and (not f[1] or given[1] in f[1])):  # the common case: [54, 'years'], accepted
            if "year" in given[1]:  # what the converter reads first: the number is the age in years
                out = given[0]
            else:
                try:
                    out = self.conv.age_years(given)
                except ConversionError as e:
                    raise UnknownUnit(self.slug, name, str(e)) from None
            rng = f[3]
            if rng is None or not rng[0] <= out <= rng[1] or not isfinite(out):  # (whole years: not a factor)
                self.check_range(name, out, "years", (given[0], given[1]), linear=False)
            self.record[name] = new_tuple(InputRecord, (given, out, "years"))
            return out
        given = self.raw(name)
        if not isinstance(given, (list, tuple)) or any(isinstance(x, bool) for x in given) or not all(
            isinstance(x, (int, float)) for x in given[0::2]
        ):
            raise BadValue(self.slug, name, f"expected an age such as [54, 'years'], got {given!r}")
        parts = self._read_parts(name, given)
        self._accept_parts(name, parts[1::2])
        try:
            out = self.conv.age_years(parts)
        except ConversionError as e:
            raise UnknownUnit(self.slug, name, str(e)) from None
        self.check_range(name, out, "years")
        return self.note(name, given, out, "years")

    def weight(self, name: str = "weight") -> float:
        f = self._fields.get(name)
        given = self.entities.get(name, _ABSENT) if f is not None else _ABSENT
        if (type(given) is list and len(given) == 2 and type(given[1]) is str
                and given[1] in f[1]  # type: ignore[index]  # (`_unit_pair`'s common case, inline)
                and type(given[0]) in _NUMBERS):
            v, unit = given
        else:
            f, v, unit = self._unit_pair(name)
        rng = f[3]  # type: ignore[index]
        try:
            out = self.conv.weight_kg(v, unit)
        except ConversionError as e:
            raise UnknownUnit(self.slug, name, str(e) + " (the benchmark's reference reads any other string as kg; "
                              "we refuse to guess)") from None
        if rng is None or not rng[0] <= out <= rng[1] or not isfinite(out):  # no range, outside it, or not finite
            self.check_range(name, out, "kg", (v, unit))
        self.record[name] = new_tuple(InputRecord, ([v, unit], out, "kg"))
        return out

    def height(self, name: str = "height", unit: str = "m") -> float:
        f = self._fields.get(name)
        given = self.entities.get(name, _ABSENT) if f is not None else _ABSENT
        if not (type(given) is list and len(given) == 2 and type(given[1]) is str and type(given[0]) in _NUMBERS
                and f is not None and (not f[1] or given[1] in f[1])):  # else the general checks, in their order
            given = self.raw(name)
            if not isinstance(given, (list, tuple)) or not given or isinstance(given[0], bool) or not isinstance(
                given[0], (int, float)
            ):
                raise BadValue(self.slug, name,
                               f"expected [value, 'cm'|'m'|'in'|'ft'] or [ft, 'ft', in, 'in'], got {given!r}")
            given_parts = self._read_parts(name, given)
            self._accept_parts(name, given_parts[1::2])
        else:
            given_parts = given  # a two-part list: the converter reads it without changing it
        try:
            out = self.conv.height(given_parts, unit)
        except (ConversionError, TypeError) as e:
            raise UnknownUnit(self.slug, name, str(e)) from None
        rng = f[3] if f is not None else self.spec(name).range
        if rng is not None:  # ranges of heights are written in metres
            metres = out * self.conv.heights[unit]
            if not rng[0] <= metres <= rng[1] or not isfinite(metres):
                typed = (given_parts[0], given_parts[1]) if len(given_parts) == 2 else None
                self.check_range(name, metres, "m", typed)
        self.record[name] = new_tuple(InputRecord, (given, out, unit))
        return out

    def temperature(self, name: str) -> float:
        _, v, unit = self._unit_pair(name)
        try:
            out = self.conv.temperature_c(v, unit)
        except ConversionError as e:
            raise UnknownUnit(self.slug, name, str(e)) from None
        self.check_range(name, out, "°C", (v, unit), linear=False)
        return self.note(name, [v, unit], out, "°C")

    def count_per_litre(self, name: str) -> float:
        _, v, unit = self._unit_pair(name)
        try:
            out = self.conv.count_per_litre(v, unit)
        except ConversionError as e:
            raise UnknownUnit(self.slug, name, str(e)) from None
        spec = self.spec(name)
        if spec.range is not None:  # ranges of counts are written per litre
            self.check_range(name, out, "/L")
        return self.note(name, [v, unit], out, "/L")

    # ------------------------------------------------------------------ kernel helpers
    # A calculator's kernel runs on this reader (one patient) and on `vectorised.Columns` (arrays, one value per
    # row), which has the same methods with numpy semantics: a branch, band or clamp is written once through them.
    def choice_is(self, name: str, option: str | None) -> bool:
        """Whether the choice `name` is `option`."""
        return self.choice(name) == option

    def any_flag(self, *names: str) -> bool:
        """`flag(a) or flag(b) ...`: read in order until one is met (as `or` reads them)."""
        return any(self.flag(n) for n in names)

    @staticmethod
    def is_none(x: Any) -> bool:
        """Whether a choice read is None (an optional choice not given)."""
        return x is None

    @staticmethod
    def where(cond: Any, yes: Any, no: Any) -> Any:
        """`yes if cond else no` (numpy's `where` over arrays)."""
        return yes if cond else no

    @staticmethod
    def select(cases: Iterable[tuple[Any, Any]], default: Any) -> Any:
        """The value of the first case whose condition holds, else `default` (numpy's `select` over arrays). A
        condition or value may be a function of no arguments: it is called only when reached (a condition) or
        chosen (a value), so an input or dependency is read only when the patient's branch needs it; over arrays
        a refusal inside it counts only for the rows that take that branch."""
        for cond, value in cases:
            if cond() if callable(cond) else cond:
                return value() if callable(value) else value
        return default() if callable(default) else default

    def if_given(self, name: str, read: Callable[[], Any], default: Any) -> Any:
        """`read()` when the optional input `name` is given, else `default`."""
        return read() if self.has(name) else default

    def require(self, name: str, message: str) -> None:
        """Refuse the patient (`MissingInput`) when `name` is not given."""
        if not self.has(name):
            raise MissingInput(self.slug, name, message)

    def unit_is(self, name: str, unit: str) -> bool:
        """Whether the [value, unit] input `name` was given in `unit` (in the registry's spelling, as `_pair` reads
        it: "μmol/L" with a Greek mu is "µmol/L")."""
        given = self.entities.get(name) if name in self._specs else None
        return isinstance(given, (list, tuple)) and len(given) == 2 and isinstance(given[1], str) \
            and normalise_unit(given[1]) == unit

    def note_as_given(self, name: str, value: Any, unit: str | None) -> Any:
        """Record an input as given (the entity itself) and as used."""
        return self.note(name, list(self.raw(name)), value, unit)

    @staticmethod
    def add_days(day: dt.date, days: Any) -> dt.date:
        return day + dt.timedelta(days=days)

    @staticmethod
    def days_between(a: dt.date, b: dt.date) -> int:
        return (a - b).days

    def given_number(self, name: str) -> float:
        """The number of a [value, unit] input as given (no conversion, no range check)."""
        return self._pair(name)[0]

    def accept_unit(self, name: str, unit: str) -> None:
        """Refuse `unit` unless the input accepts it (an input read in a unit the formula converts itself)."""
        self._accept(name, unit)

    recording = False  # True on the recording reader (`working.WorkingContext`): a kernel with several steps in a row
    # checks it once (`if ctx.recording:`) rather than making a call per step that does nothing here

    @staticmethod
    def step(label: str, value: Any, unit: str | None = None, *args: Any) -> Any:
        """A step of the working the kernel names itself (`working.WorkingContext` records it, its label's "{}"
        filled with `args` and "{name}" with the registry constant `name`): here the value, nothing formatted."""
        return value

    def scalar_only(self, reason: str) -> None:
        """Marks a branch that has no columnar form yet (`Columns` hands the table to the row loop); here nothing."""

    @staticmethod
    def minimum(a: Any, b: Any) -> Any:
        return min(a, b)

    @staticmethod
    def maximum(a: Any, b: Any) -> Any:
        return max(a, b)

    @staticmethod
    def clip(x: Any, lo: Any, hi: Any) -> Any:
        """`min(max(x, lo), hi)`."""
        return min(max(x, lo), hi)

    @staticmethod
    def pow(a: Any, b: Any) -> Any:
        return a ** b

    @staticmethod
    def log(a: Any) -> float:
        return math.log(a)

    @staticmethod
    def exp(a: Any) -> float:
        return math.exp(a)

    @staticmethod
    def sqrt(a: Any) -> float:
        return math.sqrt(a)

    @staticmethod
    def trunc(a: Any) -> int:
        return int(a)

    @staticmethod
    def round_to(x: Any, step: Any) -> Any:
        """`rounding.round_value(x, step)` (a rounding step the formula itself takes)."""
        return round_value(x, step)

    def refuse(self, cond: Any, variable: str | None, message: Callable[[], str],
               error: type[CalculatorError] = OutOfRange) -> None:
        """Refuse the patient (`error` naming `variable`) when `cond` holds; over arrays, the rows where it holds."""
        if cond:
            raise error(self.slug, variable, message())

    # ------------------------------------------------------------------ dependencies
    def sub(self, slug: str) -> float:
        """The result of a calculator this one depends on, from the same entities and variant."""
        if slug not in self._pl.depends_on:
            raise KeyError(f"{self.slug}: {slug!r} is not in depends_on; add it to the registry entry")
        if self._cache is None:
            self._cache = {}
        res = self._cache.get(slug)
        if res is None:
            other = self.reg.calculators[slug]
            try:  # it reads its own inputs from these entities
                res = self._sub_compute(other, self.entities, self.variant, self.reg, True, self._cache)
            except CalculatorError as e:  # report it under the calculator the user asked for
                raise type(e)(self.slug, e.variable, f"{e.message} (while computing {slug})") from None
            self._cache[slug] = res
        if self.subs is None:
            self.subs = {}
        for s in res.subs:
            self.subs.setdefault(s.calculator, s)
        self.subs.setdefault(slug, res)
        for k, rec in res.inputs.items():
            self.record.setdefault(k, rec)
        if isinstance(res.value, (dt.date, tuple)):
            raise KeyError(f"{self.slug}: {slug!r} gives a {type(res.value).__name__}, not a number to compute with")
        return res.value

    # ------------------------------------------------------------------ dose inputs (special forms)
    # Inputs that carry a drug and its dose (morphine milligram equivalents, steroid conversion), read here so that a
    # calculator's kernel runs on this reader and on `vectorised.Columns` alike; the wording of every refusal is the
    # one the dosing calculators gave when they read these forms themselves.
    def given_drugs(self, dose: str, frequency: str, none_given: str) -> list[str]:
        """The drugs whose `<drug><dose>` input is given, in the order given; a `<drug><frequency>` given without
        its dose is a `MissingInput` (an extraction error, not zero), and so is no dose at all (`none_given`)."""
        entities = self.entities
        drugs = [k[: -len(dose)] for k in entities if k.endswith(dose)]
        for k in entities:
            if k.endswith(frequency) and k[: -len(frequency)] not in drugs:
                raise MissingInput(self.slug, k[: -len(frequency)] + dose, f"'{k}' is given without its dose")
        if not drugs:
            raise MissingInput(self.slug, None, none_given)
        return drugs

    def _finite_number(self, name: str, v: Any, what: str) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise BadValue(self.slug, name, f"expected a number as the {what}, got {v!r}")
        if not math.isfinite(v):
            raise BadValue(self.slug, name, f"expected a finite number as the {what}, got {v!r}")
        return v

    def _mass(self, name: str, value: float, unit: str, target: str) -> float:
        """A mass in `unit` converted to `target` (mass units only; no unit normalised), with the benchmark's
        rounding chain."""
        spec = self.spec(name)
        if spec.accepted_units and unit not in spec.accepted_units:
            raise UnknownUnit(self.slug, name, f"unknown unit {unit!r}; accepted: {', '.join(spec.accepted_units)}"
                              + unit_hint(unit, spec.accepted_units))
        try:
            return self.conv.mass(value, unit, target, None, None)
        except ConversionError as e:
            raise UnknownUnit(self.slug, name, str(e)) from None

    def _in_mass(self, name: str, value: float, unit: str, target: str) -> float:
        """`_mass` for an accepted unit: a mass already in `target` is the value itself, as the converter gives it."""
        if unit == target and unit in self.units.mass:
            return value
        return self._mass(name, value, unit, target)

    def dose(self, name: str, unit: str) -> float:
        """One [amount, 'unit'] dose in `unit` (a mass unit), range-checked in the input's canonical unit."""
        given = self.raw(name)
        if not (isinstance(given, (list, tuple)) and len(given) == 2 and isinstance(given[1], str)):
            raise BadValue(self.slug, name, f"expected [amount, 'unit'], e.g. [10, 'mg'], got {given!r}")
        amount, src = given
        amount, in_canonical, canonical = self._checked_dose(name, amount, src, "amount")
        out = in_canonical if unit == canonical else self._in_mass(name, amount, src, unit)
        self.record[name] = new_tuple(InputRecord, (given, out, unit))
        return out

    def doses_per_day(self, name: str, dose: str) -> float:
        """The [n, 'per day'] number of doses per day that the dose input `dose` needs (missing: `MissingInput`)."""
        f = self._fields.get(name)
        given = self.entities.get(name, _ABSENT) if f is not None else _ABSENT
        if given is _ABSENT:
            raise MissingInput(self.slug, name, f"'{dose}' needs its number of doses per day, e.g. [2, 'per day']")
        if not (isinstance(given, (list, tuple)) and len(given) == 2 and isinstance(given[1], str)):
            raise BadValue(self.slug, name, f"expected [n, 'per day'], got {given!r}")
        n = given[0]
        t = type(n)
        if not (t is float or t is int) or not math.isfinite(n):
            n = self._finite_number(name, n, "number of doses per day")
        spec, accepted, _, rng = f  # type: ignore[misc]  # (given: f is not None)
        if accepted and given[1] not in accepted:
            raise UnknownUnit(self.slug, name, f"unknown unit {given[1]!r}; accepted: {', '.join(spec.accepted_units)}")
        if rng is None or not rng[0] <= n <= rng[1] or not math.isfinite(n):
            self.check_range(name, n, "per day")
        self.record[name] = new_tuple(InputRecord, (given, n, "per day"))
        return n

    def named_dose(self, name: str, table: str, form: str) -> tuple[str, float]:
        """A [drug, dose, 'unit'] input (`form` words it for a refusal): the drug, one of `table`'s keys (spelled
        exactly), and the dose in the input's unit (mass units only), range-checked."""
        given = self.raw(name)
        if not (isinstance(given, (list, tuple)) and len(given) == 3 and isinstance(given[0], str)
                and isinstance(given[2], str)):
            raise BadValue(self.slug, name, f"expected {form}, got {given!r}")
        drug, dose, unit = given
        keys = self.table(table).lookup or {}
        if drug not in keys:
            raise BadValue(self.slug, name, f"{drug!r} is not one of: {', '.join(map(repr, keys))} (names are case-sensitive)")
        _, out, canonical = self._checked_dose(name, dose, unit, "dose")
        self.record[name] = new_tuple(InputRecord, (given, out, canonical))
        return drug, out

    def _checked_dose(self, name: str, amount: Any, unit: str, what: str) -> tuple[float, float, str]:
        """A dose's (amount, the amount in the input's canonical mass unit, that unit): the amount a finite number
        (`what` words it), the unit one the input accepts, the converted amount in the input's range."""
        t = type(amount)
        if not (t is float or t is int) or not math.isfinite(amount):
            amount = self._finite_number(name, amount, what)
        _, accepted, canonical, rng = self._fields[name]
        canonical = canonical or "mg"
        if accepted and unit not in accepted:
            self._mass(name, amount, unit, canonical)  # (refuses the unit, in `_mass`'s words)
        out = self._in_mass(name, amount, unit, canonical)
        if rng is None or not rng[0] <= out <= rng[1] or not math.isfinite(out):
            self.check_range(name, out, canonical)
        return amount, out, canonical


def _out_of_range_as_typed(given: tuple[Any, str], value: float, u: str, lo: float, hi: float, linear: bool) -> str:
    """'1500 lbs (680.388 kg) is outside the plausible range 0.3 to 650 kg (0.661387 to 1433.01 lbs)'."""
    number, typed = given
    text = f"{number} {typed} ({value:.6g}{u}) is outside the plausible range {lo} to {hi}{u}"
    if linear and isinstance(number, (int, float)) and number and value:
        factor = value / number  # the conversion's own factor, as applied to this value
        text += f" ({lo / factor:.6g} to {hi / factor:.6g} {typed})"
    return text
