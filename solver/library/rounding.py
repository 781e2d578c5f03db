"""The one place a clinical result is rounded: half up or half to even, to a number of decimals.

`finishing(calc, variant)` decides once how a calculator's result is finished in a variant (the
publication's rule, the benchmark's `round_number`, a whole number, as it is, a date, weeks and
days); `finish` applies that decision to one value and `vectorised.finish` to an array, so the
scalar and the columnar path can never round a result differently.

A published calculator's rounding is registry data (`output.published_rounding`: mode, decimals,
source); this module applies it, to one value (`round_value`) or to a numpy array (`round_array`),
with identical results.

Modes:
- `half_up`: ties go away from zero, as the clinical sources compute (SAS `ROUND`, spreadsheet
  `ROUND`, the OPTN MELD definitions). A double is first read as the decimal it stands for, to
  `READ_DIGITS` significant digits, so 20.5 computed as 20.499999999999996 (float noise in a sum
  such as 1.33 + 9.84 + 3.33 + 6) and 2.675 (stored as 2.67499999999999982...) round as the
  decimals a person would write: 21 and 2.68. A value within one part in 10^12 of a tie is a tie.
- `half_even`: Python's `round` on the exact double, ties to even; the benchmark's reference code
  rounds this way (so 20.5 -> 20, and 2.675 -> 2.67 because the double lies below the tie).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any, Callable, Literal, Protocol

from registry.schema import Calculator, OutputKind, ResultRounding

if TYPE_CHECKING:  # numpy is imported by round_array alone: a one-case `formula solve` never loads it
    import numpy as np

Mode = Literal["half_up", "half_even"]
MODES: tuple[str, ...] = ("half_up", "half_even")
READ_DIGITS = 12  # significant digits a double is read to before rounding half up


class Rule(Protocol):
    """What a rounding rule gives: registry.schema.ResultRounding and `Step` satisfy it."""

    @property
    def mode(self) -> str: ...

    @property
    def decimals(self) -> int: ...


def round_value(x: float, rule: Rule) -> float:
    """`x` rounded by `rule`; non-finite values pass through unchanged (callers refuse them)."""
    return _round(float(x), rule.mode, rule.decimals)


# Python's `round(x, decimals)`, type kept (the benchmark's `round_number` rounds through this)
half_even: Callable[[float, int], float] = round


class NumberRule(Protocol):
    """The numbers of the benchmark's `round_number`: registry.schema.RoundingRule and `Digits` satisfy it."""

    @property
    def decimals(self) -> int: ...

    @property
    def significant_digits(self) -> int: ...

    @property
    def small_below(self) -> float: ...


@dataclass(frozen=True, slots=True)
class Digits:
    """units.yaml's rounding (a `RoundingRule`) as a plain object, for the engine, which reads it several times per
    case: a registry model's attribute read measured 28 ns against 7 ns for this one's."""

    decimals: int
    significant_digits: int
    small_below: float

    @classmethod
    def of(cls, rule: NumberRule) -> "Digits":
        return cls(rule.decimals, rule.significant_digits, rule.small_below)


def round_number(x: float, rule: NumberRule) -> float:
    """The benchmark's rounding (VOCAB.md section 2), with its numbers from formulas/units.yaml."""
    small = rule.small_below
    if x >= small or x <= -small:  # the common case first (an infinity rounds to itself)
        return round(x, rule.decimals)
    if x == 0:
        return 0
    if not math.isfinite(x):  # NaN, passed on: the input's range check refuses it as "expected a finite number"
        return x
    return round(x, -int(math.floor(math.log10(abs(x)))) + rule.significant_digits - 1)


@dataclass(frozen=True)
class Finishing:
    """How a calculator's raw result becomes its value in one variant (see `finishing`)."""

    kind: Literal["date", "weeks_days", "published", "round_number", "integer", "none"]
    rule: ResultRounding | None = None  # the publication's rule (kind "published")
    whole: bool = False  # "published": the output is a whole number (int() of the rounded value)


