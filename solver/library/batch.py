"""`compute_many`: one calculator over a table of patients (a pandas DataFrame), row errors kept.

Input columns, by default named as the benchmark's entities (`creatinine`, `age`, `sex`, ...):

- a cell holds the entity exactly as `compute` takes it: a bare value (`"Male"`, `True`, `9`) or
  a `[value, "unit"]` list (also as JSON text, as a CSV file stores it, e.g. `[1.2, "mg/dL"]`);
- or the column holds bare numbers and a sibling column `<column>_unit` holds each row's unit;
- `columns={"creatinine": "scr", "age": ("age_y", "years")}` maps entity names to other column
  names, or to a (column, unit) pair when every row has the same unit;
- an empty cell (None, NaN) means the entity was not given for that row (optional inputs take
  their registry default; a missing required input is that row's error).
Other columns (patient ids ...) are ignored.

The result has the frame's index and two columns: `value` (what `compute` returns, as
`Result.to_json` writes it: a number, an ISO date or [weeks, days]) and `error` (None, or the
library's error message for that row). `value` is a float64 (or int64) column when the columnar
path answered every row with a number of that one Python type, as a clean cohort gives (its
`tolist()` and iteration give Python floats or ints, as `compute`); otherwise an object column
(None for a row with an error); `details=True` adds `unit`, `warnings` and `inputs` (`_details`). One
bad row never fails the batch. Calculators whose kernel is columnar (`@calculator(..., columnar=True)`)
run that same kernel over numpy arrays (solver/library/vectorised.py holds the machinery); the others,
and any row the columnar path refuses, go through `compute` row by row, so every answer and every error
equals `compute`'s.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from registry.loader import Registry, get_registry
from registry.schema import Calculator, InputKind
from solver.library.arrow_columns import UNIT_KINDS, UNIT_SUFFIX, column_array, mapped_inputs, table_columns, text_codes
from solver.library.core import VARIANTS, resolve
from solver.library.json_cells import pair_arrays, parse, text_pairs, text_triples
from solver.library.table_compute import compute_columns, cores, thread_pool
from solver.library.vectorised import (
    MISSING,
    Coded,
    Pair,
    Triples,
    triples,
)

NUMERIC_KINDS = UNIT_KINDS | {InputKind.number, InputKind.count}
ColumnSpec = str | tuple[str, str]


def _plain(x: Any) -> Any:
    """numpy scalars and arrays as Python values (the library type-checks `int`, `float`, `bool`)."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return [_plain(e) for e in x.tolist()]
    if isinstance(x, (list, tuple)):
        return [_plain(e) for e in x]
    return x


