"""A calculator over columns already read into the kernels' arrays: the core that `compute_many` hands a DataFrame's
or an Arrow table's columns to (solver/library/batch.py reads a DataFrame, solver/library/arrow_columns.py an Arrow
table), and that `formula batch` calls on each batch of a Parquet file. It imports no pandas: a Parquet file read
with pyarrow is computed without it (pandas costs a command about 0.15 s to import).

Calculators whose kernel is columnar run that kernel over numpy arrays, chunk by chunk, the chunks of a long table
side by side on a thread pool; any row the columnar path refuses, and every row of the other calculators, goes
through `compute`, so every answer and every error equals `compute`'s.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from registry.loader import Registry
from registry.schema import Calculator
from solver.library.core import compute
from solver.library.errors import CalculatorError
from solver.library.vectorised import (
    MISSING,
    Coded,
    Columns,
    NotColumnar,
    Pair,
    Triples,
    cells_at,
    collector_paused,
    columnar,
    distinct,
    factorize,
    finish,
)
from solver.library.working import plain

CHUNK = 20_000  # rows per progress step (row by row)
VCHUNK = 250_000  # rows per progress step (columnar)
_POOL: list[Any] = []  # (pid, the thread pool chunks and slices run on): made on first use in each process


class Computed(NamedTuple):
    """What `compute_columns` gives: a value and an error (None: none) per row, the `details` columns, and the
    counts `compute_many` reports as its result's attrs."""

    values: np.ndarray
    errors: np.ndarray
    extra: dict[str, np.ndarray]
    attrs: dict[str, Any]


def _no_error(errors: np.ndarray) -> int:
    """Rows whose error is None."""
    return int(np.count_nonzero(np.equal(errors, None)))  # type: ignore[call-overload]  # (elementwise `is None`)


def cores() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def thread_pool() -> Any:
    """This process's pool: a forked child (a worker of a process pool) inherits the parent's pool object but
    not its threads, so it makes its own rather than queue work that no thread would run."""
    import os

    if not _POOL or _POOL[0][0] != os.getpid():
        from concurrent.futures import ThreadPoolExecutor

        _POOL[:] = [(os.getpid(), ThreadPoolExecutor(max_workers=cores(), thread_name_prefix="formula-codes"))]
    return _POOL[0][1]


def _numeric(calc: Calculator, out: np.ndarray) -> np.ndarray | None:
    """Finished numbers of rows that all have a value, as the one numeric type `compute` returns for every one of
    them (int64: an integer output; float64), or None when the rows mix Python types (`round_number` gives the
    int 0 for zero)."""
    if out.dtype.kind in "iu":
        return out
    if out.dtype == object:  # dates as ISO text, (weeks, days) as lists: already the values
        return None
    if calc.output.rounding == "integer":
        return out.astype(np.int64)
    if calc.output.rounding == "round_number" and not out.all():
        return None
    return out


def _as_values(calc: Calculator, out: np.ndarray) -> np.ndarray:
    """Finished numbers as the Python values `compute` returns (int for integer outputs, the int 0 that
    `round_number` gives for zero); refused rows are filled in afterwards."""
    if out.dtype == object:  # (dates, [weeks, days]: already the values, and copied into the column by the caller)
        return out
    if out.dtype.kind in "iu":
        return out.astype(object)
    if calc.output.rounding == "integer":
        return np.where(np.isfinite(out), out, 0).astype(np.int64).astype(object)
    obj = out.astype(object)
    if calc.output.rounding == "round_number":
        obj[out == 0] = 0
    return obj


def _value_column(calc: Calculator, parts: list[tuple[int, int, np.ndarray]], refused: int, n: int) -> np.ndarray:
    """The `value` column from the columnar chunks (start, stop, finished numbers): numeric (float64 or int64)
    when no row was refused and every value is of that one Python type, so 1,000,000 values are never made
    Python objects; otherwise an object column (refused rows filled in afterwards)."""
    if not refused:
        nums = [a for a in (_numeric(calc, out) for _, _, out in parts) if a is not None]
        if len(nums) == len(parts) and len({a.dtype for a in nums}) == 1:
            if len(nums) > 1:
                return np.concatenate(nums)
            # an array of its own (a formula's result), never a view of an input column the caller still holds
            return nums[0] if nums[0].flags.owndata else nums[0].copy()
    values = np.empty(n, dtype=object)  # numpy fills an object array with None
    for start, stop, out in parts:
        values[start:stop] = _as_values(calc, out)
    return values


def _rows(cells: dict[str, Any], rows: np.ndarray) -> list[dict[str, Any]]:
    """Each row's entities as `compute` takes them (a cell not given left out), read a column at a time, with
    Python's cyclic collector paused (the dicts and lists hold plain values: no cycle is missed). APACHE II's 19,373
    refused rows of 250,000 (their errors are `compute`'s): 0.25 s one cell at a time with the collector on, 0.08 s
    so (measured, bench figures in bench/README.md)."""
    out: list[dict[str, Any]] = [{} for _ in range(len(rows))]
    with collector_paused():
        for k, col in cells.items():
            for row, c in zip(out, cells_at(col, rows)):
                if c is not MISSING:
                    row[k] = c
    return out


