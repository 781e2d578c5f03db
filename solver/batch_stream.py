"""`formula batch` over a parquet file, streamed: the table is read in batches of rows (pyarrow reads it row group
by row group), each batch's input columns read into arrays by solver/library/arrow_columns.py (no Python object
per cell, and no pandas) and computed by `compute_columns` (solver/library/table_compute.py, the core of
`compute_many`), once per calculator asked for, and appended to the output, so a table larger than memory runs in
bounded memory (bench/stream.py: 10,000,000 rows under 1 GB).

The output (parquet or CSV) is written to a temporary file in the destination folder and renamed
into place when every batch is done, as every write of this project is atomic.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from registry.atomic import atomic_output

BATCH_ROWS = 262_144  # rows per batch: bounds the memory one batch takes, whatever the row groups are


def value_type(calc: Any) -> Any:
    """The arrow type of the value column, from the calculator's output (the same for every batch)."""
    import pyarrow as pa

    from registry.schema import OutputKind

    if calc.output.kind == OutputKind.date:
        return pa.string()
    if calc.output.kind == OutputKind.gestational_age:
        return pa.list_(pa.int64())
    if calc.output.rounding == "integer":
        return pa.int64()
    return pa.float64()


def result_names(slugs: list[str]) -> list[tuple[str, str]]:
    """The (value, error) column names of each calculator: `value` and `error` for one, `<slug>` and
    `<slug>_error` for several."""
    if len(slugs) == 1:
        return [("value", "error")]
    return [(slug, f"{slug}_error") for slug in slugs]


def value_array(values: Any, vtype: Any) -> Any:
    """The computed values as an arrow array: numbers from their own buffer (no Python object per row, and no
    pandas: `arrow_buffers`), an object column of numbers (rows with an error hold None) as numbers with nulls,
    dates (ISO text) and [weeks, days] from buffers too."""
    import pyarrow as pa

    from solver.library import arrow_buffers

    if values.dtype.kind in "iuf":
        out = arrow_buffers.from_numbers(values)
        return out if out.type == vtype else out.cast(vtype)
    if pa.types.is_integer(vtype) or pa.types.is_floating(vtype):
        ok = ~np.equal(values, None)  # type: ignore[call-overload]  # (elementwise `is None`)
        numbers = np.zeros(len(values), dtype=np.int64 if pa.types.is_integer(vtype) else np.float64)
        numbers[ok] = values[ok]
        return arrow_buffers.from_numbers(numbers, ok)
    if pa.types.is_list(vtype):
        return arrow_buffers.int_lists(values)
    if pa.types.is_string(vtype) and all(type(v) is str for v in values[~np.equal(values, None)].tolist()):  # type: ignore[call-overload]
        return arrow_buffers.texts(values)  # (dates as ISO text)
    return pa.array(values, type=vtype, from_pandas=True)


