"""JSON text cells (`[70, "kg"]`, `[4, "years", 3, "months"]`, `["PredniSONE PO", 10, "mg"]`, as a CSV file or
`formula convert` holds what is neither a number nor a plain word) read into the kernels' arrays, each distinct
text parsed once. A Parquet batch reads its text columns through here by their dictionary codes
(`arrow_columns._json_column`), and the DataFrame reader by pandas' factorize (`batch._pairs`, `batch._triples`), so
the two read a text by one rule. No pandas is imported below `MANY_TEXTS` distinct texts (from there `json_pairs`
uses pyarrow's conversions, which import it).
"""
from __future__ import annotations

import ast
import json
import math
from typing import Any

import numpy as np

from registry import jsontext
from solver.library.vectorised import MISSING, Coded, Pair, Triples, triples


def text_pairs(texts: list[Any], codes: np.ndarray) -> Pair | None:
    """The Pair of a column of `[number, "unit"]` texts given as its distinct texts and a code per row (-1: not
    given); None when most distinct texts are something else (the caller reads the column cell by cell)."""
    fast = json_pairs(texts) if len(texts) >= MANY_TEXTS else None
    if fast is not None:
        return _parsed_pairs(texts, codes, *fast)
    parsed = [parse(u) if isinstance(u, str) and u.startswith("[") else u for u in texts]
    if sum(is_pair(p) for p in parsed) * 2 < len(parsed):  # mostly something else: read cell by cell
        return None
    if (codes < 0).any():
        parsed.append(None)
        codes = np.where(codes < 0, len(parsed) - 1, codes)
    return pair_arrays(parsed, codes)


def text_triples(texts: list[Any], codes: np.ndarray) -> Triples | None:
    """The Triples of a column of `[name, number, "unit"]` texts (a drug and its dose), given as `text_pairs`
    takes them; None: a text of another form."""
    parsed = [parse(u) if isinstance(u, str) else u for u in texts]
    if (codes < 0).any():
        parsed.append(MISSING)
        codes = np.where(codes < 0, len(parsed) - 1, codes)
    distinct = triples(parsed)
    return None if distinct is None else distinct.take(codes)


def parse(text: str) -> Any:
    """A cell's JSON text as its value (Python's literal syntax too: single quotes); text that is neither stays text."""
    try:
        return jsontext.loads(text)
    except jsontext.JsonError:  # (also an integer of over 4,300 digits, or nesting past the recursion limit)
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            return text  # left as text: the library names the problem


MANY_TEXTS = 4096  # distinct JSON texts from which they are parsed by pyarrow rather than one by one


# `[number, "unit"]` as JSON writes it (spaces allowed, no control characters in the unit): the number, the part of
# it after the integer (fraction, exponent: empty for a JSON int) and the unit as written (escapes decoded after)
_JSON_PAIR = (r'^\[ *(?P<v>-?(?:0|[1-9][0-9]*)(?P<f>(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)) *, *'
              r'"(?P<u>(?:[^"\\\x00-\x1f]|\\[^\x00-\x1f])*)" *\]$')