def _one(calc: Calculator, ents: dict[str, Any], variant: str, reg: Registry) -> tuple[Any, str | None]:
    try:
        return plain(compute(calc.slug, ents, variant=variant, registry=reg).value), None
    except CalculatorError as e:
        return None, str(e)


Answers = tuple[np.ndarray, np.ndarray, np.ndarray]  # rows, their values, their errors (None: no error)


def _columnar_chunk(calc: Calculator, fn: Callable[[Columns], np.ndarray], cells: dict[str, Any], start: int,
                    stop: int, variant: str, reg: Registry) -> tuple[int, int, np.ndarray, Answers, tuple[int, int, int]]:
    """Rows start..stop through the columnar path: (start, stop, finished numbers, `compute`'s own answers for
    the rows it left (rows counted from `start`), and counts: `compute` calls made for them, rows answered per
    combination, refused rows that were valid after all).

    A refused row (an error, as a rule) is computed alone. A row whose number the arrays hold but whose Python
    type they cannot tell (`Columns.typed`: ints among floats) is answered by `compute` once per distinct
    combination of its cells: equal cells, equal answer."""
    part = {k: (col.take(slice(start, stop)) if isinstance(col, (Pair, Coded, Triples)) else col[start:stop])
            for k, col in cells.items()}
    cols = Columns(calc, part, stop - start, variant, reg)
    with np.errstate(all="ignore"):
        out = finish(cols, fn(cols))
    alone = np.flatnonzero(cols.bad)
    typed = np.flatnonzero(cols.typed & ~cols.bad)
    rows = np.concatenate([alone, typed])
    codes = np.concatenate([np.arange(len(alone)), len(alone) + _row_codes(part, typed)])
    firsts = np.unique(codes, return_index=True)[1]
    values, errors = np.empty(len(firsts), dtype=object), np.empty(len(firsts), dtype=object)
    for k, ents in enumerate(_rows(part, rows[firsts])):
        values[k], errors[k] = _one(calc, ents, variant, reg)
    why = errors[codes]
    left = _no_error(why[: len(alone)])  # refused rows that `compute` answers: valid rows left alone
    return start, stop, out, (rows, values[codes], why), (len(firsts), len(typed), left)


def _row_codes(part: dict[str, Any], rows: np.ndarray) -> np.ndarray:
    """One code per row of `rows` (0, 1, ...): two rows share a code when every input cell of theirs is the same
    (type included: 70 and 70.0 differ; a float by its bits), column by column (`vectorised.factorize`)."""
    combined = np.zeros(len(rows), dtype=np.int64)
    if not len(rows):
        return combined
    for name in sorted(part):
        col = part[name]
        if isinstance(col, Triples):
            three = col.take(rows)
            keys = [three.names.codes, factorize(three.values)[0], three.units.codes,
                    np.zeros(len(rows), dtype=np.int64) if three.ints is None else three.ints.astype(np.int64)]
        else:
            sub = col.take(rows) if isinstance(col, (Pair, Coded)) else [col[i] for i in rows.tolist()]
            keys = [distinct(sub, len(rows))[0]]
        for key in keys:
            key = np.asarray(key, dtype=np.int64)
            span = int(key.max()) - int(key.min()) + 1
            combined = factorize(combined * span + (key - key.min()))[0].astype(np.int64)
    return combined


def _details(calc: Calculator, cells: dict[str, Any], n: int, errors: np.ndarray, variant: str,
             reg: Registry) -> tuple[dict[str, np.ndarray], int]:
    """The `unit`, `warnings`, `inputs` and `working` columns of `details=True`, and the `compute` calls they took.

    The columnar path keeps no per-row record of the inputs as used or of the plausibility rules each row
    breaks, so these come from `compute` itself, once per distinct combination of input cells (equal cells,
    equal record, as `_row_codes` groups them): identical to `compute` row by row by construction. A cohort
    of distinct patients costs a `compute` call a row; each row gets its own list and dict. The working (the steps
    behind the value, `Result.working`) is recorded on those same calls, so it comes once per distinct combination
    of inputs; rows that share one share its (immutable) tuple of steps."""
    codes = _row_codes(cells, np.arange(n))
    firsts = np.unique(codes, return_index=True)[1]
    made: list[Any] = []
    for ents in (e for at in range(0, len(firsts), CHUNK) for e in _rows(cells, firsts[at:at + CHUNK])):
        try:  # (the rows' entities made CHUNK at a time: a cohort of distinct patients never holds them all)
            made.append(compute(calc.slug, ents, variant=variant, registry=reg, working=True))
        except CalculatorError:
            made.append(None)
    unit, warns, inputs, working = (np.empty(n, dtype=object) for _ in range(4))
    for i, k in enumerate(codes.tolist()):
        r = made[k]
        if r is not None and errors[i] is None:
            unit[i], warns[i], inputs[i], working[i] = r.unit, list(r.warnings), dict(r.inputs), r.working
    return {"unit": unit, "warnings": warns, "inputs": inputs, "working": working}, len(firsts)