def finishing(calc: Calculator, variant: str) -> Finishing:
    """The one decision of how this calculator's result is rounded in `variant`: the publication's rule where the
    variant follows it (`result_rule`), else the output's own rounding (the benchmark's `round_number`, a whole
    number, or none); dates and (weeks, days) are not rounded."""
    kind = calc.output.kind
    if kind == OutputKind.date:
        return Finishing("date")
    if kind == OutputKind.gestational_age:
        return Finishing("weeks_days")
    rule = result_rule(calc, variant)
    if rule is not None:
        return Finishing("published", rule, calc.output.rounding == "integer")
    rounding = calc.output.rounding
    return Finishing("round_number" if rounding == "round_number" else "integer" if rounding == "integer" else "none")


class NotFinite(ValueError):
    """A numeric output whose raw result is not a finite number (the engine refuses it, naming the calculator)."""


def finish(raw: Any, how: Finishing, number_rule: NumberRule) -> Any:
    """The value of a raw result as `how` says (`number_rule`: the benchmark's rounding, from units.yaml)."""
    kind = how.kind
    if kind == "round_number" and type(raw) is float and math.isfinite(raw):  # the common case first, with
        small = number_rule.small_below  # round_number's own common case inline (a call less per case: measured
        if raw >= small or raw <= -small:  # 300 machine instructions, 0.5 % of a case)
            return round(raw, number_rule.decimals)
        return round_number(raw, number_rule)
    if kind == "date":
        return raw
    if kind == "weeks_days":
        weeks, days = raw
        return (int(weeks), int(days))
    if not isinstance(raw, (int, float)) or isinstance(raw, bool) or not math.isfinite(raw):
        raise NotFinite(f"the formula gave no finite number ({raw!r})")
    if kind == "round_number":
        return round_number(raw, number_rule)
    if kind == "integer":
        return round(raw)  # half to even, an int: what int(round(raw, 0)) gives, without the decimal conversion
    if kind == "published":
        assert how.rule is not None
        out = round_value(raw, how.rule)
        return int(out) if how.whole else out
    return raw