def json_pairs(texts: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """(values, ints, units, matched) of distinct JSON texts, read by pyarrow's regular expressions and its
    string-to-double cast (correctly rounded, as Python's `float` of the same digits, which `json.loads` uses); a
    text that is not a plain `[number, "unit"]` (an int from 10^15 on, a non-finite number, an escape JSON
    does not know, anything else) is not matched and is parsed by `parse`. Measured on 727,565 distinct texts: 0.3 s, against
    3.5 s through `json.loads`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        array = pa.array([t if type(t) is str else None for t in texts], type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    found = pc.extract_regex(array, pattern=_JSON_PAIR)
    matched = np.array(found.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    number, unit = pc.struct_field(found, "v"), pc.struct_field(found, "u")
    whole = pc.equal(pc.struct_field(found, "f"), "")
    values = pc.cast(number, pa.float64()).to_numpy(zero_copy_only=False)
    ints = np.array(whole.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
    units = np.asarray(unit.to_numpy(zero_copy_only=False), dtype=object)
    escaped = np.flatnonzero(pc.match_substring(unit, "\\").fill_null(False).to_numpy(zero_copy_only=False))
    if escaped.size:  # json.dumps writes µL as "\u00b5L": each distinct unit decoded as JSON
        distinct, codes = np.unique(units[escaped].astype(str), return_inverse=True)
        as_json = [_json_text(u) for u in distinct.tolist()]
        units[escaped] = np.array(as_json, dtype=object)[codes]
        matched[escaped] &= np.array([u is not None for u in as_json], dtype=bool)[codes]
    with np.errstate(invalid="ignore"):  # (an int from 10^15 on is read by Python: a double may not hold it)
        matched = matched & np.isfinite(values) & (~ints | (np.abs(values) < 1e15))
    return values, ints & matched, units, matched


def _json_text(escaped: str) -> str | None:
    """A JSON string's body decoded (None: not valid JSON, so the whole text is left to `parse`)."""
    try:
        return json.loads(f'"{escaped}"')
    except json.JSONDecodeError:
        return None


def _parsed_pairs(texts: list[Any], codes: np.ndarray, values: np.ndarray, ints: np.ndarray, units: np.ndarray,
                  matched: np.ndarray) -> Pair | None:
    """The Pair of a JSON column from `json_pairs` (the texts it did not match parsed one by one); None when
    most texts are no pair (the column is then read cell by cell, as `_pairs` does)."""
    rest = np.flatnonzero(~matched).tolist()
    parsed = [parse(t) if isinstance(t, str) and t.startswith("[") else t for t in (texts[i] for i in rest)]
    good = matched.copy()
    values, ints, units = values.copy(), ints.copy(), units.copy()
    units[~matched] = None
    odd = None
    for i, c in zip(rest, parsed):
        if is_pair(c):
            good[i], values[i], ints[i], units[i] = True, c[0], type(c[0]) is int, c[1]
        else:
            values[i] = np.nan
            if c is not None:
                if odd is None:
                    odd = np.empty(len(texts), dtype=object)
                odd[i] = c
    if int(good.sum()) * 2 < len(texts):
        return None
    if (codes < 0).any():
        values, ints, good = np.append(values, np.nan), np.append(ints, False), np.append(good, False)
        nothing = np.array([None], dtype=object)
        units = np.concatenate([units, nothing])
        odd = None if odd is None else np.concatenate([odd, nothing])
        codes = np.where(codes < 0, len(texts), codes)
    return _pair_of(values, ints, units, good, odd, codes)


def is_pair(c: Any) -> bool:
    """[number, "unit"]: a finite float, or an int a float holds exactly (anything else is read cell by cell)."""
    if not ((type(c) is list or type(c) is tuple) and len(c) == 2 and type(c[1]) is str):
        return False
    v = c[0]
    return (type(v) is float and math.isfinite(v)) or (type(v) is int and -2 ** 53 <= v <= 2 ** 53)


def pair_arrays(cells: list[Any], codes: np.ndarray | None) -> Pair:
    """The Pair of these cells (None: not given), taken by `codes` when given (cells are then the distinct ones).
    A cell that is no plain pair is kept as given (`Pair.odd`): the library reads it, and names its problem."""
    good = [is_pair(c) for c in cells]
    values = np.array([c[0] if ok else np.nan for c, ok in zip(cells, good)], dtype=float)
    ints = np.array([ok and type(c[0]) is int for c, ok in zip(cells, good)], dtype=bool)
    units = np.array([c[1] if ok else None for c, ok in zip(cells, good)], dtype=object)
    odd = None
    if not all(ok or c is None for c, ok in zip(cells, good)):
        odd = np.empty(len(cells), dtype=object)
        for k, (c, ok) in enumerate(zip(cells, good)):
            if not ok and c is not None:
                odd[k] = c
    return _pair_of(values, ints, units, np.array(good, dtype=bool), odd, codes)


def _unit_codes(units: np.ndarray) -> Coded:
    """The distinct cells' units (text, or None) as `Coded`: spread to the rows by their codes, the units stay
    codes, so they are never hashed row by row (which needs pandas)."""
    index: dict[str, int] = {}
    codes = np.array([-1 if u is None else index.setdefault(u, len(index)) for u in units.tolist()], dtype=np.int32)
    return Coded(codes, list(index))


def _pair_of(values: np.ndarray, ints: np.ndarray, units: np.ndarray, good: np.ndarray, odd: np.ndarray | None,
             codes: np.ndarray | None) -> Pair:
    """The Pair of distinct cells' arrays (`good`: a plain pair), taken by `codes` when given."""
    one = set(units[good].tolist())
    fixed = one.pop() if len(one) == 1 and good.all() else None  # one unit, every cell a pair: no grouping
    per_row: np.ndarray | Coded = units
    if codes is not None:
        values, ints = values[codes], ints[codes]
        per_row = units if fixed is not None else _unit_codes(units).take(codes)
        odd = None if odd is None else odd[codes]
    if fixed is not None:
        return Pair(values.astype(np.int64), fixed) if ints.all() else Pair(values, fixed, ints if ints.any() else None)
    if ints.all():  # every cell an int: an int column, as a `<column>_unit` layout of ints reads
        return Pair(values.astype(np.int64), per_row)
    return Pair(values, per_row, ints if ints.any() else None, odd)