def run(src: Path, dst: Path, calcs: list[Any], variant: str, columns: Sequence[Mapping[str, Any] | None], tqdm: Any,
        *, progress: bool, batch_rows: int = BATCH_ROWS, csv_guard: bool = True
        ) -> tuple[int, int, list[dict[str, Any]]]:
    """Compute every row of the parquet file `src` into `dst` for each calculator of `calcs` (resolved registry
    entries; `columns`: each one's --columns mapping), in one pass over the file; returns (rows, rows with an
    error in any calculator, each calculator's attrs with its `errors` count)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from registry.loader import get_registry
    from solver.library import arrow_buffers
    from solver.library.table_compute import compute_columns

    try:
        pf = pq.ParquetFile(src)
    except (pa.ArrowInvalid, OSError) as e:
        raise ValueError(f"cannot read {src}: {e}") from None
    names = result_names([c.slug for c in calcs])
    clash = [c for pair in names for c in pair if c in pf.schema_arrow.names]
    if clash:
        raise ValueError(f"{src} already has column(s) {', '.join(clash)}; rename them first")
    reg = get_registry()
    vtypes = [value_type(c) for c in calcs]
    total = errors = 0
    attrs: list[dict[str, Any]] = [{"calculator": c.slug, "version": c.active.version, "vectorised": True,
                                    "errors": 0} for c in calcs]
    bar = tqdm(total=pf.metadata.num_rows * len(calcs), unit="row", disable=not progress, file=sys.stderr)
    try:
        with atomic_output(dst) as tmp, _Sink(tmp, dst.suffix, csv_guard=csv_guard) as sink:
            for batch in pf.iter_batches(batch_size=batch_rows):
                added: list[tuple[str, Any]] = []
                failed = np.zeros(batch.num_rows, dtype=bool)
                for k, (calc, cols, vtype, (vname, ename)) in enumerate(zip(calcs, columns, vtypes, names)):
                    got = compute_columns(calc, _cells(batch, calc, cols), batch.num_rows, variant, reg,
                                          progress=bar.update)
                    wrong = ~np.equal(got.errors, None)  # type: ignore[call-overload]  # (elementwise `is None`)
                    failed |= wrong
                    added += [(vname, value_array(got.values, vtype)), (ename, arrow_buffers.texts(got.errors))]
                    attrs[k] = {**got.attrs, "errors": attrs[k]["errors"] + int(wrong.sum()),
                                "vectorised": attrs[k]["vectorised"] and got.attrs["vectorised"]}
                total += batch.num_rows
                errors += int(failed.sum())
                sink.append(batch, added)
            if total == 0:  # an empty table still gets its columns
                sink.empty(pf.schema_arrow, [(n, t) for (v, e), t in zip(names, vtypes) for n, t in
                                             ((v, t), (e, pa.string()))])
    finally:
        bar.close()
    return total, errors, attrs


def _cells(batch: Any, calc: Any, columns: Mapping[str, Any] | None) -> dict[str, Any]:
    """The batch's input columns as the kernels read them (`arrow_columns.table_columns`), with no pandas unless a
    column needs the DataFrame reader (JSON text, lists: `batch.read_other`)."""
    from solver.library.arrow_columns import table_columns

    cells, other = table_columns(batch, calc, columns)
    if other:
        from solver.library.batch import read_other

        read_other(cells, batch, calc, other)
    return cells


def _write_options(schema: Any) -> dict[str, Any]:
    """How the output is written: dictionary pages for text only (trying them on a column of distinct numbers and
    giving up cost more than the rest of the write: 0.32 -> 0.14 s, 1M rows, measured), and min/max statistics for
    every column but a dictionary one (a unit column: its dictionary page already lists its values, and pyarrow's
    statistics of one cost MME's 24 unit columns 0.18 s of a 0.62 s write, 1M rows, measured)."""
    import pyarrow as pa

    text = [f.name for f in schema if pa.types.is_dictionary(f.type) or pa.types.is_string(f.type)]
    return {"use_dictionary": text,
            "write_statistics": [f.name for f in schema if not pa.types.is_dictionary(f.type)]}


class _Sink:
    """Appends computed batches to a parquet or CSV file; fsyncs it on close."""

    def __init__(self, path: Path, suffix: str, *, csv_guard: bool = True):
        self.path, self.suffix, self.csv_guard = path, suffix, csv_guard
        self.writer: Any = None
        self.file: Any = None

    def __enter__(self) -> "_Sink":
        if self.suffix != ".parquet":
            self.file = open(self.path, "w", encoding="utf-8", newline="")
        return self

    def append(self, batch: Any, added: list[tuple[str, Any]]) -> None:
        """Write `batch` with the computed columns `added` ((name, arrow array) pairs) after its own."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_batches([batch])
        for name, array in added:
            table = table.append_column(name, array)
        if self.suffix == ".parquet":
            if self.writer is None:
                self.writer = pq.ParquetWriter(self.path, table.schema, **_write_options(table.schema))
            self.writer.write_table(table)
            return
        from solver.batch_output import csv_frame

        frame = table.to_pandas()
        for name, array in added[::2]:  # (value columns: a [weeks, days] as a list, as csv_frame writes it)
            frame[name] = array.to_pylist()
        csv_frame(frame, guard=self.csv_guard, values=[n for n, _ in added[::2]]).to_csv(
            self.file, index=False, header=self.file.tell() == 0)

    def empty(self, schema: Any, fields: list[tuple[str, Any]]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        full = schema
        for name, vtype in fields:
            full = full.append(pa.field(name, vtype))
        if self.suffix == ".parquet":
            pq.write_table(full.empty_table(), self.path)
        else:
            self.file.write(",".join(full.names) + "\n")

    def __exit__(self, *exc: Any) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.file is not None:
            self.file.flush()
            os.fsync(self.file.fileno())
            self.file.close()
        elif exc[0] is None:
            with open(self.path, "rb+") as f:
                os.fsync(f.fileno())
