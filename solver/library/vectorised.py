"""The column machinery of `compute_many`: a calculator's one kernel run over numpy arrays.

The kernels are the calculators' functions (solver/library/calculators/); `Columns` is the reader
they are given here, with `Context`'s accessors and helpers over columns.

Answers must equal `compute` to the bit, so the parts where numpy and Python could differ are
not re-implemented:

- every input is read by the library's own accessor (`Context.quantity`, `.age`, `.height` ...),
  once per distinct cell of the column (a cohort repeats values), which applies the same unit
  conversion, rounding chain and range check as `compute`;
- Python-level operations whose result numpy could round differently (`**`, `math.log`,
  `math.exp`, `round`, the output rounding) run elementwise with the same Python functions, again
  once per distinct argument, or mapped over the rows in C where an argument is distinct in nearly
  every row (numpy's exp, log and power do differ from Python's in the last bit on this
  machine's builds: 4.6 %, 0.008 % and 5 % of 2,000,000 random arguments);
- only +, -, *, / and comparisons run as numpy array operations, in the library's order of
  evaluation (IEEE-754 makes those identical).

A row that any accessor refuses, or whose result is not finite, is marked bad; `compute_many`
recomputes bad rows with `compute`, so their error (or value) is exactly the library's.
Constants and tables come from the registry entry, as `compute` reads them.
"""
from __future__ import annotations

import datetime as dt
import gc
import itertools
import math
import operator
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np

from registry.loader import Registry
from registry.schema import Calculator
from registry.spellings import accepted_parts
from solver.library import rounding as rnd
from solver.library.calculator_plan import plan
from solver.library.context import Context
from solver.library.core import _compute
from solver.library.errors import CalculatorError
from solver.library.functions import COLUMNAR, FLOAT_RESULT, FUNCTIONS, NUMPY_MATH
from solver.library.units import ConversionError, Converter, normalise_unit, round_number

MISSING: Any = object()  # a cell absent from the row (the entity was not given)


class NotColumnar(Exception):
    """A kernel reached a branch with no columnar form (`scalar_only`): `compute_many` computes row by row."""
_BAD: Any = object()

# The calculators marked `numpy_math=True` (solver.library.functions.NUMPY_MATH) take numpy's log and exp over
# arrays: Framingham, whose risk is rounded to 3 decimals; over its 40 reference cases and 100,000 generated rows
# no answer changed against `math` (tests/solver/test_batch_numpy_math.py), and a row near a half step is still
# rounded by `compute` (`Columns.round_to`). Measured: 1,000,000 uniform rows 0.75 s -> 0.63 s (bench/columnar.py
# --only framingham-hard-chd, best of 3, load 5). The Pooled Cohort Equations and PREVENT give their risk
# unrounded: numpy changed 1,030 and 3,444 of 100,000 generated answers (one unit in the last place), so they
# keep `math` for every row.
# within this of a half step (in units of the step) the rounding of a risk computed with numpy's exp is left to
# `compute`: one unit in the last place of exp or log moves a 0-100 % risk by under 1e-12
_NEAR_HALF = 1e-6