def _absent(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NA or x is pd.NaT


def _cells(values: list[Any], units: list[Any] | None) -> list[Any]:
    """One cell per row, as `compute` takes it; JSON text (CSV) parsed once per distinct string."""
    parsed: dict[str, Any] = {}
    out = []
    for k, x in enumerate(values):
        x = _plain(x)
        if _absent(x):
            out.append(MISSING)
            continue
        if isinstance(x, str) and x.startswith("["):
            if x not in parsed:
                parsed[x] = parse(x)
            x = parsed[x]
        u = _plain(units[k]) if units is not None else None
        out.append([x, u] if u is not None and not _absent(u) and not isinstance(x, (list, tuple)) else x)
    return out


def _simple(s: pd.Series) -> bool:
    """A column of plain scalars of one kind (numbers, booleans or strings), fit for the array layout."""
    if s.dtype.kind in "biuf":
        return True
    if s.dtype == object or pd.api.types.is_string_dtype(s.dtype):
        kind = pd.api.types.infer_dtype(s, skipna=True)
        if kind == "string":
            return not s.dropna().astype(str).str.startswith("[").any()
    return False


def entity_columns(frame: pd.DataFrame, calc: Calculator, columns: Mapping[str, ColumnSpec] | None = None, *,
                   arrow: bool = True) -> dict[str, Any]:
    """entity name -> its column: a `Pair` of arrays (fast layout) or one cell per row (MISSING where not given).
    `arrow=False`: never hand a column to `arrow_columns` (which calls this for the shapes it does not read)."""
    columns, names = mapped_inputs(calc, columns)
    out: dict[str, Any] = {}
    specs = {i.name: i for i in calc.inputs}
    for name in sorted(names):
        spec = columns.get(name, name)
        fixed_unit = None
        if isinstance(spec, tuple):
            spec, fixed_unit = spec
        if spec not in frame.columns:
            if name in columns:
                raise ValueError(f"{calc.slug}: column {spec!r} (for input {name!r}) is not in the table")
            continue
        series = frame[spec]
        found = _typed_column(frame, series, spec, fixed_unit, calc, name, arrow)
        out[name] = found if found is not None else _column(frame, series, spec, fixed_unit, calc, specs[name])
    return out


def _typed_column(frame: pd.DataFrame, series: pd.Series, spec: str, fixed_unit: str | None, calc: Calculator,
                  name: str, arrow: bool) -> Any:
    """The column read by its type alone, or None: an arrow-backed or struct<value, unit> column (dd.read_parquet,
    pyarrow dtypes) through `arrow_columns`; a `category` column of text (pd.read_parquet's dictionary columns) by
    its codes; numbers with a `category` unit column as numbers and unit codes (no pass over the text)."""
    if arrow and _arrow_shaped(series):
        return _as_arrow(frame, spec, fixed_unit, calc, name)
    unit_col = f"{spec}{UNIT_SUFFIX}"
    has_units = fixed_unit is None and unit_col in frame.columns
    if isinstance(series.dtype, pd.CategoricalDtype) and fixed_unit is None and not has_units:
        return category_codes(series)
    if has_units and isinstance(frame[unit_col].dtype, pd.CategoricalDtype) and series.dtype.kind in "iuf":
        by_code = category_codes(frame[unit_col])
        return None if by_code is None else Pair(series.to_numpy(), by_code)
    return None


def _column(frame: pd.DataFrame, series: pd.Series, spec: str, fixed_unit: str | None, calc: Calculator,
            inp: Any) -> Any:
    """A column of any other layout: [value, unit] or [name, number, unit] cells (or their JSON text), values with
    a `<column>_unit` column or a fixed unit, plain text, or cell by cell."""
    name, kind = inp.name, inp.kind
    if isinstance(series.dtype, pd.CategoricalDtype):
        series = series.astype(object)
    named = _triples(series) if kind == InputKind.special and fixed_unit is None else None
    if named is not None:  # [name, number, "unit"] cells (a drug and its dose)
        return named
    pairs = _pairs(series) if fixed_unit is None and f"{spec}{UNIT_SUFFIX}" not in frame.columns else None
    if pairs is not None:
        return pairs
    if kind in NUMERIC_KINDS:
        series = _numbers(series)
    unit_col = f"{spec}{UNIT_SUFFIX}"
    units: pd.Series | str | None = None
    if fixed_unit is not None:
        units = fixed_unit
    elif unit_col in frame.columns:
        column = frame[unit_col]
        units = column.astype(object) if isinstance(column.dtype, pd.CategoricalDtype) else column
    elif kind in UNIT_KINDS and series.dtype.kind in "iuf" and series.notna().any():
        raise ValueError(_unit_hint(calc, name, spec, kind))
    plain_units = units is None or isinstance(units, str) or pd.api.types.infer_dtype(
        units, skipna=True) in ("string", "empty")
    coded = _coded(series, inp.options) if units is None and series.dtype.kind not in "biuf" else None
    if coded is not None:
        return coded
    if _simple(series) and plain_units:
        values = series.to_numpy(dtype=object if series.dtype.kind not in "biuf" else None)
        if series.dtype.kind in "biu" and units is None:
            values = series.to_numpy()
        return Pair(values, units if units is None or isinstance(units, str) else units.to_numpy(dtype=object))
    unit_list = None if units is None else [units] * len(series) if isinstance(units, str) else units.tolist()
    return _cells(series.tolist(), unit_list)


def _arrow_shaped(series: pd.Series) -> bool:
    """A column pandas holds as arrow data (`pd.ArrowDtype`), or of {"value", "unit"} dicts (a parquet struct
    column as pandas reads it): read as the Arrow schema is (`arrow_columns`)."""
    if isinstance(series.dtype, pd.ArrowDtype):
        return True
    if series.dtype != object or not len(series):
        return False
    first = next((c for c in series.array if not _absent(c)), None)
    return isinstance(first, dict) and set(first) == {"value", "unit"}


def _as_arrow(frame: pd.DataFrame, column: str, unit: str | None, calc: Calculator, name: str) -> Any:
    """The column (and its `<column>_unit` column) read by `arrow_columns`; None: not the Arrow schema."""
    import pyarrow as pa

    part = [column] + ([column + UNIT_SUFFIX] if unit is None and column + UNIT_SUFFIX in frame.columns else [])
    try:
        table = pa.Table.from_pandas(frame[part], preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    if pa.types.is_struct(table.schema.field(column).type) and {f.name for f in table.schema.field(column).type} \
            != {"value", "unit"}:
        return None
    found, _ = table_columns(table, calc, {name: (column, unit) if unit else column})
    return found.get(name)


def category_codes(series: pd.Series) -> Coded | None:
    """A `category` column of text (what `pd.read_parquet` gives for a dictionary column) as its own codes and
    categories (-1: not given), so no cell is read one by one; None when a category is not text."""
    cats = series.cat.categories.tolist()
    if not all(type(c) is str for c in cats) or any(c.startswith("[") for c in cats):
        return None
    return Coded(np.asarray(series.cat.codes.to_numpy()), cats)


def _pairs(series: pd.Series) -> Pair | None:
    """A column of `[number, "unit"]` cells (lists, or their JSON text as a CSV holds them; empty cells allowed) as
    arrays of values and units, so it converts with numpy like a `<column>_unit` layout; None: any other cell.
    Text is parsed once per distinct string. Ints among floats are kept as ints (`Pair.ints`)."""
    if series.dtype != object or not len(series):
        return None
    first = next((c for c in series.array if not _absent(c)), None)  # (the first cell, as a rule: no pass)
    if isinstance(first, str) and first.startswith("["):
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        return text_pairs(uniques.tolist(), codes)
    if not isinstance(first, (list, tuple)):
        return None
    cells = series.tolist()
    found = _clean_pairs(cells) or _sparse_pairs(series)
    if found is not None:
        return found
    return _pairs_and_others(series) or pair_arrays([None if _absent(c) else c for c in cells], None)


def _pairs_and_others(series: pd.Series) -> Pair | None:
    """A column of [number, "unit"] lists among lists of other lengths (a height as [5, "ft", 6, "in"]) and empty
    cells: the pairs read by `_clean_pairs` (in C), the other lists kept as given (`Pair.odd`: the library reads
    each distinct one). None: a cell that is no list, or a two-element list that is no plain pair. (Benchmark
    heights, 1,000,000 rows, 3 in 41 as feet and inches: 1.4 to 2.2 s cell by cell, 0.8 to 1.4 s here, three
    runs of each interleaved at load 6 on 2 cores.)"""
    cells = series.to_numpy(dtype=object)
    at = np.flatnonzero(pd.notna(cells))
    given = cells[at]
    if set(map(type, given)) - {list, tuple}:
        return None
    two = np.fromiter(map(len, given), np.int64, len(given)) == 2
    pairs = _clean_pairs(given[two].tolist())
    if pairs is None:
        return None
    n, rows, others = len(cells), at[two], at[~two]
    values, ints = np.full(n, np.nan), np.zeros(n, dtype=bool)
    values[rows] = pairs.values
    ints[rows] = pairs.values.dtype.kind in "iu" if pairs.ints is None else pairs.ints
    units = np.full(n, None, dtype=object)
    units[rows] = pairs.units
    odd = np.full(n, None, dtype=object)
    odd[others] = given[~two]
    return Pair(values, units, ints if ints.any() else None, odd if len(others) else None)


def _triples(series: pd.Series) -> Triples | None:
    """A column of `[name, number, "unit"]` cells (lists, or their JSON text, parsed once per distinct text; empty
    cells allowed) as `Triples`; None: any other cell."""
    if series.dtype != object or not len(series):
        return None
    first = next((c for c in series.array if not _absent(c)), None)
    if isinstance(first, str) and first.startswith("["):
        head = parse(first)
        if not (type(head) is list and len(head) == 3):  # (as a rule, the first cell tells: no pass over the texts)
            return None
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        return text_triples(uniques.tolist(), codes)
    if not (type(first) is list and len(first) == 3):
        return None
    cells = series.tolist()
    got = triples(cells, complete=True)  # (a column with an empty cell is no complete column of lists: tried again
    if got is None and series.isna().any():  # without them; `isna` of a million objects costs 0.05 s, measured)
        got = triples([MISSING if _absent(c) else c for c in cells])
    return got


_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)
_INT_TYPE = np.array(int, dtype=object)  # (a 0-d array: numpy compares each cell's type with it)


def _clean_pairs(cells: list[Any]) -> Pair | None:
    """`json_cells.pair_arrays` for the common column, every cell a [number, "unit"] of finite numbers (None: any other),
    read in C by `itemgetter` (measured 0.1 s for 1,000,000 cells, against 1.0 s cell by cell and 0.65 s by
    `zip(*cells)`)."""
    try:
        if set(map(len, cells)) != {2}:
            return None
        values, units = list(map(_FIRST, cells)), list(map(_SECOND, cells))
        vtypes, distinct = set(map(type, values)), set(units)
    except (TypeError, KeyError, IndexError):  # a cell without a length (None, NaN), a mapping, an unhashable unit
        return None
    if not vtypes <= {int, float} or not all(type(x) is str for x in distinct):
        return None
    v = np.fromiter(values, float, len(values))  # (the types checked above: numbers only; 25 ms per million, np.array 35 ms)
    if not np.isfinite(v).all() or (int in vtypes and not (np.abs(v) <= 2.0 ** 53).all()):
        return None
    u: Any = distinct.pop() if len(distinct) == 1 else np.array(units, dtype=object)  # one unit: no grouping
    if vtypes == {int}:
        return Pair(v.astype(np.int64), u)
    # (the type of every value compared with int in C: 0.03 s per million, against 0.055 s by a generator)
    ints = np.equal(np.fromiter(map(type, values), object, len(values)), _INT_TYPE) if int in vtypes else None
    return Pair(v, u, ints)


def _sparse_pairs(series: pd.Series) -> Pair | None:
    """`_clean_pairs` for a column of [number, "unit"] lists and empty (None, NaN) cells, as a column of an optional
    input holds them (MME's opioids: most rows take none of a given one): the lists read by `_clean_pairs`, spread
    back with NaN where empty, all in C (MME's 24 such columns of 1,000,000 rows as cells: 1.2x the loop before, as
    `json_cells.pair_arrays` read them cell by cell; about 7x now). None: any other cell (`_clean_pairs` checks every given
    one)."""
    cells = series.to_numpy(dtype=object)
    present = pd.notna(cells)  # (None, NaN: not given; 6 ms per million cells, against 28 ms by `is not None`)
    if present.all():
        return None
    got = _clean_pairs(cells[present].tolist())
    if got is None:
        return None
    values = np.full(len(cells), np.nan)
    values[present] = got.values
    ints = None
    if got.values.dtype.kind in "iu" or got.ints is not None:  # (rows read as Python ints, as `Pair.ints` marks them)
        ints = np.zeros(len(cells), dtype=bool)
        ints[present] = True if got.ints is None else got.ints
    units = got.units
    if units is not None and not isinstance(units, str):
        spread = np.full(len(cells), None, dtype=object)
        spread[present] = units
        units = spread
    return Pair(values, units, ints)


def _coded(series: pd.Series, options: list[str] | None) -> Coded | None:
    """A column of plain text (choices such as sex) or of booleans stored as objects (a criterion some rows do
    not give) as codes and its distinct values; None: anything else, or a cell is a `[value, "unit"]` list as
    JSON text. An arrow-backed column whose every cell is one of
    the input's options is coded against them in one pass (no hashing of the strings)."""
    if isinstance(series.dtype, pd.StringDtype) and series.dtype.storage == "pyarrow" and options:
        codes = _option_codes(series, options)
        if codes is not None:
            return Coded(codes, list(options))
    if series.dtype.kind in "biufc":
        return None
    kind = pd.api.types.infer_dtype(series, skipna=True)
    if kind == "boolean":  # True/False objects with empty cells (a criterion not given): coded like text
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        return Coded(np.asarray(codes), [bool(u) for u in uniques.tolist()])
    if kind != "string":
        return None
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    values = [_plain(u) for u in uniques.tolist()]
    if any(v.startswith("[") for v in values):  # [value, "unit"] cells: read by `_cells`
        return None
    return Coded(np.asarray(codes), values)


_SLICE_ROWS = 100_000  # an arrow text column at least twice this long is coded in slices, one per core


def _option_codes(series: pd.Series, options: list[str]) -> np.ndarray | None:
    """Each cell's index in `options`, or None when a cell is missing or not one of them (then pandas codes
    the column). Arrow looks the strings up without the GIL, so a long column is cut into slices (views,
    no copy) that the cores code side by side; the codes are the same as in one pass."""
    import pyarrow as pa
    import pyarrow.compute as pc

    array, value_set = pa.array(series.array), pa.array(options)
    parts = min(cores(), len(array) // _SLICE_ROWS)
    if parts < 2:
        found = [pc.index_in(array, value_set=value_set)]
    else:
        step = -(-len(array) // parts)
        slices = [array.slice(i, step) for i in range(0, len(array), step)]
        found = list(thread_pool().map(lambda a: pc.index_in(a, value_set=value_set), slices))
    if any(f.null_count for f in found):
        return None
    small = np.int8 if len(options) < 127 else np.int32  # (a code per row: the smaller, the faster)
    return np.concatenate([np.asarray(f.to_numpy(zero_copy_only=False), dtype=small) for f in found])






def _numbers(series: pd.Series) -> pd.Series:
    """A text column of numbers (a CSV column with one bad cell is read as text) as numbers, cell by cell:
    cells that read as numbers become numbers, the others stay as they are (that row's error names them)."""
    if series.dtype.kind in "biufc" or pd.api.types.infer_dtype(series, skipna=True) != "string":
        return series
    text = series.astype(object)
    if text.str.startswith("[").any():  # [value, "unit"] cells: read by `_cells`
        return series
    parsed = pd.to_numeric(text, errors="coerce")
    if parsed.isna().equals(text.isna()):
        return parsed
    if not parsed.notna().any():
        return series
    return text.map(_number, na_action="ignore")


def _number(text: Any) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except (TypeError, ValueError):
            pass
    return text


def _unit_hint(calc: Calculator, name: str, column: str, kind: Any) -> str:
    example = {"age": "years", "weight": "kg", "height": "cm", "temperature": "degrees celsius"}.get(
        getattr(kind, "value", str(kind)), "UNIT")
    spec = next(i for i in calc.inputs if i.name == name)
    if spec.unit and example == "UNIT":
        example = spec.unit
    return (f"{calc.slug}: column {column!r} holds bare numbers, but input {name!r} needs a unit: add a column "
            f"{column + UNIT_SUFFIX!r} (e.g. {example!r} in every row), or give one unit for the whole column with "
            f"--columns '{{\"{name}\": [\"{column}\", \"{example}\"]}}' (in Python: columns={{{name!r}: "
            f"({column!r}, {example!r})}})")




















def _read_table(frame: Any, calc: Calculator, columns: Mapping[str, ColumnSpec] | None
                ) -> tuple[dict[str, Any], int, pd.Index]:
    """(the input columns, rows, the result's index) of a DataFrame or an Arrow table or record batch (read by
    `arrow_columns`: no Python object per cell; the result is indexed 0..n-1)."""
    if isinstance(frame, pd.DataFrame):
        return entity_columns(frame, calc, columns), len(frame), frame.index
    if type(frame).__module__.startswith("pyarrow"):
        import pyarrow as pa

        if isinstance(frame, (pa.Table, pa.RecordBatch)):
            return _arrow_cells(frame, calc, columns), frame.num_rows, pd.RangeIndex(frame.num_rows)
    raise TypeError(f"compute_many takes a pandas DataFrame or a pyarrow Table or RecordBatch, "
                    f"not {type(frame).__name__}")


def _arrow_cells(table: Any, calc: Calculator, columns: Mapping[str, ColumnSpec] | None) -> dict[str, Any]:
    """`arrow_columns.table_columns`, and each column of another shape read by `read_other`."""
    cells, other = table_columns(table, calc, columns)
    read_other(cells, table, calc, other)
    return cells


def read_other(cells: dict[str, Any], table: Any, calc: Calculator, other: list[tuple[str, str, str | None]]) -> None:
    """Into `cells`: each Arrow column that `arrow_columns.table_columns` left (JSON text, lists: `other`, its
    (input, column, unit) triples), read by the DataFrame reader on that column (and its unit column) alone."""
    for name, column, unit in other:
        mapping = {name: (column, unit) if unit else column}
        part = [column] + ([column + UNIT_SUFFIX] if unit is None and column + UNIT_SUFFIX in table.schema.names
                           else [])
        coded = text_codes(column_array(table, column)) if len(part) == 1 else None
        if coded is not None:  # text: read once per distinct text, then spread to the rows by their codes
            distinct = pd.DataFrame({column: pd.Series([*coded.uniques, None], dtype=object)})
            found = entity_columns(distinct, calc, mapping, arrow=False).get(name)
            if found is not None:
                cells[name] = _spread(found, np.where(coded.codes < 0, len(coded.uniques), coded.codes))
            continue
        got = entity_columns(table.select(part).to_pandas(), calc, mapping, arrow=False)
        if name in got:
            cells[name] = got[name]


def _spread(found: Any, codes: np.ndarray) -> Any:
    """A column the reader gave for distinct cells, taken by each row's code (rows that share a text share its
    cell, as the reader's parse of each distinct text has them share it). `read_other` reads a text column this way:
    the reader's work is per cell (centor's `age` as JSON text, 1,000,000 rows: 1.6 s -> 0.1 s, measured)."""
    if isinstance(found, (Pair, Coded, Triples)):
        return found.take(codes)
    box = np.empty(len(found), dtype=object)
    for k, cell in enumerate(found):  # (one by one: a list cell must stay one object, not become a row of numpy)
        box[k] = cell
    return box[codes].tolist()


def compute_many(calculator: str | int, frame: Any, *, variant: str = "published",
                 columns: Mapping[str, ColumnSpec] | None = None, registry: Registry | None = None,
                 progress: Callable[[int], None] | None = None, vectorise: bool = True,
                 details: bool = False) -> pd.DataFrame:
    """Compute `calculator` for every row of `frame` (a DataFrame, or a pyarrow Table or RecordBatch in the schema
    of `solver.library.arrow_columns`); returns `value` and `error` columns (see module doc).

    `progress(n)` is called with the number of rows finished at each step. `vectorise=False`
    forces the row-by-row path (for comparison). `details=True` adds `unit`, `warnings` and `inputs`
    columns, and `working` (the steps behind the value, once per distinct combination of inputs): what `compute`'s
    `Result` holds for the row (None on a row with an error), see `table_compute._details`.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    reg = registry or get_registry()
    calc = resolve(calculator, reg)
    cells, n, index = _read_table(frame, calc, columns)
    got = compute_columns(calc, cells, n, variant, reg, progress=progress, vectorise=vectorise, details=details)
    result = pd.concat([pd.Series(got.values, index=index, dtype=got.values.dtype, copy=False, name="value"),  # no copy
                        pd.Series(got.errors, index=index, dtype=object, copy=False, name="error"),
                        *(pd.Series(col, index=index, dtype=object, copy=False, name=name)
                          for name, col in got.extra.items())], axis=1)
    result.attrs.update(got.attrs)
    return result
