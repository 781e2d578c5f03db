"""Arrow columns as the kernels' arrays: how `compute_many` reads a `pyarrow.Table` or `RecordBatch`.

The schema (docs/guide/cohorts-parquet.md), one entity per column, named as the entity (or mapped by `columns=`):

- a quantity: a numeric value column plus a `<name>_unit` column (string or dictionary), or one
  `struct<value, unit>` column, or a fixed unit for the whole column (`columns={"age": ("age_y", "years")}`);
- a criterion: a `bool` column; a choice (sex, ...): a string or dictionary column;
- null means not given (an optional input takes its registry default; a required one is that row's error).

No Python object is made per cell: values become one numpy array (NaN where null; an integer column stays
integers, as `compute` keeps a Python int), units and choices stay codes into their distinct values (a dictionary
column's own indices), so the kernels convert each distinct unit once with the library's own converter
(`vectorised.Columns`). A text column of JSON cells (a multi-part age, a drug's dose: what `formula convert` writes
for them) is parsed once per distinct text by the DataFrame reader's own rule (`json_cells`). A column of any other
shape (lists, dates as text) is left to the pandas reader (`batch.read_other`): the same answers, more slowly.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from registry.schema import Calculator, InputKind
from solver.library import arrow_buffers
from solver.library.json_cells import parse, text_pairs, text_triples
from solver.library.vectorised import Coded, Pair, Triples

UNIT_SUFFIX = "_unit"  # the column of a value column's units
UNIT_KINDS = frozenset({InputKind.quantity, InputKind.measurement, InputKind.age, InputKind.weight, InputKind.height,
                        InputKind.temperature, InputKind.count_per_volume})  # inputs whose numbers need a unit

_EXACT = 2.0 ** 53  # integers a float64 holds exactly


def source_column(name: str, columns: Mapping[str, Any]) -> tuple[str, str | None]:
    """(column, fixed unit or None) that input `name` is read from."""
    spec = columns.get(name, name)
    if isinstance(spec, (tuple, list)):
        return str(spec[0]), str(spec[1])
    return str(spec), None


def missing_inputs(calc: Calculator, names: list[str], columns: Mapping[str, Any] | None = None) -> list[str]:
    """The required inputs of `calc` (no registry default) that no column of `names` holds."""
    columns = columns or {}
    have = set(names)
    out = []
    for spec in calc.inputs:
        if spec.name == "*" or not spec.required or spec.default is not None:
            continue
        column, _ = source_column(spec.name, columns)
        if column not in have:
            out.append(spec.name)
    return out


def mapped_inputs(calc: Calculator, columns: Mapping[str, Any] | None) -> tuple[dict[str, Any], set[str]]:
    """(the `columns` mapping as a dict, the calculator's input names); ValueError naming an input it lacks. One
    check for a frame's reader and a table's."""
    mapping = dict(columns or {})
    names = {i.name for i in calc.inputs if i.name != "*"}
    unknown = sorted(set(mapping) - names)
    if unknown:
        raise ValueError(f"{calc.slug}: columns maps unknown input(s) {', '.join(map(repr, unknown))}; "
                         f"inputs: {', '.join(sorted(names))}")
    return mapping, names


def table_columns(table: Any, calc: Calculator, columns: Mapping[str, Any] | None = None
                  ) -> tuple[dict[str, Any], list[tuple[str, str, str | None]]]:
    """(entity name -> its `Pair`, `Coded` or `Triples` column, and the (name, column, fixed unit) of each column of another
    shape, which the caller reads as pandas does: `batch.compute_many` hands them to `entity_columns`)."""
    columns, names = mapped_inputs(calc, columns)
    have = set(table.schema.names)
    specs = {i.name: i for i in calc.inputs}
    out: dict[str, Any] = {}
    other: list[tuple[str, str, str | None]] = []
    for name in sorted(names):
        column, unit = source_column(name, columns)
        if column not in have:
            if name in columns:
                raise ValueError(f"{calc.slug}: column {column!r} (for input {name!r}) is not in the table")
            continue
        got = _entity(table, column, unit, specs[name].kind, have)
        if got is None:
            other.append((name, column, unit))
        else:
            out[name] = got
    return out, other


def column_array(table: Any, column: str) -> Any:
    """One column of a Table (its chunks joined) or a RecordBatch as one Arrow array."""
    col = table.column(column)
    return col.combine_chunks() if hasattr(col, "combine_chunks") else col


def _entity(table: Any, column: str, unit: str | None, kind: InputKind, have: set[str]) -> Pair | Coded | Triples | None:
    """The column's `Pair` or `Coded`, or None when its shape is not the documented one."""
    import pyarrow as pa

    values = column_array(table, column)
    units: Any = unit
    if pa.types.is_struct(values.type) and unit is None:
        fields = {values.type.field(i).name for i in range(values.type.num_fields)}
        if fields != {"value", "unit"}:
            return None
        flat = values.flatten()
        order = [values.type.field(i).name for i in range(values.type.num_fields)]
        values, units = flat[order.index("value")], flat[order.index("unit")]  # (a null struct: null fields)
    elif unit is None and column + UNIT_SUFFIX in have:
        units = column_array(table, column + UNIT_SUFFIX)
    if _numeric(values.type):
        numbers = _numbers(values)
        if numbers is None:
            return None
        v, ints = numbers
        if units is None or isinstance(units, str):
            if units is None and kind in UNIT_KINDS and values.null_count < len(values):
                return None  # bare numbers for an input that needs a unit: the pandas reader names the fix
            return Pair(v, units, ints)
        coded = text_codes(units)
        if coded is None:
            return None
        if len(coded.uniques) == 1 and not (coded.codes < 0).any():
            return Pair(v, coded.uniques[0], ints)  # one unit in every row: no grouping
        return Pair(v, coded, ints)
    if units is not None:
        return None
    if pa.types.is_boolean(values.type):
        if not values.null_count:
            return Pair(arrow_buffers.booleans(values), None)
        codes = np.where(arrow_buffers.valid(values), arrow_buffers.booleans(values), -1)  # type: ignore[arg-type]
        return Coded(codes.astype(np.int8), [False, True])
    coded = text_codes(values)
    if coded is not None and any(u.startswith("[") for u in coded.uniques):  # JSON text
        return _json_column(coded, kind)
    return coded


def _json_column(coded: Coded, kind: InputKind) -> Pair | Triples | None:
    """A text column of JSON cells read once per distinct text, as the DataFrame reader reads one (`batch._column`:
    a drug's dose as [name, number, unit] for a `special` input, else [number, unit] pairs, a multi-part age kept
    as given); None: the DataFrame reader decides (its first cell is plain text, or most cells are no pair)."""
    given = np.flatnonzero(coded.codes >= 0)
    first = coded.uniques[int(coded.codes[given[0]])] if given.size else ""
    if not first.startswith("["):
        return None
    if kind == InputKind.special:
        head = parse(first)
        named = text_triples(coded.uniques, coded.codes) if type(head) is list and len(head) == 3 else None
        if named is not None:
            return named
    return text_pairs(coded.uniques, coded.codes)


def _numeric(t: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_integer(t) or pa.types.is_floating(t)


def _numbers(values: Any) -> tuple[np.ndarray, np.ndarray | None] | None:
    """(values as float64 with NaN for null, or int64 when an integer column has no null; rows read as Python
    ints where an integer column has nulls), or None for integers a float64 cannot hold exactly."""
    import pyarrow as pa

    if pa.types.is_integer(values.type):
        if not values.null_count:
            v = arrow_buffers.numbers(values).astype(np.int64, copy=False)
            return (v, None) if not len(v) or np.abs(v).max() <= _EXACT else None
        v = arrow_buffers.floats(values)  # (NaN for null)
        if (np.abs(v[~np.isnan(v)]) > _EXACT).any():
            return None
        return v, arrow_buffers.valid(values)
    if values.null_count:
        return arrow_buffers.floats(values), None  # (a null as NaN)
    return arrow_buffers.numbers(values).astype(np.float64, copy=False), None  # (float64: the file's buffer, no copy)


def text_codes(array: Any) -> Coded | None:
    """A string or dictionary-of-strings Arrow array as `Coded` (-1: null), its dictionary's indices taken as they
    are; None for any other type."""
    import pyarrow as pa

    if pa.types.is_dictionary(array.type):
        if not (pa.types.is_string(array.type.value_type) or pa.types.is_large_string(array.type.value_type)):
            return None
        uniques = array.dictionary.to_pylist()
        indices = array.indices
        codes = arrow_buffers.numbers(indices)
        if indices.null_count:
            codes = np.where(arrow_buffers.valid(indices), codes, -1)  # type: ignore[arg-type]
        if None in uniques:  # (a null in the dictionary itself: not given)
            dead = [k for k, u in enumerate(uniques) if u is None]
            codes = np.where(np.isin(codes, dead), -1, codes)
        return Coded(np.asarray(codes, dtype=np.int32), uniques)
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        return text_codes(array.dictionary_encode())
    return None
