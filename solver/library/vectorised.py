"""Vectorised calculators for `compute_many`: the formula's arithmetic over numpy arrays.

Answers must equal `compute` to the bit, so the parts where numpy and Python could differ are
not re-implemented:

- every input is read by the library's own accessor (`Context.quantity`, `.age`, `.height` ...),
  once per distinct cell of the column (a cohort repeats values), which applies the same unit
  conversion, rounding chain and range check as `compute`;
- Python-level operations whose result numpy could round differently (`**`, `math.log`,
  `round`, the output rounding) run elementwise with the same Python functions, again once per
  distinct argument;
- only +, -, *, / and comparisons run as numpy array operations, in the library's order of
  evaluation (IEEE-754 makes those identical).

A row that any accessor refuses, or whose result is not finite, is marked bad; `compute_many`
recomputes bad rows with `compute`, so their error (or value) is exactly the library's.
Constants and tables come from the registry entry, as `compute` reads them.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

from registry.loader import Registry
from registry.schema import Calculator, InputKind
from solver.library.context import Context
from solver.library.core import _compute, _finish
from solver.library.errors import CalculatorError
from solver.library.result import Value
from solver.library.rounding import round_value, step
from solver.library.units import round_number

MISSING: Any = object()  # a cell absent from the row (the entity was not given)
_BAD: Any = object()


@dataclass(frozen=True)
class Pair:
    """A column as arrays: values (NaN/None = not given) and each row's unit (or None: bare values).

    The fast layout of `compute_many`: distinct (value, unit) pairs are found with pandas'
    factorize, so the library's accessor runs once per distinct pair.
    """

    values: np.ndarray
    units: np.ndarray | None = None

    def cell(self, i: int) -> Any:
        return _as_cell(_py(self.values[i]), None if self.units is None else _py(self.units[i]))

    def groups(self) -> tuple[np.ndarray, list[Any]]:
        """codes (one per row) and the cell of each distinct code."""
        vcodes, vuniq = pd.factorize(self.values, use_na_sentinel=False)
        if self.units is None:
            return vcodes, [_as_cell(_py(v), None) for v in vuniq]
        ucodes, uuniq = pd.factorize(self.units, use_na_sentinel=False)
        combined = vcodes.astype(np.int64) * max(len(uuniq), 1) + ucodes
        codes, cuniq = pd.factorize(combined)
        nu = max(len(uuniq), 1)
        return codes, [_as_cell(_py(vuniq[c // nu]), _py(uuniq[c % nu])) for c in cuniq.tolist()]


def _py(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x


def _absent(x: Any) -> bool:
    return x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x))


def _as_cell(value: Any, unit: Any) -> Any:
    if _absent(value):
        return MISSING
    if unit is None or _absent(unit):
        return value
    return [value, unit]


def cell_at(column: "Pair | list[Any]", i: int) -> Any:
    return column.cell(i) if isinstance(column, Pair) else column[i]
VECTORISED: dict[str, Callable[["Columns"], np.ndarray]] = {}


def vectorised(slug: str) -> Callable[[Callable[["Columns"], np.ndarray]], Callable[["Columns"], np.ndarray]]:
    def deco(fn: Callable[["Columns"], np.ndarray]) -> Callable[["Columns"], np.ndarray]:
        VECTORISED[slug] = fn
        return fn

    return deco


def _key(x: Any) -> Any:
    """A hashable key that keeps types apart (True, 1 and 1.0 read differently)."""
    if isinstance(x, (list, tuple)):
        return (list, *(_key(e) for e in x))
    return (type(x), x)


def elementwise(fn: Callable[..., Any], *arrays: np.ndarray, ok: np.ndarray | None = None) -> np.ndarray:
    """fn applied in Python once per distinct argument tuple (found with pandas' factorize); rows not `ok` give nan."""
    n = len(arrays[0])
    out = np.full(n, np.nan)
    idx = np.flatnonzero(ok) if ok is not None else np.arange(n)
    if not idx.size:
        return out
    combined = np.zeros(idx.size, dtype=np.int64)
    uniques, sizes = [], []
    for a in arrays:
        c, u = pd.factorize(np.asarray(a)[idx], use_na_sentinel=False)
        size = max(len(u), 1)
        combined = combined * size + c
        uniques.append(u)
        sizes.append(size)
    codes, keys = pd.factorize(combined)
    parts = []
    rest = np.asarray(keys, dtype=np.int64)
    for size in reversed(sizes):  # decode each distinct combination into one index per argument
        parts.append(rest % size)
        rest = rest // size
    parts.reverse()
    args = [np.asarray(u, dtype=object)[p].tolist() if len(u) else [] for u, p in zip(uniques, parts)]
    results = []
    for tup in zip(*args):
        try:
            results.append(fn(*tup))
        except (ValueError, ZeroDivisionError, OverflowError, TypeError):
            results.append(np.nan)
    out[idx] = np.array(results, dtype=float)[codes]
    return out


class Columns:
    """What a vectorised calculator may read: typed input columns, constants, tables, sub-results."""

    def __init__(self, calc: Calculator, cells: dict[str, Any], n: int, variant: str, reg: Registry,
                 bad: np.ndarray | None = None, memo: dict[Any, np.ndarray] | None = None):
        self.calc = calc
        self.cells = cells
        self.n = n
        self.variant = variant
        self.benchmark = variant == "benchmark"
        self.reg = reg
        self.bad = bad if bad is not None else np.zeros(n, dtype=bool)
        self.memo = memo if memo is not None else {}  # reads and sub-results shared with sub-calculators

    # ------------------------------------------------------------------ registry data
    def const(self, name: str) -> Any:
        return self.calc.constants[name].value

    def band(self, name: str, x: np.ndarray) -> np.ndarray:
        """The first band that holds, as in `Table.band`; no band (and no default) marks the row bad."""
        t = self.calc.tables[name]
        assert t.bands is not None
        out = np.full(self.n, np.nan)
        free = np.ones(self.n, dtype=bool)
        for b in t.bands:
            m = free.copy()
            if b.ge is not None:
                m &= x >= b.ge
            if b.gt is not None:
                m &= x > b.gt
            if b.le is not None:
                m &= x <= b.le
            if b.lt is not None:
                m &= x < b.lt
            out[m] = b.value
            free &= ~m
        if t.default is not None:
            out[free] = t.default
        return out

    # ------------------------------------------------------------------ inputs
    def read(self, method: str, name: str, **kw: Any) -> np.ndarray:
        """The column read by the library's accessor `Context.<method>`, once per distinct cell."""
        memo_key = (self.calc.slug, method, name, tuple(sorted(kw.items())))
        if memo_key in self.memo:
            return self.memo[memo_key]
        column = self.cells.get(name)
        if isinstance(column, Pair):
            codes, uniques = column.groups()
        else:
            cells = column if column is not None else [MISSING] * self.n
            index: dict[Any, int] = {}
            uniques = []
            code_list = []
            for cell in cells:
                key = MISSING if cell is MISSING else _key(cell)
                c = index.get(key)
                if c is None:
                    c = index[key] = len(uniques)
                    uniques.append(cell)
                code_list.append(c)
            codes = np.array(code_list, dtype=np.int64)
        numeric = method != "choice"
        fill: Any = 1.0 if numeric else None
        results = []
        failed = []
        for cell in uniques:
            ents = {} if cell is MISSING else {name: cell}
            try:
                v = getattr(Context(self.calc, ents, self.variant, self.reg, _compute), method)(name, **kw)
                failed.append(False)
            except (CalculatorError, TypeError, ValueError, KeyError):
                v = fill
                failed.append(True)
            results.append(v)
        dtype = bool if method == "flag" else float if numeric else object
        table = np.array(results, dtype=dtype) if results else np.array([], dtype=dtype)
        out = table[codes] if len(codes) else np.array([], dtype=dtype)
        if any(failed):
            self.bad |= np.array(failed, dtype=bool)[codes]
        self.memo[memo_key] = out
        return out

    def sub(self, slug: str) -> np.ndarray:
        """The finished result of a calculator this one depends on, over the same rows."""
        if slug not in self.calc.depends_on:
            raise KeyError(f"{self.calc.slug}: {slug!r} is not in depends_on")
        if ("sub", slug) not in self.memo:
            other = self.reg.calculators[slug]
            sub = Columns(other, self.cells, self.n, self.variant, self.reg, self.bad, self.memo)
            self.memo[("sub", slug)] = finish(sub, VECTORISED[slug](sub))
        return self.memo[("sub", slug)]

    def ok(self) -> np.ndarray:
        return ~self.bad


def finish(cols: Columns, raw: np.ndarray) -> np.ndarray:
    """The library's output rounding (`core._finish`), elementwise; failures mark the row bad."""
    calc, reg = cols.calc, cols.reg
    good = cols.ok() & np.isfinite(raw)
    cols.bad |= ~np.isfinite(raw)

    units = reg.units
    if units is None:  # as in `Context`: the loader reports a missing units.yaml
        raise ValueError("the registry has no unit data (formulas/units.yaml)")
    rounding, rule = calc.output.rounding, units.rounding
    if rounding == "round_number":
        out = round_number_array(np.where(good, raw, np.nan), rule)
        cols.bad |= ~np.isfinite(out)
        return out

    def fin(x: float) -> Value:
        try:
            return _finish(calc, x, units, cols.variant)
        except CalculatorError:
            return np.nan

    out = elementwise(fin, raw, ok=good)
    cols.bad |= ~np.isfinite(out)
    return out


def round_number_array(x: np.ndarray, rule: Any) -> np.ndarray:
    """`round_number` over an array, bit for bit.

    Python's `round(x, d)` is the double nearest to the exact decimal rounding of x. numpy's
    scale-rint-unscale gives the same double unless the scaled value sits within rounding error
    of a half (rint could then go the other way), or x is tiny (significant-digit rule), zero or
    huge: those rows are rounded by the library's own `round_number`. The final division is exact
    IEEE division of two representable integers, hence correctly rounded like Python's.
    """
    scale = 10.0 ** rule.decimals
    with np.errstate(all="ignore"):
        y = x * scale
        out = np.rint(y) / scale
        risky = (~np.isfinite(x) | (np.abs(x) < rule.small_below) | (np.abs(y) > 2.0 ** 52)
                 | (np.abs(np.abs(y - np.floor(y)) - 0.5) < 1e-6))
    idx = np.flatnonzero(risky & np.isfinite(x))
    if idx.size:
        out[idx] = [round_number(v, rule) for v in x[idx].tolist()]
    return out


def _pow(a: np.ndarray, b: np.ndarray, cols: Columns) -> np.ndarray:
    return elementwise(operator.pow, a, b, ok=cols.ok())


# ---------------------------------------------------------------------- calculators

@vectorised("body-mass-index")
def body_mass_index(c: Columns) -> np.ndarray:
    kg = c.read("weight", "weight")
    m = c.read("height", "height", unit="m")
    return kg / (m * m)


@vectorised("ideal-body-weight")
def ideal_body_weight(c: Columns) -> np.ndarray:
    inches = c.read("height", "height", unit="in")
    male = c.read("choice", "sex") == "Male"
    base = np.where(male, c.const("male_base_weight"), c.const("female_base_weight"))
    return base + c.const("kg_per_inch_over_base") * (inches - c.const("base_height"))


@vectorised("adjusted-body-weight")
def adjusted_body_weight(c: Columns) -> np.ndarray:
    ibw = c.sub("ideal-body-weight")
    kg = c.read("weight", "weight")
    return ibw + c.const("correction_factor") * (kg - ibw)


@vectorised("creatinine-clearance-cockcroft-gault")
def cockcroft_gault(c: Columns) -> np.ndarray:
    male = c.read("choice", "sex") == "Male"
    age = c.read("age", "age")
    kg = c.read("weight", "weight")
    c.read("height", "height", unit="m")  # read for its checks, as the library does
    scr = c.read("quantity", "creatinine")
    if c.benchmark:
        rule = c.band("weight_rule", c.sub("body-mass-index"))
        c.bad |= np.isnan(rule)
        weight = np.where(rule == 0, kg, np.where(rule == 1, np.minimum(c.sub("ideal-body-weight"), kg),
                                                  c.sub("adjusted-body-weight")))
    else:
        weight = kg
    factor = np.where(male, c.const("male_factor"), c.const("female_factor"))
    return (c.const("age_offset") - age) * weight * factor / (c.const("denominator_factor") * scr)


@vectorised("ckd-epi-2021")
def ckd_epi_2021(c: Columns) -> np.ndarray:
    age = c.read("age", "age")
    female = c.read("choice", "sex") == "Female"
    scr = c.read("quantity", "creatinine")
    kappa = np.where(female, c.const("female_kappa"), c.const("male_kappa"))
    low = scr <= kappa
    alpha = np.where(low, np.where(female, c.const("female_alpha"), c.const("male_alpha")), c.const("high_exponent"))
    divisor = kappa
    if c.benchmark:
        divisor = np.where(low & ~female, c.const("benchmark_male_low_kappa"), kappa)
    sex_factor = np.where(female, c.const("female_factor"), c.const("male_factor"))
    age_term = _pow(np.full(c.n, float(c.const("age_base"))), age, c)
    return c.const("base") * _pow(scr / divisor, alpha, c) * age_term * sex_factor


@vectorised("meld-na")
def meld_na(c: Columns) -> np.ndarray:
    import math

    cr = c.read("quantity", "creatinine")
    dialysed = c.read("flag", "Dialysis at least twice in the past week") | c.read(
        "flag", "Continuous veno-venous hemodialysis for ≥24 hours in the past week")
    floor, ceiling, dial = c.const("creatinine_floor"), c.const("creatinine_ceiling"), c.const("dialysis_creatinine")
    if c.benchmark:  # sic, as the library: the dialysis rule only applies when floor <= Cr <= ceiling
        cr = np.where(cr < floor, floor, np.where(cr > ceiling, ceiling, np.where(dialysed, dial, cr)))
    else:
        cr = np.where(dialysed, dial, np.minimum(np.maximum(cr, floor), ceiling))
    bili = np.maximum(c.read("quantity", "Bilirubin"), c.const("bilirubin_floor"))
    inr = np.maximum(c.read("number", "international normalized ratio"), c.const("inr_floor"))
    na = np.minimum(np.maximum(c.read("quantity", "Sodium"), c.const("sodium_floor")), c.const("sodium_ceiling"))
    ok = c.ok()
    log = lambda a: elementwise(math.log, a, ok=ok)  # noqa: E731
    meld_i = (c.const("creatinine_coefficient") * log(cr) + c.const("bilirubin_coefficient") * log(bili)
              + c.const("inr_coefficient") * log(inr) + c.const("intercept"))
    tenth, whole = step(c.calc, c.variant, c.const("meld_decimals")), step(c.calc, c.variant, 0)  # as the library
    meld = elementwise(lambda x: int(round_value(round_value(x, tenth) * c.const("meld_scale"), whole)), meld_i, ok=ok)
    na_gap = c.const("sodium_ceiling") - na
    raw = meld + c.const("sodium_coefficient") * na_gap - c.const("interaction_coefficient") * meld * na_gap
    score = np.minimum(elementwise(lambda x: int(round_value(x, whole)), raw, ok=ok), c.const("score_cap"))
    return np.where(meld <= c.const("sodium_threshold"), meld, score)


@vectorised("has-bled")
def has_bled(c: Columns) -> np.ndarray:
    age = c.read("age", "age")
    drinks = c.read("number", "Number of Alcoholic Drinks Per Week")
    if c.benchmark:
        drinks = np.trunc(drinks)  # the library's int(): the reference truncates
    points = c.calc.tables["points"].points
    assert points is not None
    flags = {i.name for i in c.calc.inputs if i.kind == InputKind.boolean}
    total = np.zeros(c.n)
    for name, weight in points.items():  # the criteria in the table's order, as the library sums them
        met = c.read("flag", name) if name in flags else drinks >= c.const("alcohol_threshold")
        total = total + np.where(met, weight, 0)
    return c.band("age_points", age) + total
