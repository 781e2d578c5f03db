"""numpy arrays of Arrow arrays and Arrow arrays of numpy, read from and made of their buffers.

pyarrow's own conversions (`Array.to_numpy`, `pa.array(ndarray)`, even `pa.array([1.0, None])`) import pandas
when it is installed, to check whether their argument is a pandas object: 0.15 s of a `formula batch` command
that otherwise needs no pandas (bench/columnar.py --frames parquet: the fixed cost of a 1-row file, 0.57 s ->
see bench/README.md). The kernels read fixed-width numbers, booleans and dictionary indices, whose buffers
numpy reads as they are (the values without a copy), so the Parquet path reads and writes those through here.
Text (row errors, dates as ISO text) and lists of integers ([weeks, days]) are built from buffers too (`texts`,
`int_lists`); anything else still goes through pyarrow's own conversions.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def _dtype(t: Any) -> np.dtype | None:
    import pyarrow as pa

    if pa.types.is_integer(t):
        return np.dtype(f"{'i' if pa.types.is_signed_integer(t) else 'u'}{t.bit_width // 8}")
    if pa.types.is_float32(t) or pa.types.is_float64(t):
        return np.dtype(f"f{t.bit_width // 8}")
    return None


def valid(array: Any) -> np.ndarray | None:
    """Which rows hold a value (a bool per row), or None when none is null."""
    if not array.null_count:
        return None
    bitmap = array.buffers()[0]
    if bitmap is None:  # (a null-type array, or one whose nulls live in its dictionary: none here)
        return np.zeros(len(array), dtype=bool)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return bits[array.offset:array.offset + len(array)].astype(bool)


def numbers(array: Any) -> np.ndarray:
    """A fixed-width integer or floating array's values, null rows holding whatever their slots hold (see `valid`):
    a read-only view of the array's own buffer."""
    dtype = _dtype(array.type)
    if dtype is None:
        raise TypeError(f"not a fixed-width number type: {array.type}")
    data = array.buffers()[1]
    if data is None:  # (an empty array may have no buffer)
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(data, dtype=dtype, count=array.offset + len(array))[array.offset:]


def booleans(array: Any) -> np.ndarray:
    """A boolean array's values (null rows: False; see `valid`)."""
    data = array.buffers()[1]
    if data is None:
        return np.zeros(len(array), dtype=bool)
    bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
    return bits[array.offset:array.offset + len(array)].astype(bool)


def floats(array: Any) -> np.ndarray:
    """A number array as float64, NaN for null (a new array)."""
    out = numbers(array).astype(np.float64)
    ok = valid(array)
    if ok is not None:
        out[~ok] = np.nan
    return out


def from_numbers(values: np.ndarray, ok: np.ndarray | None = None) -> Any:
    """An Arrow array of a 1-d numeric numpy array (float64, int64, ...), null where `ok` is False; it shares
    the array's memory (the caller keeps it unchanged)."""
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    if values.dtype.kind not in "iuf":
        raise TypeError(f"not a numeric array: {values.dtype}")
    validity = None
    nulls = 0
    if ok is not None and not ok.all():
        validity = pa.py_buffer(np.packbits(ok.astype(np.uint8), bitorder="little"))
        nulls = int(len(ok) - np.count_nonzero(ok))
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [validity, pa.py_buffer(values)],
                                 null_count=nulls)


def _validity(present: np.ndarray) -> Any:
    import pyarrow as pa

    return None if present.all() else pa.py_buffer(np.packbits(present.astype(np.uint8), bitorder="little"))


def int_lists(cells: np.ndarray) -> Any:
    """An Arrow list<int64> array of an object array of lists (or tuples) of ints and None (null), such as a
    gestational age's [weeks, days]."""
    import itertools

    import pyarrow as pa

    n = len(cells)
    present = ~np.equal(cells, None)  # type: ignore[call-overload]  # (elementwise `is None`)
    given = cells[present].tolist()
    lengths = np.zeros(n, dtype=np.int64)
    lengths[present] = [len(c) for c in given]
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    flat = np.fromiter(itertools.chain.from_iterable(given), dtype=np.int64, count=int(offsets[-1]))
    return pa.Array.from_buffers(pa.list_(pa.int64()), n, [_validity(present), pa.py_buffer(offsets)],
                                 null_count=int(n - present.sum()), children=[from_numbers(flat)])


def texts(cells: np.ndarray) -> Any:
    """An Arrow string array of an object array of str and None (null), such as a column of row errors."""
    import pyarrow as pa

    n = len(cells)
    present = ~np.equal(cells, None)  # type: ignore[call-overload]  # (elementwise `is None`)
    rows = np.flatnonzero(present)
    if not len(rows):
        return pa.nulls(n, pa.string())
    encoded = [s.encode("utf-8") for s in cells[rows].tolist()]
    lengths = np.zeros(n, dtype=np.int64)
    lengths[rows] = [len(b) for b in encoded]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] >= 2**31:  # (past a string array's 32-bit offsets: pyarrow's own conversion says so)
        return pa.array(cells.tolist(), type=pa.string())
    return pa.Array.from_buffers(pa.string(), n, [_validity(present), pa.py_buffer(offsets.astype(np.int32)),
                                                  pa.py_buffer(b"".join(encoded))], null_count=n - len(rows))