def compute_columns(calc: Calculator, cells: dict[str, Any], n: int, variant: str, reg: Registry, *,
                    progress: Callable[[int], None] | None = None, vectorise: bool = True,
                    details: bool = False) -> Computed:
    """`calc` over `n` rows of input columns (`cells`: entity name -> a `Pair`, `Coded`, `Triples` or a cell per
    row, as batch.entity_columns and arrow_columns.table_columns read them); see `compute_many`."""
    fn = columnar(calc.slug, reg) if vectorise else None
    first = None  # a table of one chunk: its chunk, computed as the probe
    if fn is not None and n:
        try:  # a kernel that has no columnar form for these inputs says so at once (`Columns.scalar_only`)
            # The probe is the whole table when it is one chunk: probing on one row first ran a kernel's fixed
            # cost twice (a 1-row frame, medians of 3 interleaved runs, best of 30 calls each, 2026-12-03: APACHE
            # II 4.8 -> 3.7 ms, Caprini 7.3 -> 5.5 ms, BMI 1.4 -> 0.8 ms; 2,000 rows within the runs' spread); a
            # longer table is probed on one row, so that its chunks still start side by side.
            first = _columnar_chunk(calc, fn, cells, 0, n if n <= VCHUNK else 1, variant, reg)
        except NotColumnar:
            fn = None
    if fn is not None:
        values, errors, counts = _columnar(calc, fn, cells, n, variant, reg, first, progress)
    else:
        values, errors = _row_by_row(calc, cells, n, variant, reg, progress)
        counts = {"row_by_row": n, "compute_calls": n, "by_combination": 0, "left_path": _no_error(errors)}
    extra, detail_calls = _details(calc, cells, n, errors, variant, reg) if details else ({}, 0)
    attrs = {"calculator": calc.slug, "version": calc.active.version, "variant": variant, "unit": calc.output.unit,
             "vectorised": fn is not None, **counts, "details_compute_calls": detail_calls}
    return Computed(values, errors, extra, attrs)


def _columnar(calc: Calculator, fn: Callable[[Columns], np.ndarray], cells: dict[str, Any], n: int, variant: str,
              reg: Registry, first: Any, progress: Callable[[int], None] | None
              ) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """The columnar path: (values, errors, its counts), chunk by chunk (`first`: the probe's chunk)."""
    errors = np.empty(n, dtype=object)  # numpy fills an object array with None
    parts: list[tuple[int, int, np.ndarray]] = []  # columnar chunks: start, stop, finished numbers
    answered: list[tuple[np.ndarray, np.ndarray]] = []  # rows the columnar path left to `compute`, their values
    calls = combined = alone = 0
    bounds = [(start, min(start + VCHUNK, n)) for start in range(0, n, VCHUNK)]
    chunk = lambda b: _columnar_chunk(calc, fn, cells, b[0], b[1], variant, reg)  # noqa: E731
    # numpy works without the GIL, so the chunks of a long table run side by side, one per core; the
    # results come back in order, and progress is reported here, in the caller's thread
    runs: Any = [first] if first is not None and n <= VCHUNK else (
        thread_pool().map(chunk, bounds) if len(bounds) > 1 and cores() > 1 else map(chunk, bounds))
    for start, stop, out, (rows, got, why), (made, typed, left) in runs:
        parts.append((start, stop, out))
        answered.append((start + rows, got))
        errors[start + rows] = why
        calls, combined, alone = calls + made, combined + typed, alone + left
        if progress is not None:
            progress(stop - start)
    fallback = sum(len(rows) for rows, _ in answered)
    values = _value_column(calc, parts, fallback, n)
    for rows, got in answered:
        values[rows] = got
    return values, errors, {"row_by_row": fallback, "compute_calls": calls, "by_combination": combined,
                            "left_path": alone}


def _row_by_row(calc: Calculator, cells: dict[str, Any], n: int, variant: str, reg: Registry,
                progress: Callable[[int], None] | None) -> tuple[np.ndarray, np.ndarray]:
    """Every row through `compute`: (values, errors)."""
    values, errors = np.empty(n, dtype=object), np.empty(n, dtype=object)
    for start in range(0, n, CHUNK):
        stop = min(start + CHUNK, n)
        for i, ents in enumerate(_rows(cells, np.arange(start, stop)), start):
            values[i], errors[i] = _one(calc, ents, variant, reg)
        if progress is not None:
            progress(stop - start)
    return values, errors
