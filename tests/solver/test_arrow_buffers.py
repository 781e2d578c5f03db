"""solver/library/arrow_buffers.py: numpy of Arrow and Arrow of numpy from their buffers, checked against pyarrow's
own conversions (slices, nulls, every fixed-width number type), and a Parquet `formula batch` that needs no pandas
imports none."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from solver.library import arrow_buffers  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
         pa.float32(), pa.float64()]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(TYPES), st.lists(st.one_of(st.none(), st.integers(0, 120)), max_size=70),
       st.integers(0, 20), st.integers(0, 70))
def test_numbers_valid_and_floats_read_what_pyarrow_reads(t, cells, start, length) -> None:
    array = pa.array(cells, type=t).slice(start, length)  # a slice: an offset into the buffers, in bits for nulls
    want = array.to_pylist()
    ok = arrow_buffers.valid(array)
    assert (ok is None) == (array.null_count == 0)
    got_valid = [True] * len(array) if ok is None else ok.tolist()
    assert got_valid == [c is not None for c in want]
    nums = arrow_buffers.numbers(array)
    assert [v for v, keep in zip(nums.tolist(), got_valid) if keep] == [c for c in want if c is not None]
    floats = arrow_buffers.floats(array)
    assert [None if np.isnan(v) else v for v in floats.tolist()] == [None if c is None else float(c) for c in want]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.booleans()), max_size=70), st.integers(0, 20), st.integers(0, 70))
def test_booleans_read_what_pyarrow_reads(cells, start, length) -> None:
    array = pa.array(cells, type=pa.bool_()).slice(start, length)
    ok = arrow_buffers.valid(array)
    got = arrow_buffers.booleans(array).tolist()
    keep = [True] * len(array) if ok is None else ok.tolist()
    assert [v if k else None for v, k in zip(got, keep)] == array.to_pylist()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(allow_nan=False), st.integers(-(2**53), 2**53)), max_size=60))
def test_from_numbers_and_texts_make_what_pyarrow_makes(cells) -> None:
    values = np.array([0.0 if c is None else float(c) for c in cells], dtype=np.float64)
    ok = np.array([c is not None for c in cells], dtype=bool)
    got = arrow_buffers.from_numbers(values, ok)
    got.validate(full=True)
    assert got.to_pylist() == [None if c is None else float(c) for c in cells]
    errors = np.empty(len(cells), dtype=object)
    errors[:] = [None if c is None else f"row error ✓ {c}" for c in cells]
    text = arrow_buffers.texts(errors)
    text.validate(full=True)
    assert text.type == pa.string() and text.to_pylist() == errors.tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.tuples(st.integers(0, 45), st.integers(0, 6)),
                          st.lists(st.integers(-(2**62), 2**62), max_size=3)), max_size=60))
def test_int_lists_make_what_pyarrow_makes(cells) -> None:
    """[weeks, days] values (lists or tuples, None for a row with an error) as pyarrow's own list<int64> array."""
    values = np.empty(len(cells), dtype=object)
    for k, c in enumerate(cells):
        values[k] = c
    got = arrow_buffers.int_lists(values)
    got.validate(full=True)
    assert got.equals(pa.array([None if c is None else list(c) for c in cells], type=pa.list_(pa.int64())))


def test_from_numbers_keeps_integers_and_refuses_objects() -> None:
    got = arrow_buffers.from_numbers(np.array([1, 2, 3], dtype=np.int64))
    assert got.type == pa.int64() and got.to_pylist() == [1, 2, 3] and got.null_count == 0
    with pytest.raises(TypeError):
        arrow_buffers.from_numbers(np.array(["a"], dtype=object))
    with pytest.raises(TypeError):
        arrow_buffers.numbers(pa.array(["a"]))


