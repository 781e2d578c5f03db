"""Unit conversion shared by every calculator, with the benchmark's rounding chain as an option.

The benchmark's reference rounds every intermediate step of a conversion with `round_number`
(amount, then grams, then the target mass unit, then the volume step). The `benchmark` variant
copies that chain so results agree to the digit; the `published` variant converts exactly.
All factors come from `formulas/units.yaml`.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from registry.schema import UnitsFile
from registry.spellings import MICRO_SIGN, AmbiguousSpelling, normalise_unit, read_unit, unit_key, unit_readings  # noqa: F401
from solver.library.rounding import Digits, as_written, round_number

__all__ = ["round_number"]  # (re-exported: the rounding itself lives in solver.library.rounding)


def lookalike_note(unit: str, accepted: list[str]) -> str:
    """Name the characters of `unit` that no accepted spelling uses (a refusal that looks identical says why)."""
    known = set("".join(accepted))
    odd = [c for c in dict.fromkeys(unit) if ord(c) > 127 and c not in known]
    if not odd:
        return ""
    names = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}" for c in odd)
    return f" (it contains {names}, which no accepted spelling uses)"


class ConversionError(ValueError):
    """A unit string that cannot be converted; the caller names the variable."""


@dataclass(frozen=True)
class Converter:
    units: UnitsFile
    exact: bool  # True: published variant (no intermediate rounding)
    # (src, tgt) -> the rounded ratio of two units of one table: constants of the unit data, worked out once
    _ratios: dict[tuple[str, str, str], float] = field(default_factory=dict, init=False, repr=False, compare=False)
    number_rule: Digits = field(init=False, repr=False, compare=False)  # units.rounding, read once (a plain object)
    _families: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)  # unit -> g, mol, eq
    _spellings: dict[tuple[str, tuple[str, ...]], str] = field(default_factory=dict, init=False, repr=False,
                                                               compare=False)  # (given, accepted) -> read
    _analytes: dict[str, tuple[float | None, int | None]] = field(default_factory=dict, init=False, repr=False,
                                                                   compare=False)  # name -> (molar mass, valence)
    # the unit data's tables read on every case, held here as plain attributes (a read of the model's attribute measured
    # 28 ns against 7 ns): metres, kilograms and litres per unit
    heights: dict[str, float] = field(init=False, repr=False, compare=False)
    weights: dict[str, float] = field(init=False, repr=False, compare=False)
    volumes: dict[str, float] = field(init=False, repr=False, compare=False)
    masses: dict[str, float] = field(init=False, repr=False, compare=False)  # mass and amount units, and mEq

    def __post_init__(self) -> None:
        object.__setattr__(self, "number_rule", Digits.of(self.units.rounding))  # `r` runs several times per case
        object.__setattr__(self, "heights", self.units.height)
        object.__setattr__(self, "weights", self.units.weight)
        object.__setattr__(self, "volumes", self.units.volume)
        object.__setattr__(self, "masses", {**self.units.mass, **self.units.amount, "mEq": 1.0})

    def table_unit(self, unit: str, table: Mapping[str, object]) -> str:
        """A unit (or the part of one) a conversion table lacks, in the spelling the table has when the registry's
        aliases read it as one of its units ('umol' as 'µmol', 'lb' as 'lbs'); else as given, for the caller to
        refuse. So a caller that converts with this converter reads the aliases too (a table's unit column)."""
        if unit in table:
            return unit
        try:
            return self.read_unit(unit, list(table))
        except AmbiguousSpelling as e:
            raise ConversionError(str(e)) from None

    def read_unit(self, unit: str, accepted: Sequence[str]) -> str:
        """The registry's spelling of `unit` among `accepted` (aliases of formulas/units.yaml, case): the one place a
        unit's spelling is read, for `compute`, the command line, the tools and a column of a table alike (each
        distinct spelling once per converter). Raises `AmbiguousSpelling` for a spelling with two readings."""
        key = (unit, tuple(accepted))
        hit = self._spellings.get(key)
        if hit is None:
            hit = read_unit(self.units, unit, accepted)
            if len(self._spellings) < 4096:
                self._spellings[key] = hit
        return hit

    def analyte(self, name: str) -> tuple[float | None, int | None]:
        """(molar mass, valence) of an analyte of the unit data (a KeyError for one it lacks), read once."""
        known = self._analytes.get(name)
        if known is None:
            a = self.units.analytes[name]
            known = self._analytes[name] = (a.molar_mass, a.valence)
        return known

    def r(self, x: float) -> float:
        return x if self.exact else round_number(x, self.number_rule)

    def written(self, x: float) -> float:
        """An exact conversion read as the decimal it stands for, so it stays on a band edge it lands on."""
        return as_written(x)

    # ------------------------------------------------------------------ concentrations
    def concentration(self, value: float, src: str, tgt: str, molar_mass: float | None, valence: int | None) -> float:
        if src == tgt:
            return value
        try:
            sm, sv = src.split("/")
            tm, tv = tgt.split("/")
        except ValueError:
            raise ConversionError(f"unit {src!r} is not of the form mass/volume") from None
        vol = self.volumes
        if sv not in vol or tv not in vol or sm not in self.masses:  # an alias ('umol/L', 'mg/dl'), or refused
            sm, sv = self._concentration_parts(src, sm, sv, tv)
        mass = value if sm == tm else self.mass(value, sm, tm, molar_mass, valence)
        if sv == tv:
            return self.r(mass)
        factor = self._ratios.get(("volume", sv, tv))
        if factor is None:
            factor = self._ratios[("volume", sv, tv)] = self.r(vol[sv] / vol[tv])
        return self.r(mass / factor)

    def _concentration_parts(self, src: str, sm: str, sv: str, tv: str) -> tuple[str, str]:
        """The mass and volume of a concentration unit the tables lack, as the registry's aliases read them; an unknown
        volume is refused here (an unknown mass by `mass`)."""
        vol = self.volumes
        sm, sv = self.table_unit(sm, self.masses), self.table_unit(sv, vol)
        for v in (sv, tv):
            if v not in vol:
                raise ConversionError(f"unknown volume unit {v!r} in {src!r}; accepted volumes: {', '.join(vol)}")
        return sm, sv

    def _family(self, unit: str) -> str:
        fam = self._families.get(unit)
        if fam is None:
            fam = self._families[unit] = self._find_family(unit)
        return fam

    def _find_family(self, unit: str) -> str:
        if unit in self.units.mass:
            return "g"
        if unit in self.units.amount:
            return "mol"
        if unit == "mEq":
            return "eq"
        raise ConversionError(
            f"unknown mass or amount unit {unit!r}; accepted: {', '.join([*self.units.mass, *self.units.amount, 'mEq'])}"
        )

    def _same(self, value: float, src: str, tgt: str) -> float:
        if src == tgt:
            return value
        factor = self._ratios.get(("same", src, tgt))
        if factor is None:
            table = self.units.mass if src in self.units.mass else self.units.amount
            factor = self._ratios[("same", src, tgt)] = self.r(table[src] / table[tgt])
        return self.r(value * factor)

    def mass(self, value: float, src: str, tgt: str, molar_mass: float | None, valence: int | None) -> float:
        fs, ft = self._family(src), self._family(tgt)
        if fs == ft and fs != "eq":
            return self._same(value, src, tgt)
        if fs == ft:
            return value  # mEq -> mEq
        mm, val = molar_mass or 0.0, valence or 0  # each is checked below before the branch that needs it
        if "g" in (fs, ft) and molar_mass is None:
            raise ConversionError(f"no molar mass is known for converting {src} to {tgt}")
        if "eq" in (fs, ft) and valence is None:
            raise ConversionError(f"no valence is known for converting {src} to {tgt}")
        if fs == "mol" and ft == "g":
            grams = self.r(self._same(value, src, "mol") * mm)
            return self._same(grams, "g", tgt)
        if fs == "g" and ft == "mol":
            mol = self.r(self._same(value, src, "g") / mm)
            return self._same(mol, "mol", tgt)
        if fs == "mol" and ft == "eq":
            return self.r(self._same(value, src, "mmol") * val)
        if fs == "eq" and ft == "mol":
            return self._same(self.r(value / val), "mmol", tgt)
        if fs == "eq" and ft == "g":
            mol = self._same(self.r(value / val), "mmol", "mol")
            return self._same(self.r(mol * mm), "g", tgt)
        if fs == "g" and ft == "eq":
            mmol = self._same(self.r(self._same(value, src, "g") / mm), "mol", "mmol")
            return self.r(mmol * val)
        raise ConversionError(f"cannot convert {src} to {tgt}")

    # ------------------------------------------------------------------ body measures
    def weight_kg(self, value: float, unit: str) -> float:
        table = self.weights
        if unit not in table:
            unit = self.table_unit(unit, table)  # an alias ('lb'), or refused
            if unit not in table:
                raise ConversionError(f"unknown weight unit {unit!r}; accepted: {', '.join(table)}")
        return self.r(value * table[unit])

    def height(self, parts: list, target: str) -> float:
        """Height in m, cm or in from [v, unit] or [ft, 'ft', in, 'in'], with the registry's factors."""
        if len(parts) == 4:
            parts = self.fold_height(parts)
        if len(parts) != 2:
            raise ConversionError("a height is [value, unit] or [feet, 'ft', inches, 'in']")
        v, unit = parts
        if unit not in self.heights:
            raise ConversionError(f"unknown height unit {unit!r}; accepted: {', '.join(self.heights)}, "
                                  "or [ft, 'ft', in, 'in']")
        if unit == target:
            return v
        factor = self._ratios.get(("height", unit, target))
        if factor is None:
            factor = self._ratios[("height", unit, target)] = self.height_factor(unit, target)
        return self.r(v * factor)

    def fold_height(self, parts: list) -> list:
        """[feet, 'ft', inches, 'in'] as the one [inches, 'in'] the library reads it as (the registry's inches per
        foot); `formula convert` folds a four-part height with this same rule."""
        if len(parts) != 4 or parts[1] != "ft" or parts[3] != "in":
            raise ConversionError("a four-part height must be [feet, 'ft', inches, 'in']")
        return [parts[0] * self.units.length.inches_per_foot + parts[2], "in"]

    def height_factor(self, src: str, target: str) -> float:
        """One `src` in `target` units (m, cm or in). The benchmark turns metres into inches with its own
        rounded factor (`length.inches_per_metre`); the published variant converts exactly."""
        h, length = self.heights, self.units.length
        if target == "m":
            return h[src]
        if target == "cm":
            return h[src] / h["cm"]
        if target != "in":
            raise ConversionError(f"unknown target height unit {target!r}")
        if src == "ft":
            return length.inches_per_foot
        if src == "in":
            return 1
        return h[src] / h["in"] if self.exact else h[src] * length.inches_per_metre

    def temperature_c(self, value: float, unit: str) -> float:
        if unit in ("degrees celsius", "°C"):
            return value
        if unit in ("degrees fahrenheit", "°F"):
            t = self.units.temperature
            c = (value - t.fahrenheit_offset) / t.fahrenheit_per_celsius
            return self.written(c) if self.exact else self.r(c)
        raise ConversionError(
            f"unknown temperature unit {unit!r}; accepted: 'degrees celsius', 'degrees fahrenheit' "
            "(the benchmark's reference reads any other string as Fahrenheit; we refuse to guess)"
        )

    def age_years(self, parts: list) -> float:
        """Age in years from [n, unit, ...]: the first recognised pair decides, as in the benchmark."""
        if len(parts) < 2 or len(parts) % 2:
            raise ConversionError("an age is [number, unit] such as [54, 'years'] (pairs may repeat)")
        for i in range(0, len(parts), 2):
            n, unit = parts[i], parts[i + 1]
            if not isinstance(unit, str):
                break
            if "year" in unit:
                return n
            per = self.units.age
            if unit == "months":
                return n // per.months_per_year if not self.exact else n / per.months_per_year
            if unit == "weeks":
                return n // per.weeks_per_year if not self.exact else n / per.weeks_per_year
            if unit == "days":
                return 0 if not self.exact else n / (per.weeks_per_year * per.days_per_week)
        raise ConversionError(f"unknown age unit in {parts!r}; accepted: years, months, weeks, days")

    def count_per_litre(self, value: float, unit: str) -> float:
        vol = self.volumes
        if unit not in vol:
            raise ConversionError(
                f"unknown count unit {unit!r}: give the count per volume, e.g. [250000, 'µL'], "
                f"with a volume among {', '.join(vol)}"
            )
        if unit == "L":
            return value
        return self.r(self.r(vol["L"] / vol[unit]) * value)