def _round(x: float, mode: str, decimals: int) -> float:
    if not math.isfinite(x):
        return x
    if mode == "half_even":
        return float(half_even(x, decimals))
    if mode != "half_up":
        raise ValueError(f"unknown rounding mode {mode!r}; expected one of {', '.join(MODES)}")
    if x == 0:
        return 0.0
    if abs(x) >= 2.0 ** 52:  # every double this large is a whole number already
        return x
    read = Decimal(format(x, f".{READ_DIGITS - 1}e"))
    return float(read.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


def as_written(x: float) -> float:
    """`x` read as the decimal it stands for (`READ_DIGITS` significant digits): a unit conversion that lands on
    a band edge in exact arithmetic stays on it (89.6 degrees F is 32 degrees C, not 31.999999999999996)."""
    if not math.isfinite(x) or x == 0:
        return x
    return float(format(x, f".{READ_DIGITS - 1}e"))


def round_array(a: np.ndarray, rule: Rule) -> np.ndarray:
    """`round_value` over a float array, element for element identical.

    Away from ties numpy's scale-rint-unscale gives the same double as the scalar path (the
    nearest whole multiple is unambiguous and the final division is correctly rounded); values
    near a tie, tiny, huge or non-finite are handed to the scalar function.
    """
    import numpy as np

    x = np.asarray(a, dtype=float)
    mode, decimals = rule.mode, rule.decimals
    if mode not in MODES:
        raise ValueError(f"unknown rounding mode {mode!r}; expected one of {', '.join(MODES)}")
    if mode == "half_even" and decimals == 0:  # Python's round(x, 0) on the exact double: rint, exactly
        return np.rint(x)
    return rint_or_exact(x, decimals, lambda e: _round(e, mode, decimals), small_below=1e-3,
                         python_ties=mode == "half_even")


def rint_or_exact(x: np.ndarray, decimals: int, exact: Callable[[float], Any], *, small_below: float = 0.0,
                  zero: float | None = None, python_ties: bool = False) -> np.ndarray:
    """Scale, rint, unscale: the array form of every rounding here, bit for bit equal to `exact` per element.

    Away from a tie the nearest whole multiple is unambiguous and the final division of two
    representable integers is correctly rounded, so the array's double is `exact`'s. The rows where
    that could fail are found in a few in-place passes and handed to `exact`: the scaled value within
    2e-6 of a half, |x * 10**decimals| near 2**52 or above (or infinite), |x| below `small_below`.
    NaN is never risky (it stays NaN); a zero keeps the array's value unless `zero` says what `exact`
    gives for it (those rows then skip the Python call). With `python_ties` (`exact` is Python's `round(x,
    decimals)` on the rows that are neither tiny nor huge), a row near a half is decided here, exactly, by
    `_nearest_whole` rather than by a Python call each (ideal body weight's heights: 11 % of its rows, 0.15 s
    of its 0.18 s per million as Python calls).
    """
    import numpy as np

    scale = 10.0 ** decimals
    with np.errstate(all="ignore"):
        y = np.multiply(x, scale)
        r = np.rint(y)
        out = np.divide(r, scale)
        np.subtract(y, r, out=y)  # exact: y and rint(y) are within a factor of 2
        np.abs(y, out=y)
        near = np.greater(y, 0.5 - 2e-6)
        ax = np.abs(x, out=r)
        other = ax > 2.0 ** 51 / scale
        if small_below > 0:
            other |= ax < small_below
        risky = near | other
        if python_ties and decimals >= 0 and near.any():  # (10**decimals is then exact)
            ties = np.flatnonzero(near & ~other)
            out[ties] = np.copysign(_nearest_whole(x[ties], scale) / scale, x[ties])  # round(-0.4) is -0.0
            risky[ties] = False
        # a whole number of 1 or more is its own rounding to decimals >= 0 (counts per litre, 2.5e11, are huge
        # and whole: without this every such row went to `exact`)
        whole = (np.floor(x) == x) & (ax >= 1) if decimals >= 0 else None
    if whole is not None and whole.any():
        out[whole] = x[whole]
        risky &= ~whole
    idx = np.flatnonzero(risky)
    if idx.size:
        v = x[idx]
        zeros = v == 0
        if zero is not None:
            out[idx[zeros]] = zero
        keep = ~zeros & np.isfinite(v)
        out[idx[keep]] = [exact(e) for e in v[keep].tolist()]
    return out


def _nearest_whole(x: np.ndarray, scale: float) -> np.ndarray:
    """The whole number nearest to the exact product x * scale, ties to even, for products within 2e-6 of a half
    and below 2**51: what Python's `round(x, decimals)` rounds to before it divides by the scale.

    Dekker's two-product gives the product's rounding error e exactly (p + e == x * scale, no fused operations in
    numpy); p's distance d to the half is exact (Sterbenz), so the sign of d + e, which rounding keeps, says on
    which side of the half the exact product lies, and zero says it is on it.
    """
    import numpy as np

    split = 134217729.0  # 2**27 + 1: splits a double into two halves of 26 bits whose products are exact
    p = x * scale
    c = split * x
    xh = c - (c - x)
    xl = x - xh
    cs = split * scale
    sh = cs - (cs - scale)
    sl = scale - sh
    e = ((xh * sh - p) + xh * sl + xl * sh) + xl * sl
    low = np.floor(p)
    side = (p - (low + 0.5)) + e
    return low + np.where(side > 0, 1.0, np.where(side < 0, 0.0, np.mod(low, 2.0)))


# ---------------------------------------------------------------------- which rule a variant uses


@dataclass(frozen=True)
class Step:
    """An intermediate rounding step: the calculator's mode, the step's own decimals."""

    mode: str
    decimals: int


def result_rule(calc: Calculator, variant: str) -> ResultRounding | None:
    """The registry's published rounding when this variant follows it, else None (the benchmark's `round`).

    The published variant follows it; so does the benchmark variant of a calculator without a
    benchmark (a successor, whose both variants compute the published formula).
    """
    rule = calc.output.published_rounding
    if rule is None or (variant == "benchmark" and calc.medcalc_id is not None):
        return None
    return rule


def step(calc: Calculator, variant: str, decimals: int) -> Step:
    """The rule for an intermediate rounding step (MELD Na's MELD(i)): the variant's mode, `decimals`."""
    rule = result_rule(calc, variant)
    key = ("half_even" if rule is None else rule.mode, int(decimals))
    s = _STEPS.get(key)
    if s is None:  # steps are frozen, so one per (mode, decimals) serves every call
        s = _STEPS[key] = Step(*key)
    return s


_STEPS: dict[tuple[str, int], Step] = {}
