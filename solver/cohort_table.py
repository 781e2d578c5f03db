"""Benchmark-shaped entity objects as an Arrow table in the cohort schema (`formula convert --to parquet`).

The input is one entity object per row, as the benchmark writes a "Relevant Entities" block: a JSONL file with one
object a line (the object itself, or a record holding it under "Relevant Entities" or "entities"), or a CSV with a
"Relevant Entities" column. Each entity becomes columns of the schema `compute_many` reads without a Python object
per cell (solver/library/arrow_columns.py):

- `[number, "unit"]` -> a number column and a dictionary-encoded `<name>_unit` column (or one `struct<value, unit>`
  column with `struct=True`); `[feet, "ft", inches, "in"]` is folded into `[inches, "in"]` by the library's own
  rule (`Converter.fold_height`), so a height column has one shape;
- `true`/`false` -> a bool column; text -> a dictionary-encoded column; a bare number -> a number column;
- anything else (a date as text stays text; a gestational age, a drug and its dose) -> its JSON text, which the
  reader parses once per distinct value.

An entity a row does not give is null. A number column whose given values are all integers is int64, else float64.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from solver.library.units import ConversionError, Converter

ENTITY_KEYS = ("Relevant Entities", "entities")


class ConvertError(ValueError):
    """An input file or row that cannot be turned into the schema (the message names file and line)."""


def entity_rows(path: Path) -> list[dict[str, Any]]:
    """The entity object of each row of a .jsonl or .csv file."""
    if path.suffix.lower() == ".csv":
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            if "Relevant Entities" not in (reader.fieldnames or []):
                raise ConvertError(f"{path}: a CSV needs a 'Relevant Entities' column (columns: "
                                   f"{', '.join(reader.fieldnames or [])})")
            return [_entities(_json(r["Relevant Entities"], f"{path}:{n}"), f"{path}:{n}")
                    for n, r in enumerate(reader, 2)]
    out = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                out.append(_entities(_json(line, f"{path}:{n}"), f"{path}:{n}"))
    return out


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ConvertError(f"{where}: not JSON ({e.msg})") from None


def _entities(obj: Any, where: str) -> dict[str, Any]:
    if isinstance(obj, dict):
        for key in ENTITY_KEYS:
            if key in obj:
                inner = obj[key]
                inner = _json(inner, where) if isinstance(inner, str) else inner
                return _entities(inner, where)
        return obj
    raise ConvertError(f"{where}: expected an object of entities, got {type(obj).__name__}")


def _number(x: Any) -> bool:
    return type(x) in (int, float)


def _pair(c: Any) -> bool:
    return type(c) is list and len(c) == 2 and _number(c[0]) and type(c[1]) is str


def entities_table(rows: list[dict[str, Any]], conv: Converter, *, struct: bool = False) -> Any:
    """The Arrow table of these entity objects (columns in order of first appearance)."""
    import pyarrow as pa

    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    arrays: dict[str, Any] = {}
    for name in names:
        cells = [row.get(name) for row in rows]
        arrays.update(_columns(name, cells, conv, struct))
    return pa.table(arrays)


def _columns(name: str, cells: list[Any], conv: Converter, struct: bool) -> dict[str, Any]:
    """The column(s) of one entity."""
    import pyarrow as pa

    cells = [_folded(c, conv) for c in cells]
    given = [c for c in cells if c is not None]
    if given and all(_pair(c) for c in given):
        values = [None if c is None else c[0] for c in cells]
        vtype = pa.int64() if all(type(c[0]) is int for c in given) else pa.float64()
        value = pa.array(values, vtype)
        units = pa.array([None if c is None else c[1] for c in cells], pa.string())
        if struct:
            mask = pa.array([c is None for c in cells], pa.bool_())
            return {name: pa.StructArray.from_arrays([value, units], names=["value", "unit"], mask=mask)}
        return {name: value, f"{name}_unit": units.dictionary_encode()}
    if all(type(c) is bool for c in given):
        return {name: pa.array(cells, pa.bool_())}
    if all(type(c) is str for c in given):
        return {name: pa.array(cells, pa.string()).dictionary_encode()}
    if all(_number(c) for c in given):
        return {name: pa.array(cells, pa.int64() if all(type(c) is int for c in given) else pa.float64())}
    return {name: pa.array([None if c is None else json.dumps(c, ensure_ascii=False) for c in cells], pa.string())}


def _folded(cell: Any, conv: Converter) -> Any:
    """A four-part height as the library folds it; any other cell as it is."""
    if type(cell) is list and len(cell) == 4 and all(_number(x) for x in cell[::2]):
        try:
            return conv.fold_height(cell)
        except ConversionError:
            return cell
    return cell


def write_parquet(table: Any, path: Path) -> None:
    """Write `table` to `path` atomically (registry.atomic.atomic_output: temporary file, fsync, rename)."""
    import pyarrow.parquet as pq

    from registry.atomic import atomic_output

    with atomic_output(path) as tmp:
        pq.write_table(table, tmp)