def _batch_without_pandas(tmp_path: Path, table: Any, slug: str) -> list[dict[str, Any]]:
    """`formula batch` of `table` (written to Parquet) in a fresh process, which must exit 0 without importing
    pandas; the output's rows."""
    src, out = tmp_path / "cohort.parquet", tmp_path / "out.parquet"
    pq.write_table(table, src)
    code = ("import sys\nfrom cli.main import main\n"
            f"rc = main(['batch', {str(src)!r}, '--calculator', {slug!r}, '--out', {str(out)!r}, '--no-progress', "
            "'--allow-errors'])\n"
            "print('PANDAS', 'pandas' in sys.modules, rc)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "PANDAS False 0" in done.stdout, done.stdout + done.stderr
    return pq.read_table(out).to_pylist()


def test_a_parquet_batch_of_plain_numbers_imports_no_pandas(tmp_path) -> None:
    """BMI from a Parquet file (value columns, dictionary unit columns, a row refused): read, computed
    and written without pandas, whose import costs the command about 0.15 s; the answers are `compute`'s. (Units
    that vary from row to row, or a row without a unit, are grouped by pandas' factorize, imported then.)"""
    from solver.library import compute

    weights, heights = [70.0, 82.5, -5.0, 101.2], [175.0, 180.0, 160.0, 190.5]  # (-5 kg: that row's error)
    wunits, hunits = ["kg"] * 4, ["cm"] * 4
    table = pa.table({"weight": weights, "weight_unit": pa.array(wunits).dictionary_encode(),
                      "height": heights, "height_unit": pa.array(hunits).dictionary_encode()})
    got = _batch_without_pandas(tmp_path, table, "body-mass-index")
    for row, w, wu, h, hu in zip(got, weights, wunits, heights, hunits):
        if w < 0:
            assert row["value"] is None and "weight" in row["error"]
            continue
        want = compute("body-mass-index", {"weight": [w, wu], "height": [h, hu]}).value
        assert row["value"] == want and row["error"] is None, (row, want)
    assert json.dumps(got[0]["value"]) == json.dumps(compute("body-mass-index", {"weight": [70.0, "kg"],
                                                                                 "height": [175.0, "cm"]}).value)


@pytest.mark.parametrize("slug, table, cells", [
    ("ckd-epi-2021",  # a power of a creatinine ratio, once per distinct ratio: the grouping was pandas' factorize
     {"age": [40, 71, 58], "age_unit": ["years"] * 3, "sex": ["Female", "Male", "Male"],
      "creatinine": [0.71, 1.37, 88.4], "creatinine_unit": ["mg/dL", "mg/dL", "µmol/L"]},
     lambda r: {"age": [r["age"], r["age_unit"]], "sex": r["sex"], "creatinine": [r["creatinine"], r["creatinine_unit"]]}),
    ("estimated-due-date",  # a date's text, once per distinct day
     {"Last menstrual date": ["05/11/2008", "02/12/2000", "05/11/2008"], "cycle length": [23, 35, 28]},
     lambda r: {"Last menstrual date": r["Last menstrual date"], "cycle length": r["cycle length"]}),
    ("free-water-deficit",  # an age as JSON text, a multi-part one among them (`formula convert` writes them so)
     {"age": ['[64, "years", 5, "months"]', '[49, "years"]', None, '[49, "years"]'], "sex": ["Male", "Female"] * 2,
      "Sodium": [151.0, 148.5, 150.0, 160.0], "Sodium_unit": ["mmol/L"] * 4,
      "weight": [70, 61, 80, 55], "weight_unit": ["kg", "kg", "lbs", "kg"]},
     lambda r: {k: json.loads(r[k]) if k == "age" and r[k] else [r[k], r[f"{k}_unit"]] if f"{k}_unit" in r else r[k]
                for k in ("age", "sex", "Sodium", "weight") if r[k] is not None}),
    ("steroid-conversion",  # a drug and its dose as JSON text
     {"input steroid": ['["Hydrocortisone IV", 33, "mg"]', '["MethylPrednisoLONE IV", 5.5, "mg"]'],
      "target steroid": ["Hydrocortisone PO", "Hydrocortisone IV"]},
     lambda r: {"input steroid": json.loads(r["input steroid"]), "target steroid": r["target steroid"]}),
])
def test_a_parquet_batch_of_powers_dates_and_json_text_imports_no_pandas(tmp_path, slug, table, cells) -> None:
    """Values grouped before a Python function runs once per distinct value (a power, a date's text) are grouped by
    numpy (`vectorised.factorize`), and JSON text cells are parsed once per distinct text (`json_cells`), so these
    batches import no pandas either; the answers (and the row errors) are `compute`'s."""
    from solver.library import CalculatorError, compute

    arrays = {k: pa.array(v).dictionary_encode() if k.endswith("_unit") or k == "sex" else pa.array(v)
              for k, v in table.items()}
    got = _batch_without_pandas(tmp_path, pa.table(arrays), slug)
    for row in got:
        try:
            want = compute(slug, cells(row)).value
        except CalculatorError as e:
            assert row["value"] is None and row["error"] == str(e), (row, e)
            continue
        assert row["value"] == (want.isoformat() if hasattr(want, "isoformat") else want), (row, want)