@dataclass(frozen=True)
class Pair:
    """A column as arrays: values (NaN/None = not given) and each row's unit (or None: bare values).

    `units` is an array (one unit per row), a `Coded` column of units (a dictionary or `category` column: the
    distinct units and a code per row, -1 where none is given), one string (the same unit for every row: a
    fixed unit from `columns=`) or None. Numeric values with units are converted with numpy once per unit
    group (`Columns.read`); anything else is read by the library's accessor once per distinct cell
    (distinct pairs are found with pandas' factorize).
    """

    values: np.ndarray
    units: "np.ndarray | Coded | str | None" = None
    # rows whose value was a Python int in a float column ([70, "kg"] among [70.5, "kg"] cells): read as the int
    ints: np.ndarray | None = None
    # the cells that are not a plain [number, "unit"] (a NaN, a bool, text, three parts), as given (None elsewhere):
    # their rows hold no value or unit here, and are read by the library's accessor
    odd: np.ndarray | None = None

    def odd_rows(self) -> np.ndarray | None:
        return None if self.odd is None else np.fromiter(map(operator.is_not, self.odd.tolist(),
                                                             itertools.repeat(None)), bool, len(self.odd))

    def unit_at(self, i: int) -> Any:
        if isinstance(self.units, Coded):
            c = int(self.units.codes[i])
            return None if c < 0 else self.units.uniques[c]
        return self.units if self.units is None or isinstance(self.units, str) else _py(self.units[i])

    def value_at(self, i: int) -> Any:
        v = _py(self.values[i])
        return int(v) if self.ints is not None and self.ints[i] else v

    def cell(self, i: int) -> Any:
        if self.odd is not None and self.odd[i] is not None:
            return self.odd[i]
        return _as_cell(self.value_at(i), self.unit_at(i))

    def cells(self, rows: np.ndarray) -> list[Any]:
        """`[self.cell(i) for i in rows]`, read a column at a time (see `cells_at`)."""
        taken = self.values[rows]
        values = taken.tolist()
        gone: Any = itertools.repeat(False)  # (`_as_cell`'s checks, made for the whole column first)
        if taken.dtype == object:
            values = [_py(v) for v in values]
            gone = [_absent(v) for v in values]
        elif taken.dtype.kind == "f":
            gone = np.isnan(taken).tolist()
        ints = itertools.repeat(False) if self.ints is None else self.ints[rows].tolist()
        if self.units is None or isinstance(self.units, str):
            units: Any = itertools.repeat(self.units)
        elif isinstance(self.units, Coded):
            names = [None if _absent(u) else u for u in self.units.uniques]
            units = [None if c < 0 else names[c] for c in self.units.codes[rows].tolist()]
        else:
            units = [None if _absent(u) else u for u in map(_py, self.units[rows].tolist())]
        odd = itertools.repeat(None) if self.odd is None else self.odd[rows].tolist()
        return [o if o is not None else MISSING if g else (int(v) if k else v) if u is None else [int(v) if k else v, u]
                for v, g, k, u, o in zip(values, gone, ints, units, odd)]

    def take(self, rows: np.ndarray | slice) -> "Pair":
        units = (self.units if self.units is None or isinstance(self.units, str) else
                 self.units.take(rows) if isinstance(self.units, Coded) else self.units[rows])
        return Pair(self.values[rows], units, None if self.ints is None else self.ints[rows],
                    None if self.odd is None else self.odd[rows])

    def groups(self) -> tuple[np.ndarray, list[Any]]:
        """codes (one per row) and the cell of each distinct code."""
        vcodes, vuniq = factorize(self.values)
        vals = [_py(v) for v in vuniq]
        if self.ints is not None and self.ints.any():  # an int and a float of one value are distinct cells
            vcodes = vcodes.astype(np.int64) * 2 + self.ints
            vcodes, keys = factorize(vcodes)
            vals = [int(vals[k // 2]) if k % 2 else vals[k // 2] for k in keys.tolist()]
        if self.units is None or isinstance(self.units, str):
            codes, cells = vcodes, [_as_cell(v, self.units) for v in vals]
        else:
            ucodes, uuniq = unit_codes(self.units)
            if (ucodes < 0).any():  # no unit given: its own group, read as a bare value
                ucodes, uuniq = np.where(ucodes < 0, len(uuniq), ucodes), [*uuniq, None]
            combined = vcodes.astype(np.int64) * max(len(uuniq), 1) + ucodes
            codes, cuniq = factorize(combined)
            nu = max(len(uuniq), 1)
            cells = [_as_cell(vals[c // nu], _py(uuniq[c % nu])) for c in cuniq.tolist()]
        odd = self.odd_rows()
        if odd is not None and odd.any():  # each odd cell object its own code, read as given (rows that share
            assert self.odd is not None  # one object, as the distinct cells of a column spread, share its code)
            rows = np.flatnonzero(odd)
            which, first = factorize(np.fromiter(map(id, self.odd[rows].tolist()), np.int64, len(rows)))
            firsts = np.unique(which, return_index=True)[1]
            codes = np.array(codes, dtype=np.int64)
            codes[rows] = len(cells) + which
            cells.extend(self.odd[rows[firsts]].tolist())
        return codes, cells


@dataclass(frozen=True)
class Coded:
    """A column of few distinct plain values (text such as sex or race): one code per row (-1: not given) and
    the distinct values; the accessor runs once per distinct value."""

    codes: np.ndarray
    uniques: list[Any]

    def cell(self, i: int) -> Any:
        c = int(self.codes[i])
        return MISSING if c < 0 else _as_cell(self.uniques[c], None)

    def cells(self, rows: np.ndarray) -> list[Any]:
        """`[self.cell(i) for i in rows]`."""
        cells = [_as_cell(u, None) for u in self.uniques]
        return [MISSING if c < 0 else cells[c] for c in self.codes[rows].tolist()]

    def take(self, rows: np.ndarray | slice) -> "Coded":
        return Coded(self.codes[rows], self.uniques)


@dataclass(frozen=True)
class Triples:
    """A column of [name, number, 'unit'] cells (a drug and its dose), every given cell a list of that form: the
    names and units coded (-1: not given), the numbers as an array (`ints`: rows whose number is a Python int)."""

    names: Coded
    values: np.ndarray
    ints: np.ndarray | None
    units: Coded

    def cell(self, i: int) -> Any:
        c = int(self.names.codes[i])
        if c < 0:
            return MISSING
        v = _py(self.values[i])
        return [self.names.uniques[c], int(v) if self.ints is not None and self.ints[i] else v,
                self.units.uniques[int(self.units.codes[i])]]

    def cells(self, rows: np.ndarray) -> list[Any]:
        """`[self.cell(i) for i in rows]`."""
        names, units = self.names.uniques, self.units.uniques
        ints = itertools.repeat(False) if self.ints is None else self.ints[rows].tolist()
        return [MISSING if c < 0 else [names[c], int(v) if k else v, units[u]] for c, v, k, u in
                zip(self.names.codes[rows].tolist(), self.values[rows].tolist(), ints, self.units.codes[rows].tolist())]

    def take(self, rows: np.ndarray | slice) -> "Triples":
        return Triples(self.names.take(rows), self.values[rows], None if self.ints is None else self.ints[rows],
                       self.units.take(rows))


_NAME, _NUMBER, _UNIT = operator.itemgetter(0), operator.itemgetter(1), operator.itemgetter(2)


def triples(cells: list[Any], complete: bool = False) -> Triples | None:
    """The `Triples` of a column's cells (None or `MISSING`: not given; `complete`: every cell given), or None when a
    given cell is not a list of a text, a finite number (not a bool) and a text. Read in C by `itemgetter`, as
    `batch._clean_pairs` reads pairs; the names and units are type-checked once per distinct value."""
    given = cells if complete else [c for c in cells if c is not None and c is not MISSING]
    if not given or len(given) * 2 < len(cells):
        return None
    try:
        if set(map(type, given)) != {list} or set(map(len, given)) != {3}:
            return None
        values = list(map(_NUMBER, given))
        ncodes, names = object_codes(list(map(_NAME, given)))
        ucodes, units = object_codes(list(map(_UNIT, given)))
    except TypeError:  # (an unhashable name or unit)
        return None
    vtypes = set(map(type, values))
    if not (all(type(x) is str for x in names) and all(type(x) is str for x in units) and vtypes <= {int, float}):
        return None
    v = np.fromiter(values, float, len(values))
    if not np.isfinite(v).all() or (int in vtypes and not (np.abs(v) <= 2.0 ** 53).all()):
        return None
    ints = np.fromiter((type(x) is int for x in values), bool, len(values)) if int in vtypes else None
    if len(given) < len(cells):  # the rows not given: code -1
        at = np.fromiter((c is not None and c is not MISSING for c in cells), bool, len(cells))
        ncodes, ucodes, v = _spread(ncodes, at, -1), _spread(ucodes, at, 0), _spread(v, at, np.nan)
        ints = None if ints is None else _spread(ints, at, False)
    return Triples(Coded(ncodes, names), v, ints, Coded(ucodes, units))


def _spread(a: np.ndarray, at: np.ndarray, fill: Any) -> np.ndarray:
    """`a`'s values at the rows `at`, `fill` elsewhere."""
    out = np.full(len(at), fill, dtype=a.dtype if not (isinstance(fill, float) and a.dtype.kind != "f") else float)
    out[at] = a
    return out


@dataclass(frozen=True)
class ArrayConverter(Converter):
    """The library's unit conversion (`units.Converter`) over an array of one unit: the same factors, the
    same order of operations and the same rounding chain, with `round_array` for the rounding steps."""

    # the last array this converter rounded: `round_number` is idempotent, so when the chain rounds that array
    # again (`concentration` rounds the mass it has just rounded) the step gives it back without a pass
    last: list[Any] = field(default_factory=lambda: [None], compare=False, repr=False)

    def r(self, x: Any) -> Any:
        if isinstance(x, np.ndarray):
            if self.exact or x is self.last[0]:
                return x
            self.last[0] = out = round_array(x, self.units.rounding)
            return out
        return super().r(x)

    def written(self, x: Any) -> Any:
        if isinstance(x, np.ndarray):  # element for element the scalar reading
            return np.fromiter((rnd.as_written(v) for v in x.tolist()), float, x.size).reshape(x.shape)
        return super().written(x)


def _column(x: Any, n: int) -> np.ndarray:
    """A converted value as a column of n rows, keeping numpy's int or float dtype (Python's int or float)."""
    a = np.asarray(x)
    if a.ndim == 0:
        a = np.full(n, a.item())
    return a if a.dtype.kind in "iuf" else a.astype(float)


_IMPORTING = threading.Lock()


def pandas_module() -> Any:
    """pandas, imported when first needed (its hash factorize): a Parquet file's batch, read with pyarrow, is mostly
    computed without it, and importing it costs a command about 0.15 s. The chunks of a long table run on threads:
    one at a time imports it (two threads importing pandas at once got a partly initialised module)."""
    with _IMPORTING:  # (not sys.modules: a module another thread is importing is there half made)
        import pandas
    return pandas


def factorize(a: Any) -> tuple[np.ndarray, Any]:
    """codes (one per row) and the distinct values they stand for, as pandas' factorize gives them (NaN a value
    too; in another order). A numeric array is coded without pandas unless it is already imported, and a float by
    its bits: -0.0 apart from 0.0, as `compute` keeps them (pandas' hash of floats merges the two, and the first
    seen would stand for both). Anything else: pandas' factorize."""
    a = np.asarray(a)
    if not (a.dtype.kind in "iu" or a.dtype == np.float64):
        return pandas_module().factorize(a, use_na_sentinel=False)
    floats = a.dtype.kind == "f"
    keys = np.ascontiguousarray(a).view(np.int64) if floats else a
    codes, uniq = _int_codes(keys)
    return codes, uniq.view(np.float64) if floats else uniq


def _int_codes(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`factorize` of integers: by a table of the range where it is short (day numbers, codes: no hash, no sort),
    else by pandas' hash where a DataFrame's batch has it imported, else by numpy's sort (importing pandas costs a
    Parquet batch 0.2 s; the sort a few ms a batch). Measured against pandas' hash alone (bench/compare.py, 200,000
    benchmark rows): due dates 1.20x slower by the sort, the same by the table."""
    if not len(keys):
        return np.zeros(0, dtype=np.intp), keys[:0]
    lo, hi = int(keys.min()), int(keys.max())
    if hi - lo <= 4 * len(keys) + 4096:
        at = (keys - lo).astype(np.intp)
        present = np.zeros(hi - lo + 1, dtype=bool)
        present[at] = True
        remap = np.cumsum(present, dtype=np.intp) - 1
        return remap[at], (np.flatnonzero(present) + lo).astype(keys.dtype)
    if "pandas" in sys.modules:
        return pandas_module().factorize(keys)
    uniq, codes = np.unique(keys, return_inverse=True)
    return codes.reshape(-1), uniq


_SHORT = 65_536  # objects coded in Python below this many (distinct cells: no pandas), by pandas' hash from it


def object_codes(items: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """codes (one per item) and the distinct items, first seen first, as pandas' factorize gives them: a short
    list (the distinct cells of a text column) in Python, without importing pandas (0.2 s of a Parquet batch); a
    long one by pandas' hash, in C. TypeError: an unhashable item."""
    if len(items) < _SHORT:
        index: dict[Any, int] = {}
        return np.fromiter((index.setdefault(x, len(index)) for x in items), np.intp, len(items)), list(index)
    codes, uniques = pandas_module().factorize(np.fromiter(items, object, len(items)))
    return codes, uniques.tolist()


def _py(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x


_PRESENT = frozenset({int, str, bool, list})  # types of a given cell, told apart first (called once a cell)


def _absent(x: Any) -> bool:
    t = type(x)
    if t is float:
        return x != x  # (NaN)
    if x is None:
        return True
    if t in _PRESENT:
        return False
    if isinstance(x, float):  # (numpy's float64)
        return math.isnan(x)
    pd = sys.modules.get("pandas")  # (pd.NA is only in a table once pandas is imported: none imported to check)
    return pd is not None and x is getattr(pd, "NA", None)


def _as_cell(value: Any, unit: Any) -> Any:
    if _absent(value):
        return MISSING
    if unit is None or _absent(unit):
        return value
    return [value, unit]


def distinct(column: Any, n: int) -> tuple[np.ndarray, list[Any]]:
    """codes (one per row) and the distinct cells of a column (a `Pair`, `Coded`, a list of cells, or None: absent)."""
    if isinstance(column, Pair):
        return column.groups()
    if isinstance(column, Coded):
        missing = bool((column.codes < 0).any())
        uniques = [_as_cell(u, None) for u in column.uniques] + ([MISSING] if missing else [])
        return (np.where(column.codes < 0, len(column.uniques), column.codes) if missing else column.codes), uniques
    if column is None:  # the entity is not in the table: one cell, not given
        return np.zeros(n, dtype=np.int64), [MISSING]
    index: dict[Any, int] = {}
    uniques = []
    code_list = []
    for cell in column:
        key = MISSING if cell is MISSING else _key(cell)
        c = index.get(key)
        if c is None:
            c = index[key] = len(uniques)
            uniques.append(cell)
        code_list.append(c)
    return np.array(code_list, dtype=np.int64), uniques


def unit_codes(units: "np.ndarray | Coded") -> tuple[np.ndarray, list[Any]]:
    """A column of units as a code per row (-1: none given) and the distinct units: a `Coded` column (a
    dictionary or `category` column) gives its own codes, so no unit string is hashed per row."""
    if isinstance(units, Coded):
        return np.asarray(units.codes), list(units.uniques)
    codes, uniq = pandas_module().factorize(units, use_na_sentinel=True)
    return codes, [_py(u) for u in uniq.tolist()]


def cell_at(column: "Pair | Coded | Triples | list[Any]", i: int) -> Any:
    return column.cell(i) if isinstance(column, (Pair, Coded, Triples)) else column[i]


def cells_at(column: "Pair | Coded | Triples | list[Any]", rows: np.ndarray) -> list[Any]:
    """`[cell_at(column, i) for i in rows]`, a column at a time: the rows `compute` answers one by one (those the
    kernel refuses, to give `compute`'s own error) are built this way (APACHE II, 1,000,000 benchmark rows of which
    77,007 are refused: compute_many 2.5 s -> 1.6 s, with `table_compute._rows`, measured)."""
    if isinstance(column, (Pair, Coded, Triples)):
        return column.cells(rows)
    return [column[i] for i in rows.tolist()]
_UNIT_METHODS = frozenset({"quantity", "measurement", "weight", "temperature", "count_per_litre", "age", "height",
                           "dose", "doses_per_day"})


def columnar(slug: str, reg: Registry) -> Callable[..., Any] | None:
    """The kernel `compute_many` runs over arrays for `slug` (the very function `compute` runs), or None when it
    or a calculator it depends on is not written with the shared helpers."""
    calc = reg.calculators.get(slug)
    if slug not in COLUMNAR or calc is None or not all(columnar(d, reg) for d in calc.depends_on):
        return None
    return FUNCTIONS[slug]


def _key(x: Any) -> Any:
    """A hashable key that keeps types apart (True, 1 and 1.0 read differently)."""
    if isinstance(x, (list, tuple)):
        return (list, *(_key(e) for e in x))
    try:
        hash(x)
    except TypeError:  # a mapping or set in a cell: one cell of its own (the library refuses it)
        return (type(x), id(x))
    return (type(x), x)


@dataclass(frozen=True)
class Grouped:
    """An argument of `elementwise` given as a code per row (0..k-1) and the k values the codes stand for,
    when the caller knows the groups (which branch of a formula each row takes)."""

    codes: np.ndarray
    values: list[Any]


def elementwise(fn: Callable[..., Any], *args: Any, ok: np.ndarray | None = None) -> np.ndarray:
    # long: one dispatch per expression node kind
    """fn applied in Python once per distinct argument tuple (found by arithmetic, `_arithmetic`, or with pandas'
    factorize), or once per row when an argument holds a distinct float in nearly every row (`_continuous`: a risk
    score); rows not `ok` give nan and are never computed.

    An argument may be an array (one value per row) or a plain Python value (the same for every row)."""
    n = next(len(a.codes) if isinstance(a, Grouped) else len(a) for a in args if isinstance(a, Grouped) or np.ndim(a))
    idx = None if ok is None or ok.all() else np.flatnonzero(ok)
    if idx is not None and not idx.size:
        return np.full(n, np.nan)
    varying = [i for i, a in enumerate(args) if isinstance(a, Grouped) or np.ndim(a)]
    rows = {i: np.asarray(args[i]) if idx is None else np.asarray(args[i])[idx]
            for i in varying if not isinstance(args[i], Grouped)}
    coded = {i: _arithmetic(a) for i, a in rows.items()}
    if len(rows) == len(varying) and any(coded[i] is None and _continuous(a) for i, a in rows.items()):
        return _each_row(fn, args, idx, n)
    combined: Any = None
    uniques: list[Any] = []
    sizes = []
    for i in varying:
        a = args[i]
        u: Any
        if isinstance(a, Grouped):  # already coded: no hash pass
            c, u = (a.codes if idx is None else a.codes[idx]), a.values
        else:
            got = coded[i]
            c, u = got if got is not None else factorize(rows[i])
        size = max(len(u), 1)
        combined = c.astype(np.intp, copy=False) if combined is None else combined * size + c
        uniques.append(u)
        sizes.append(size)
    total = int(np.prod(sizes))
    if len(varying) == 1:
        codes, parts = combined, [np.arange(sizes[0])]
    else:
        if total <= 4 * len(combined) + 4096:  # the combinations that occur, by a table of them (no hash pass)
            present = np.zeros(total, dtype=bool)
            present[combined] = True
            keys = np.flatnonzero(present)
            remap = np.empty(total, dtype=np.intp)
            remap[keys] = np.arange(len(keys))
            codes = remap[combined]
        else:
            codes, keys = factorize(combined)
        parts = []
        rest = np.asarray(keys, dtype=np.int64)
        for size in reversed(sizes):  # decode each distinct combination into one index per argument
            parts.append(rest % size)
            rest = rest // size
        parts.reverse()
    columns = [[u[k] for k in p.tolist()] if isinstance(u, list) else np.asarray(u, dtype=object)[p].tolist()
               if len(u) else [] for u, p in zip(uniques, parts)]
    lists: list[Any] = list(args)
    for j, i in enumerate(varying):
        lists[i] = columns[j]
    table = _apply(fn, lists, len(columns[0]))
    if idx is None:
        return table[codes]
    out = np.full(n, np.nan)
    out[idx] = table[codes]
    return out


_SAMPLE = 1024  # rows looked at to tell a continuous float column (a risk score) from a coded one (ages, labs)


def _continuous(a: np.ndarray) -> bool:
    """Whether a float argument of `elementwise` holds (nearly) a distinct value per row, as a sum of logarithms
    does: then finding the distinct values costs more than it saves (a hash pass and a call list per value)."""
    if a.dtype.kind != "f" or a.size < 4 * _SAMPLE:
        return False
    return len(np.unique(a[:_SAMPLE])) * 2 > _SAMPLE  # (NaN counted once, as a distinct value)


def _each_row(fn: Callable[..., Any], args: tuple[Any, ...], idx: np.ndarray | None, n: int) -> np.ndarray:
    """fn over every row (rows not in `idx` give nan), mapped over the rows' Python values in C: the very
    function and values of the distinct-value path, without its bookkeeping (math.exp over 1,000,000 floats:
    0.06 s with the lists, against 1.1 s through the distinct values, measured)."""
    lists = [(np.asarray(a) if idx is None else np.asarray(a)[idx]).tolist() if np.ndim(a) else a for a in args]
    table = _apply(fn, lists, n if idx is None else len(idx))
    if idx is None:
        return table
    out = np.full(n, np.nan)
    out[idx] = table
    return out


def _apply(fn: Callable[..., Any], lists: list[Any], count: int) -> np.ndarray:
    """fn over `count` calls, as floats: each argument a list (one value per call) or one value for every call.
    Mapped in C (no Python frame per call); a call the function refuses gives nan."""
    def columns() -> list[Any]:
        return [c if isinstance(c, list) else itertools.repeat(c, count) for c in lists]

    try:
        return np.fromiter(map(fn, *columns()), float, count)
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):  # a call the function refuses: nan there
        return np.fromiter((_or_nan(fn, call) for call in zip(*columns())), float, count)


def _or_nan(fn: Callable[..., Any], call: tuple[Any, ...]) -> float:
    try:
        v = fn(*call)
        return float(v)
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):  # (a complex power: TypeError from float)
        return math.nan


def pick(mask: np.ndarray, yes: Any, no: Any) -> np.ndarray:
    """`np.where(mask, yes, no)` for two constants: the same values (and dtype), looked up by the mask's bytes,
    which numpy runs several times faster."""
    return np.array([no, yes]).take(np.asarray(mask, dtype=bool).view(np.uint8), mode="clip")


def _weighted(mask: np.ndarray, value: Any) -> np.ndarray:
    """`value` where `mask`, else 0.0 (a product, which numpy runs faster than `np.where`, when value is finite)."""
    v = float(value)
    return mask * v if math.isfinite(v) else np.where(mask, v, 0.0)


def _factorize(a: np.ndarray) -> tuple[np.ndarray, Any]:
    """codes (one per row) and the values they stand for, as pandas' factorize gives them (`_arithmetic` where it
    can)."""
    coded = _arithmetic(a)
    return coded if coded is not None else factorize(a)


def _arithmetic(a: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """A float column of positive whole numbers, tenths or hundredths in a short range (ages, laboratory values as
    recorded) coded by arithmetic, with no hash pass: the code is value x 10^d minus the lowest, and every value of
    the range has a code (a value no row holds is computed too, and never used: so the range is at most an eighth
    of the rows, or 4096). None: no such coding."""
    if a.dtype.kind == "f" and a.size >= 4096:
        head = a[:32]
        for scale in (1.0, 10.0, 100.0):
            if not (np.rint(head * scale) / scale == head).all():
                continue
            k = np.rint(a * scale) if scale != 1.0 else np.rint(a)
            if not np.array_equal(k / scale if scale != 1.0 else k, a):
                break
            lo, hi = float(k.min()), float(k.max())
            if lo > 0 and hi - lo < max(4096, a.size // 8):  # (positive: a zero's sign is never lost)
                k -= lo
                return k.astype(np.intp), (np.arange(hi - lo + 1) + lo) / scale
            break
    return None


class Columns:
    """What a vectorised calculator may read: typed input columns, constants, tables, sub-results."""

    def __init__(self, calc: Calculator, cells: dict[str, Any], n: int, variant: str, reg: Registry,
                 bad: np.ndarray | None = None, memo: dict[Any, Any] | None = None,
                 intish: np.ndarray | None = None):
        self.calc = calc
        self.cells = cells
        self.n = n
        self.variant = variant
        self.benchmark = variant == "benchmark"
        self.reg = reg
        self.slug = calc.slug
        self.bad = bad if bad is not None else np.zeros(n, dtype=bool)
        self.memo = memo if memo is not None else {}  # reads and sub-results shared with sub-calculators
        # rows where an input read as a Python int in a column of floats: the library's result could then be an
        # int where the array holds a float; `finish` sends such rows with a whole-number result to `compute`
        self.intish = intish if intish is not None else np.zeros(n, dtype=bool)
        # rows whose number is right but whose Python type (int or float) the arrays cannot tell (set by `finish`):
        # `compute_many` asks `compute` once per distinct combination of such rows' cells
        self.typed = np.zeros(n, dtype=bool)
        self.approximate = False  # numpy's log or exp were used (`NUMPY_MATH`): `round_to` guards its halves
        # inside `scoped`: the rows whose value is used (the branch of a `select` they take); `pow`, `log` and `exp`
        # compute only those (PREVENT computes each of its six equations for the rows that choose it)
        self.scope: np.ndarray | None = None

    # ------------------------------------------------------------------ registry data
    def const(self, name: str) -> Any:
        return self.calc.constants[name].value

    def band(self, name: str, x: np.ndarray) -> np.ndarray:
        """The first band that holds, as in `Table.band`; no band (and no default) gives NaN, which marks the row
        bad. Each row gets the number of its band (0: none), and the values are looked up by it."""
        t = self.calc.tables[name]
        assert t.bands is not None and len(t.bands) < 255
        which = np.zeros(len(x), dtype=np.uint8)  # 1 + the row's band, 0 while none holds
        for k, b in enumerate(t.bands, start=1):
            m = None
            for bound, op in ((b.ge, np.greater_equal), (b.gt, np.greater), (b.le, np.less_equal), (b.lt, np.less)):
                if bound is not None:
                    m = op(x, bound) if m is None else m & op(x, bound)
            m = which == 0 if m is None else m & (which == 0)
            which += m.view(np.uint8) * np.uint8(k)
        values = [np.nan if t.default is None else float(t.default)] + [float(b.value) for b in t.bands]
        out = np.array(values).take(which, mode="clip")
        if t.default is None:  # no band holds: `Context.band` refuses the patient
            self.bad |= which == 0
        return out

    def points(self, met: dict[str, np.ndarray], table: str = "points") -> np.ndarray:
        """`sum(lookup(table, name) for name, yes in met.items() if yes)`, criterion by criterion in that order
        (whole-number points, the usual case, are summed as small ints: the same sums, exactly)."""
        t = self.calc.tables[table]
        mapping = t.lookup if t.lookup is not None else t.points
        assert mapping is not None
        weights = []
        for name in met:
            weight = mapping[name] if name in mapping else t.default
            if weight is None:
                raise KeyError(f"{self.calc.slug}: {name!r} is not in table {table!r}")
            weights.append(weight)
        masks = [np.asarray(yes, dtype=bool) for yes in met.values()]
        if all(float(w).is_integer() for w in weights) and sum(abs(int(w)) for w in weights) < 2 ** 15:
            acc = np.zeros(self.n, dtype=np.int16)
            for yes, w in zip(masks, weights):
                acc += yes * np.int16(w)
            total = acc.astype(float)
        else:
            total = np.zeros(self.n)
            for yes, w in zip(masks, weights):
                total += _weighted(yes, w)  # weight or 0.0, in the library's order
        floats = [yes for yes, w in zip(masks, weights) if type(w) is not int]
        if floats and len(floats) < len(masks):  # the library's sum stays a Python int where no float weight is met
            met_float = np.zeros(self.n, dtype=bool)
            for yes in floats:
                met_float |= yes
            self.memo[("int points", id(total))] = (total, ~met_float)  # (`finish` reads it)
        return total

    def equals(self, name: str, option: str | None) -> np.ndarray:
        """`Context.choice(name) == option` for every row. A coded text column compares its codes (the strings
        are never spread over the rows); any other column compares what `read("choice", ...)` gives."""
        column = self.cells.get(name)
        if not isinstance(column, Coded):
            return self.read("choice", name) == option
        key = (self.calc.slug, "coded-choice", name)
        if key not in self.memo:
            missing = bool((column.codes < 0).any())
            codes = np.where(column.codes < 0, len(column.uniques), column.codes) if missing else column.codes
            cells = [_as_cell(u, None) for u in column.uniques] + ([MISSING] if missing else [])
            results, failed = [], []
            for cell in cells:
                try:
                    results.append(Context(self.calc, {} if cell is MISSING else {name: cell}, self.variant, self.reg,
                                           _compute).choice(name))
                    failed.append(False)
                except (CalculatorError, TypeError, ValueError, KeyError):
                    results.append(None)
                    failed.append(True)
            if any(failed):
                self.bad |= np.isin(codes, [k for k, f in enumerate(failed) if f])
            self.memo[key] = (codes, results)
        codes, results = self.memo[key]
        hits = [k for k, r in enumerate(results) if r == option]
        out = np.zeros(self.n, dtype=bool)
        for k in hits:
            out |= codes == k
        return out

    def r(self, x: np.ndarray) -> np.ndarray:
        """`Context.r`: an intermediate step rounded as the benchmark does (identity in the published variant)."""
        units = self.reg.units
        assert units is not None
        if not self.benchmark:
            return x
        x = np.asarray(x)
        if self.scope is not None and x.dtype.kind == "f" and x.size == self.n and self.scope.sum() * 4 < self.n:
            out = x.copy()  # a sparse `scoped` branch: its rows rounded (the others are not used)
            rows = np.flatnonzero(self.scope)
            out[rows] = round_array(x[rows], units.rounding)
        else:
            out = round_array(x, units.rounding)
        if out.dtype.kind == "f":  # `round_number` gives the int 0 for zero: what the kernel computes on with
            self.intish |= out == 0
        return out

    # ------------------------------------------------------------------ inputs
    def read(self, method: str, name: str, **kw: Any) -> np.ndarray:
        """The column as the library's accessor `Context.<method>` reads it.

        Numbers given with a unit (or bare, for `number`), booleans for `flag` and option strings for
        `choice` are read with numpy: units converted once per unit group, ranges checked as masks.
        Every other cell (missing, text, odd types, multi-part values) goes through the accessor
        itself, once per distinct cell. A row the accessor would refuse is marked bad.
        """
        memo_key = (self.calc.slug, method, name, tuple(sorted(kw.items())))
        if memo_key in self.memo:
            return self.memo[memo_key]
        column = self.cells.get(name)
        out = None
        if isinstance(column, Pair):
            if column.ints is not None and method not in ("flag", "choice"):
                self.intish |= column.ints  # the library reads those rows as ints: `finish` checks their type
            fast = self._fast(method, name, column, kw)
            if fast is not None:
                out, done = fast
                # inside a `scoped` branch only its rows are read cell by cell (a row outside it is neither used nor
                # refused here, and the read is forgotten when the branch ends): MME reads each opioid's dose in the
                # rows that give it, 1,000,000 rows with twelve opioids 1.2 s -> 0.5 s (measured)
                left = ~done if self.scope is None else ~done & self.scope
                if left.any():
                    rest = np.flatnonzero(left)
                    out = out.copy()  # never write into the caller's column
                    out[rest] = self._by_cell(method, name, column.take(rest), len(rest), kw, rest)
        if out is None:
            out = self._by_cell(method, name, column, self.n, kw, None)
        self.memo[memo_key] = out
        return out

    def _fast(self, method: str, name: str, col: Pair, kw: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
        """(values, rows read here) for a numeric, boolean or option-string column; None: no array form."""
        v = col.values
        kind = v.dtype.kind
        spec = plan(self.calc).specs.get(name)
        if spec is None:
            return None
        if method == "flag":
            if kind != "b" or col.units is not None:
                return None
            return v, np.ones(len(v), dtype=bool)
        if method == "choice":
            if kind != "O" or col.units is not None:
                return None
            done = np.zeros(len(v), dtype=bool)
            for option in spec.options:
                done |= v == option
            return v, done
        if kind not in "iuf":
            return None
        if method == "given_number":
            if col.units is None:
                return None
            return v, ~np.isnan(v) if kind == "f" else np.ones(len(v), dtype=bool)
        if method == "number":
            if col.units is not None:
                return None
            return self._checked(spec, v, ~np.isnan(v) if kind == "f" else np.ones(len(v), dtype=bool), spec.unit)
        if col.units is None or method not in _UNIT_METHODS:
            return None
        return self._fast_units(method, spec, col, kw)

    def _fast_units(self, method: str, spec: Any, col: Pair, kw: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
        """`_fast` for a numeric column with units: converted with numpy once per unit group."""
        v = col.values
        assert col.units is not None
        given = ~np.isnan(v) if v.dtype.kind == "f" else np.ones(len(v), dtype=bool)
        if isinstance(col.units, str) and given.all():  # one unit, every row given: no row selection at all
            got = self._convert(method, spec, v, col.units, kw)
            if got is None:
                return None
            out, ok = got
            self.bad |= ~ok
            return out, np.ones(len(v), dtype=bool)
        if isinstance(col.units, str):
            groups: list[tuple[str, np.ndarray]] = [(col.units, np.flatnonzero(given))]
        else:
            codes, uniq = unit_codes(col.units)
            groups = [(u, np.flatnonzero((codes == k) & given)) for k, u in enumerate(uniq) if isinstance(u, str)]
        parts = []
        for unit, rows in groups:
            got = self._convert(method, spec, v[rows], unit, kw) if rows.size else None
            if got is not None:  # None: the accessor names the problem (unknown or refused unit), row by row
                parts.append((rows, *got))
        return self._combine(parts, len(v))

    def _combine(self, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n: int) -> tuple[np.ndarray, np.ndarray]:
        """One column from the unit groups: (rows, values, in range). Python keeps an int an int where the
        conversion leaves it unchanged; in a column whose groups mix ints and floats the int rows are `intish`."""
        floats = any(vals.dtype.kind == "f" for _, vals, _ in parts)
        out = np.zeros(n, dtype=float if floats or not parts else np.int64)
        done = np.zeros(n, dtype=bool)
        for rows, vals, ok in parts:
            out[rows] = vals
            done[rows] = True
            self.bad[rows[~ok]] = True
            if floats and vals.dtype.kind != "f":
                self.intish[rows] = True
        return out, done

    def _convert(self, method: str, spec: Any, v: np.ndarray, unit: str,
                 kw: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
        """`Context.<method>` for the rows of one unit: (values, rows within range); None: unit refused."""
        units = self.reg.units
        assert units is not None
        conv: Any = ArrayConverter(units, exact=not self.benchmark)  # its methods take arrays where they take floats
        if spec.accepted_units and unit not in spec.accepted_units and method != "dose":  # (a dose's unit as typed)
            try:  # 'lb' is 'lbs', 'umol/L' is 'µmol/L': read once per distinct unit, as `compute` reads it
                unit = conv.read_unit(unit, accepted_parts(spec))
            except ConversionError:
                return None  # two readings: the row is refused, by `compute`'s own message
            if unit not in spec.accepted_units:
                return None
        out: Any
        try:
            if method == "quantity":
                mm, val = spec.molar_mass, None
                if spec.analyte:
                    a = units.analytes[spec.analyte]
                    mm = mm if mm is not None else a.molar_mass
                    val = a.valence
                out = conv.concentration(v, unit, spec.unit or "", mm, val)
            elif method in ("measurement", "doses_per_day"):
                out = v
            elif method == "dose":  # converted to its canonical unit (range-checked there), then to the unit asked for
                canonical = spec.unit or "mg"
                in_canonical = _column(conv.mass(v, unit, canonical, None, None), len(v))
                target = kw["unit"]
                out = in_canonical if target == canonical else _column(conv.mass(v, unit, target, None, None), len(v))
                return out, self._in_range(spec, in_canonical)
            elif method == "weight":
                out = conv.weight_kg(v, unit)
            elif method == "temperature":
                out = conv.temperature_c(v, unit)
            elif method == "count_per_litre":
                out = conv.count_per_litre(v, unit)
            elif method == "age":
                out = conv.age_years([v, unit])
            else:  # height
                target = kw.get("unit", "m")
                out = conv.height([v, unit], target)
                out = _column(out, len(v))
                ok = np.isfinite(out) if spec.range is None else self._in_range(spec, out * units.height[target])
                return out, ok
        except (ConversionError, TypeError, KeyError):
            return None
        out = _column(out, len(v))
        return out, self._in_range(spec, out)

    @staticmethod
    def _in_range(spec: Any, x: np.ndarray) -> np.ndarray:
        if spec.range is None:
            return np.isfinite(x)
        lo, hi = spec.range
        ok = np.greater_equal(x, lo)  # NaN fails both comparisons
        ok &= x <= hi
        if not (math.isfinite(lo) and math.isfinite(hi)):
            ok &= np.isfinite(x)
        return ok

    def _checked(self, spec: Any, v: np.ndarray, given: np.ndarray, unit: str | None) -> tuple[np.ndarray, np.ndarray]:
        ok = self._in_range(spec, v)
        rows = np.flatnonzero(given)
        self.bad[rows[~ok[rows]]] = True
        return v, given

    def _by_cell(self, method: str, name: str, column: Any, n: int, kw: dict[str, Any],
                 rows: np.ndarray | None) -> np.ndarray:
        """The accessor run once per distinct cell; `rows`: where these cells sit in the chunk (None: all)."""
        codes, uniques = distinct(column, n)
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
        if method == "date":  # a date as its day number (`Columns.add_days`, `days_between` count in days)
            results = [1 if f else v.toordinal() for v, f in zip(results, failed)]
        dtype: Any = bool if method == "flag" else float if numeric else object
        if numeric and method != "flag" and results:
            ints = [type(v) is int for v in results]
            if all(ints):
                dtype = np.int64  # Python keeps ints ints (the output type follows)
            elif any(ints):  # a column mixing ints and floats: see `intish`
                mixed = np.array(ints, dtype=bool)[codes]
                if rows is None:
                    self.intish |= mixed
                else:
                    self.intish[rows[mixed]] = True
        table = np.array(results, dtype=dtype) if results else np.array([], dtype=dtype)
        out = table[codes] if len(codes) else np.array([], dtype=dtype)
        if any(failed):
            bad = np.array(failed, dtype=bool)[codes]
            if rows is None:
                self.bad |= bad
            else:
                self.bad[rows[bad]] = True
        if method == "choice" and rows is None:  # a lookup by these options reads the codes (`lookup`)
            self.memo[("options", id(out))] = (out, codes, results)
        return out

    # ------------------------------------------------------------------ dose inputs (`Context`'s special forms)
    def given_drugs(self, dose: str, frequency: str, none_given: str) -> list[str]:
        """`Context.given_drugs` over the rows: the drugs whose dose some row gives, in the order of the table's
        columns (the order in which `compute_many` hands a row's entities to `compute`); a row with a frequency
        but not its dose, or with no dose at all, is refused."""
        specs = plan(self.calc).specs
        drugs, some = [], np.zeros(self.n, dtype=bool)
        for k in self.cells:
            if k.endswith(dose) and k in specs:
                given = self.has(k)
                if given.any():
                    drugs.append(k[: -len(dose)])
                    some |= given
        for k in self.cells:
            if k.endswith(frequency) and k in specs:
                self.bad |= self.has(k) & ~self.has(k[: -len(frequency)] + dose)
        self.bad |= ~some
        return drugs

    def dose(self, name: str, unit: str) -> np.ndarray:
        return self.read("dose", name, unit=unit)

    def doses_per_day(self, name: str, dose: str) -> np.ndarray:
        return self.read("doses_per_day", name, dose=dose)

    def named_dose(self, name: str, table: str, form: str) -> tuple[np.ndarray, np.ndarray]:
        """`Context.named_dose` for every row: (each row's drug, as an object column whose lookups read its codes, and
        its dose in the input's unit). A `Triples` column is read with numpy, one unit group at a time; any other
        column by `Context.named_dose` once per distinct cell."""
        key = (self.calc.slug, "named_dose", name, table)
        if key in self.memo:
            return self.memo[key]
        column = self.cells.get(name)
        spec = self.spec(name)
        if isinstance(column, Triples):
            keys = self.calc.tables[table].lookup or {}
            uniques = [u if u in keys else None for u in column.names.uniques] + [None]  # (a name not in the table,
            codes = np.where(column.names.codes < 0, len(uniques) - 1, column.names.codes)  # or none: refused)
            self.bad |= np.array([u is None for u in uniques], dtype=bool)[codes]
            if column.ints is not None:
                self.intish |= column.ints
            parts = []
            for k, unit in enumerate(column.units.uniques):
                rows = np.flatnonzero((column.units.codes == k) & (column.names.codes >= 0))
                got = self._convert("dose", spec, column.values[rows], unit, {"unit": spec.unit or "mg"}) \
                    if rows.size else None
                if got is None:
                    self.bad[rows] = True
                else:
                    parts.append((rows, *got))
            mg, _ = self._combine(parts, self.n)
        else:
            codes, cells = distinct(column, self.n)
            results: list[tuple[str | None, float]] = []
            failed = []
            for cell in cells:
                try:
                    results.append(Context(self.calc, {} if cell is MISSING else {name: cell}, self.variant, self.reg,
                                           _compute).named_dose(name, table, form))
                    failed.append(False)
                except (CalculatorError, TypeError, ValueError, KeyError):
                    results.append((None, 1.0))
                    failed.append(True)
            self.bad |= np.array(failed, dtype=bool)[codes]
            uniques = [r[0] for r in results]
            doses = [r[1] for r in results]
            ints = [type(d) is int for d in doses]
            mg = np.array(doses, dtype=np.int64 if all(ints) else float)[codes]
            if any(ints) and not all(ints):
                self.intish |= np.array(ints, dtype=bool)[codes]
        drug = np.asarray(uniques, dtype=object)[codes]
        self.memo[("options", id(drug))] = (drug, codes, uniques)  # (`lookup` by these drugs reads the codes)
        self.memo[key] = drug, mg
        return drug, mg

    def sub(self, slug: str) -> np.ndarray:
        """The finished result of a calculator this one depends on, over the same rows."""
        if slug not in self.calc.depends_on:
            raise KeyError(f"{self.calc.slug}: {slug!r} is not in depends_on")
        if ("sub", slug) not in self.memo:
            other = self.reg.calculators[slug]
            sub = Columns(other, self.cells, self.n, self.variant, self.reg, self.bad, self.memo, self.intish)
            sub.scope = self.scope
            out = finish(sub, FUNCTIONS[slug](sub), top=False)
            if other.output.rounding == "round_number" and out.dtype.kind == "f":
                self.intish |= out == 0  # `round_number` gives the int 0 for zero: what the caller computes with
            self.memo[("sub", slug)] = out
        return self.memo[("sub", slug)]

    def ok(self) -> np.ndarray:
        return ~self.bad

    def live(self) -> np.ndarray:
        """The rows whose values count here: not refused, and in the current `scoped` branch."""
        return ~self.bad if self.scope is None else ~self.bad & self.scope

    # ------------------------------------------------------------------ the kernel's reader: `Context`'s names
    # (each as `Context` reads it, over the column; see `solver.library.functions`)
    def quantity(self, name: str) -> np.ndarray:
        return self.read("quantity", name)

    def measurement(self, name: str) -> np.ndarray:
        return self.read("measurement", name)

    def number(self, name: str) -> np.ndarray:
        return self.read("number", name)

    def weight(self, name: str = "weight") -> np.ndarray:
        return self.read("weight", name)

    def height(self, name: str = "height", unit: str = "m") -> np.ndarray:
        return self.read("height", name, unit=unit)

    def age(self, name: str = "age") -> np.ndarray:
        return self.read("age", name)

    def temperature(self, name: str) -> np.ndarray:
        return self.read("temperature", name)

    def count_per_litre(self, name: str) -> np.ndarray:
        return self.read("count_per_litre", name)

    def flag(self, name: str) -> np.ndarray:
        return self.read("flag", name)

    def flags(self, names: Any) -> dict[str, np.ndarray]:
        return {n: self.read("flag", n) for n in names}

    def choice(self, name: str) -> np.ndarray:
        return self.read("choice", name)

    def choice_is(self, name: str, option: str | None) -> np.ndarray:
        return self.equals(name, option)

    def is_none(self, x: Any) -> Any:
        """`Context.is_none` for every row; a choice column as read tests its distinct options, not its rows."""
        known = self.memo.get(("options", id(x)))
        if known is not None and known[0] is x:
            _, codes, uniques = known
            return np.array([u is None for u in uniques], dtype=bool)[codes]
        return pandas_module().isna(np.asarray(x, dtype=object))

    def any_flag(self, *names: str) -> np.ndarray:
        out = self.read("flag", names[0])
        for n in names[1:]:
            out = out | self.read("flag", n)
        return out

    @staticmethod
    def where(cond: Any, yes: Any, no: Any) -> Any:
        if np.ndim(cond) == 0:
            return yes if cond else no
        if np.ndim(yes) == 0 and np.ndim(no) == 0:
            return pick(cond, yes, no)
        return np.where(cond, yes, no)

    def select(self, cases: Any, default: Any) -> Any:
        """`Context.select` over arrays: every branch is computed for every row (a function once), and a refusal
        inside a function counts only for the rows that reach (a condition) or take (a value) it."""
        conds, values = [], []
        left = np.ones(self.n, dtype=bool)  # rows no earlier condition took
        for cond, value in cases:
            c = np.broadcast_to(np.asarray(self.scoped(left, cond) if callable(cond) else cond, dtype=bool), (self.n,))
            conds.append(c)
            values.append(self.scoped(left & c, value) if callable(value) else value)
            left = left & ~c
        return np.select(conds, values, self.scoped(left, default) if callable(default) else default)

    def scoped(self, rows: np.ndarray, fn: Callable[[], Any]) -> Any:
        """`fn()` over every row, its refusals (and int-typed rows) kept only where `rows` holds. Reads made inside
        are forgotten afterwards, so a read of the same input outside marks its own refusals."""
        if rows.all():
            return fn()
        bad, intish, known = self.bad.copy(), self.intish.copy(), set(self.memo)
        outer = self.scope
        self.scope = rows if outer is None else rows & outer
        try:
            out = fn()
        finally:
            self.scope = outer
        self.bad[:] = bad | (self.bad & rows)
        self.intish[:] = intish | (self.intish & rows)
        for k in [k for k in self.memo if k not in known]:
            del self.memo[k]
        return out

    def has(self, name: str) -> Any:
        """`Context.has` for every row: the input is declared and the cell given (worked out once per column)."""
        key = ("has", name)
        if key not in self.memo:
            self.memo[key] = self._has(name)
        return self.memo[key]

    def _has(self, name: str) -> Any:
        column = self.cells.get(name)
        if name not in plan(self.calc).specs or column is None:
            return np.zeros(self.n, dtype=bool)
        if isinstance(column, Coded):
            return column.codes >= 0
        if isinstance(column, Triples):
            return column.names.codes >= 0
        if isinstance(column, Pair):
            v = column.values
            odd = column.odd_rows()
            if v.dtype.kind == "f":
                return ~np.isnan(v) if odd is None else ~np.isnan(v) | odd
            if v.dtype.kind in "biu":
                return np.ones(self.n, dtype=bool)
            return np.fromiter((not _absent(x) for x in v.tolist()), bool, self.n)
        return np.fromiter((c is not MISSING for c in column), bool, self.n)

    def if_given(self, name: str, read: Callable[[], Any], default: Any) -> Any:
        given = self.has(name)
        if not given.any():
            return default
        return self.where(given, self.scoped(given, read), default)

    def require(self, name: str, message: str) -> None:
        self.bad |= ~self.has(name)

    def unit_is(self, name: str, unit: str) -> Any:
        """`Context.unit_is` for every row (each distinct unit spelling normalised once)."""
        def same(u: Any) -> bool:
            return isinstance(u, str) and normalise_unit(u) == unit

        column = self.cells.get(name)
        if isinstance(column, Pair):
            odd = column.odd_rows()
            if column.units is None or isinstance(column.units, str):
                out = np.full(self.n, same(column.units))
            else:
                codes, uniques = unit_codes(column.units)
                hits = np.array([same(u) for u in uniques] + [False], dtype=bool)
                out = hits[codes]  # (code -1, no unit, takes the appended False)
            if odd is not None and odd.any():
                assert column.odd is not None
                for i in np.flatnonzero(odd).tolist():
                    c = column.odd[i]
                    out[i] = isinstance(c, (list, tuple)) and len(c) == 2 and same(c[1])
            return out
        if column is None or isinstance(column, Coded):
            return np.zeros(self.n, dtype=bool)
        return np.fromiter((isinstance(c, (list, tuple)) and len(c) == 2 and same(c[1]) for c in column), bool,
                           self.n)

    recording = False  # (as `Context.recording`: arrays are never recorded)

    @staticmethod
    def step(label: str, value: Any, unit: str | None = None, *args: Any) -> Any:
        """A step of the working (recorded by the scalar `WorkingContext` only): the values, unchanged."""
        return value

    def scalar_only(self, reason: str) -> None:
        raise NotColumnar(f"{self.slug}: {reason}")

    def given_number(self, name: str) -> np.ndarray:
        return self.read("given_number", name)

    def date(self, name: str) -> np.ndarray:
        """`Context.date` for every row, as day numbers (`date.toordinal`)."""
        return self.read("date", name)

    @staticmethod
    def add_days(day: Any, days: Any) -> Any:
        return day + np.floor(np.asarray(days, dtype=float)).astype(np.int64)  # (whole days, as a date adds them)

    @staticmethod
    def days_between(a: Any, b: Any) -> Any:
        return a - b

    def accept_unit(self, name: str, unit: str) -> None:
        accepted = self.spec(name).accepted_units
        if accepted and unit not in accepted:
            self.bad |= True

    def check_range(self, name: str, value: Any, unit: str | None) -> Any:
        """`Context.check_range` for every row: a value outside the input's range (or not finite) refuses the row."""
        self.bad |= ~self._in_range(self.spec(name), np.asarray(value, dtype=float))
        return value

    def lookup(self, name: str, key: Any) -> Any:
        """`Context.lookup` for every row's key (an option, or one key for every row); a key the table lacks
        (and no default) refuses the row."""
        t = self.calc.tables[name]
        mapping = t.lookup if t.lookup is not None else t.points
        assert mapping is not None

        def one(k: Any) -> float:
            if k in mapping:
                return mapping[k]
            return np.nan if t.default is None else t.default

        if np.ndim(key) == 0:
            v = one(key)
            if isinstance(v, float) and math.isnan(v):
                raise KeyError(f"{self.slug}: {key!r} is not in table {name!r}")
            return v
        known = self.memo.get(("options", id(key)))
        if known is not None and known[0] is key:  # a choice column as read: its codes and options, no hash pass
            _, codes, uniques = known
            values = [one(u) for u in uniques]
        else:
            codes, found = pandas_module().factorize(np.asarray(key, dtype=object), use_na_sentinel=False)
            values = [one(_py(u)) for u in found.tolist()]
        table = np.array(values, dtype=np.int64 if all(type(v) is int for v in values) else float)
        out = table[codes]
        if table.dtype.kind == "f":
            self.bad |= np.isnan(out)
        return out

    def spec(self, name: str) -> Any:
        return plan(self.calc).specs[name]

    def table(self, name: str) -> Any:
        return self.calc.tables[name]

    @property
    def units(self) -> Any:
        """The registry's unit data (`Context.units`)."""
        return self.reg.units

    def analyte(self, name: str) -> Any:
        units = self.reg.units
        assert units is not None
        return units.analytes[self.spec(name).analyte]

    @property
    def conv(self) -> ArrayConverter:
        units = self.reg.units
        assert units is not None
        return ArrayConverter(units, exact=not self.benchmark)

    def raw(self, name: str) -> Any:
        """The input's column as given (for `note`, whose record the columnar path does not keep)."""
        return self.cells.get(name)

    def note(self, name: str, given: Any, value: Any, unit: str | None) -> Any:
        return value  # the columnar path keeps no per-row record

    def note_as_given(self, name: str, value: Any, unit: str | None) -> Any:
        return value

    @staticmethod
    def minimum(a: Any, b: Any) -> Any:
        return np.minimum(a, b)

    @staticmethod
    def maximum(a: Any, b: Any) -> Any:
        return np.maximum(a, b)

    @staticmethod
    def clip(x: Any, lo: Any, hi: Any) -> Any:
        return np.minimum(np.maximum(x, lo), hi)

    def pow(self, a: Any, b: Any) -> Any:
        """Python's `**`, once per distinct pair of arguments (numpy's power could round differently)."""
        if np.ndim(a) == 0 and np.ndim(b) == 0:
            return a ** b
        return elementwise(operator.pow, a, b, ok=self.live())

    def log(self, a: Any) -> Any:
        """`math.log`, once per distinct argument (numpy's log could round differently); numpy's for the
        calculators in `NUMPY_MATH` (a value `math.log` refuses, zero or below, is nan there too)."""
        if self.slug in NUMPY_MATH:
            self.approximate = True
            x = np.asarray(a, dtype=float)
            return np.where(x > 0, np.log(np.where(x > 0, x, 1.0)), np.nan)
        return elementwise(math.log, a, ok=self.live())

    def exp(self, a: Any) -> Any:
        """`math.exp`, once per distinct argument (numpy's exp could round differently); numpy's for the
        calculators in `NUMPY_MATH` (an overflow, which `math.exp` refuses, is nan there too)."""
        if self.slug in NUMPY_MATH:
            self.approximate = True
            out = np.exp(np.asarray(a, dtype=float))
            return np.where(np.isfinite(out), out, np.nan)
        return elementwise(math.exp, a, ok=self.live())

    @staticmethod
    def sqrt(a: Any) -> Any:
        return np.sqrt(a)  # IEEE-754 square roots are correctly rounded: the same double as math.sqrt

    @staticmethod
    def trunc(a: Any) -> Any:
        return np.trunc(a)

    def round_to(self, x: Any, step: Any) -> Any:
        """`round` to the step's decimals over the array. After numpy's log or exp (`NUMPY_MATH`) a row whose
        value lies within `_NEAR_HALF` of a half step is refused, so `compute` rounds it: there one unit in
        the last place of an exp could decide the rounding; everywhere else it cannot."""
        if self.approximate:
            scaled = np.asarray(x, dtype=float) * 10.0 ** step.decimals
            self.bad |= np.abs(scaled - np.floor(scaled) - 0.5) < _NEAR_HALF
        return rnd.round_array(x, step)

    def refuse(self, cond: Any, variable: str | None, message: Callable[[], str], error: Any = None) -> None:
        """The rows where `cond` holds are refused (`compute` words the refusal)."""
        self.bad |= np.asarray(cond, dtype=bool)


def finish(cols: Columns, raw: np.ndarray, *, top: bool = True) -> np.ndarray:
    """The library's output rounding (`rounding.finish`) and cross-input plausibility rules (refused as published,
    as `compute` does), over the array; failures mark the row bad."""
    calc, reg = cols.calc, cols.reg
    units = reg.units
    if units is None:  # as in `Context`: the loader reports a missing units.yaml
        raise ValueError("the registry has no unit data (formulas/units.yaml)")
    rounding, rule = calc.output.rounding, units.rounding
    how = plan(calc).finishing[cols.variant]  # the one decision `compute` follows too (solver.library.rounding)
    if how.kind in ("date", "weeks_days"):
        return _calendar(cols, raw, how.kind)
    if np.ndim(raw) == 0:  # a kernel that read no column (MME where no row gives a dose: every row refused)
        raw = np.full(cols.n, raw)
    if raw.dtype.kind in "iu":  # Python ints: each rounding leaves an int as it is
        out = raw
    elif how.kind == "published":  # the publication's rounding (registry data); int() of it for an integer output
        assert how.rule is not None
        out = rnd.round_array(raw, how.rule)
        if how.whole:
            out = np.trunc(out)
    elif how.kind == "round_number":
        out = round_array(raw, rule)
    elif how.kind == "integer":  # int(round(x, 0)): rint rounds half to even, exactly as Python's round
        out = np.rint(raw)
    else:  # "none": the number as it is
        out = raw
    # a non-finite raw number stays non-finite through every rounding (a refused row's number is never used:
    # `compute` answers for it)
    cols.bad |= ~np.isfinite(out)
    if rounding == "integer" and out.dtype.kind == "f":  # an int beyond int64: `compute` gives it
        cols.bad |= ~(np.abs(out) < 2.0 ** 62)
    exact_ints = _int_points(cols, raw, how.kind)
    if top and out.dtype.kind == "f" and rounding != "integer" and calc.slug not in FLOAT_RESULT and cols.intish.any():
        cols.typed |= cols.intish & (out == np.floor(out))
    if cols.variant == "published":  # the rules on the output only: a rule on two inputs warns, as in `compute`
        for lo, hi in plan(calc).output_rules:  # (Framingham's HDL-below-total rule refused every risk under 1 %)
            cols.bad |= ~((out >= lo) & (out <= hi))
    if top and exact_ints is not None and exact_ints.any():  # those rows as the Python ints `compute` gives
        values = out.astype(object)
        rows = np.flatnonzero(exact_ints & np.isfinite(out))
        values[rows] = [int(v) for v in out[rows].tolist()]
        return values
    return out


_LAST_DAY = dt.date.max.toordinal()


def _int_points(cols: Columns, raw: Any, kind: str) -> np.ndarray | None:
    """The rows whose result is a point sum that Python keeps an int (no float weight met), when the result is that
    sum itself and its rounding keeps an int an int; a points sum computed with further (`intish`: `compute` decides
    for a whole-number row)."""
    found = [v for k, v in cols.memo.items() if k[0] == "int points"]
    exact = None
    for total, ints in found:
        if total is raw and kind in ("none", "round_number"):
            exact = ints
        else:
            cols.intish |= ints
    return exact


def _calendar(cols: Columns, raw: Any, kind: str) -> np.ndarray:
    """A date result (day numbers) as its ISO text, or (weeks, days) as [weeks, days], as `compute_many` writes a
    value: an object column (a day outside the calendar refuses the row, as `date` arithmetic does)."""
    out = np.empty(cols.n, dtype=object)
    if kind == "date":
        day = np.asarray(raw, dtype=np.int64)
        cols.bad |= (day < 1) | (day > _LAST_DAY)
        codes, uniques = factorize(np.where(cols.bad, 1, day))
        text = np.array([dt.date.fromordinal(int(d)).isoformat() for d in uniques.tolist()], dtype=object)
        out[:] = text[codes]
        return out
    weeks, days = (np.broadcast_to(np.asarray(a, dtype=np.int64), (cols.n,)) for a in raw)
    if cols.variant == "published":  # the output rules, on the age in weeks (as registry.plausibility reads it)
        x = weeks + days / 7
        for lo, hi in plan(cols.calc).output_rules:
            cols.bad |= ~((x >= lo) & (x <= hi))
    with collector_paused():  # the [weeks, days] lists, made in C
        return np.fromiter(np.stack([weeks, days], axis=1).tolist(), dtype=object, count=cols.n)


_GC_LOCK = threading.Lock()
_GC_HOLDERS = [0, False]  # chunks inside `collector_paused`, and whether the collector was on before the first


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic collector off while a column of a million small lists is made (chunks on other threads
    share one pause; it is back as it was when the last one leaves). The lists hold ints only, so no cycle is
    missed; without the pause the collector walks the growing column again and again: 1,000,000 [weeks, days]
    lists in 0.55 s, against 0.12 s paused (measured)."""
    with _GC_LOCK:
        if _GC_HOLDERS[0] == 0:
            _GC_HOLDERS[1] = gc.isenabled()
            gc.disable()
        _GC_HOLDERS[0] += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_HOLDERS[0] -= 1
            if _GC_HOLDERS[0] == 0 and _GC_HOLDERS[1]:
                gc.enable()


def round_array(x: np.ndarray, rule: Any) -> np.ndarray:
    """`round_number` over an array, bit for bit (the one columnar form of the library's output rounding).

    Python's `round(x, d)` is the double nearest to the exact decimal rounding of x. numpy's
    scale-rint-unscale gives the same double unless the scaled value sits within rounding error
    of a half (rint could then go the other way), or x is tiny (significant-digit rule), zero or
    huge: those rows are rounded by the library's own `round_number` (a zero, which it gives as
    the int 0, is 0.0 here). The final division is exact IEEE division of two representable
    integers, hence correctly rounded like Python's. An int array is returned as it is: `round_number`
    gives an int back unchanged (and the int 0 for zero).
    """
    if x.dtype.kind in "iu":
        return x
    return rnd.rint_or_exact(x, rule.decimals, lambda v: round_number(v, rule), small_below=rule.small_below,
                             zero=0.0, python_ties=True)


def round_places(x: np.ndarray, decimals: int) -> np.ndarray:
    """Python's `round(x, decimals)` over an array, bit for bit (as `round_array`, without the small-number rule)."""
    return rnd.rint_or_exact(x, decimals, lambda v: round(v, decimals), python_ties=True)

