"""`formula batch` over a parquet file, streamed: the table is read in batches of rows (pyarrow reads it
row group by row group), each batch computed with `compute_many` and appended to the output, so a
table larger than memory runs in bounded memory (bench/stream.py: 10,000,000 rows under 1 GB).

The output (parquet or CSV) is written to a temporary file in the destination folder and renamed
into place when every batch is done, as every write of this project is atomic.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Mapping

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


def run(src: Path, dst: Path, ref: str | int, variant: str, columns: Mapping[str, Any] | None, tqdm: Any,
        *, progress: bool, batch_rows: int = BATCH_ROWS, csv_guard: bool = True) -> tuple[int, int, dict[str, Any]]:
    """Compute every row of the parquet file `src` into `dst`; returns (rows, rows with an error, attrs)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from registry.loader import get_registry
    from solver.library import compute_many, resolve

    try:
        pf = pq.ParquetFile(src)
    except (pa.ArrowInvalid, OSError) as e:
        raise ValueError(f"cannot read {src}: {e}") from None
    clash = [c for c in ("value", "error") if c in pf.schema_arrow.names]
    if clash:
        raise ValueError(f"{src} already has column(s) {', '.join(clash)}; rename them first")
    reg = get_registry()
    calc = resolve(ref, reg)
    vtype = value_type(calc)
    fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=dst.suffix, dir=dst.parent or ".")
    os.close(fd)
    total = errors = 0
    attrs: dict[str, Any] = {}
    bar = tqdm(total=pf.metadata.num_rows, unit="row", disable=not progress, file=sys.stderr)
    try:
        with _Sink(Path(tmp), dst.suffix, csv_guard=csv_guard) as sink:
            for batch in pf.iter_batches(batch_size=batch_rows):
                frame = batch.to_pandas()
                res = compute_many(calc.slug, frame, variant=variant, columns=columns, registry=reg,
                                   progress=bar.update)
                total += len(frame)
                errors += int(res["error"].notna().sum())
                attrs = dict(res.attrs)
                sink.append(batch, frame, res, vtype)
            if total == 0:  # an empty table still gets its columns
                sink.empty(pf.schema_arrow, vtype)
        os.replace(tmp, dst)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        bar.close()
    if not attrs:
        attrs = {"calculator": calc.slug, "version": calc.active.version, "vectorised": True}
    return total, errors, attrs


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

    def append(self, batch: Any, frame: Any, res: Any, vtype: Any) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.suffix == ".parquet":
            table = pa.Table.from_batches([batch])
            table = table.append_column("value", pa.array(res["value"].tolist(), type=vtype))
            table = table.append_column("error", pa.array(res["error"].tolist(), type=pa.string()))
            if self.writer is None:
                self.writer = pq.ParquetWriter(self.path, table.schema)
            self.writer.write_table(table)
            return
        from solver.batch_output import csv_frame

        out = frame.assign(value=res["value"].tolist(), error=res["error"].tolist())
        csv_frame(out, guard=self.csv_guard).to_csv(self.file, index=False, header=self.file.tell() == 0)

    def empty(self, schema: Any, vtype: Any) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        full = schema.append(pa.field("value", vtype)).append(pa.field("error", pa.string()))
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
