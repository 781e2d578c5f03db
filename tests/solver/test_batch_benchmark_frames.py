"""compute_many on frames shaped as users have them: the benchmark's own entity blocks turned into columns.

Each row's "Relevant Entities" becomes a row of a DataFrame (`from_records`): units change from row to row, a
criterion a row does not give is an empty cell (NaN in an object column), values are `[number, "unit"]` lists (or
their JSON text, as a CSV holds them). The blocks are the shipped reference cases and one-shot rows (answers from
the benchmark's own code), mixed, with criteria dropped and units rewritten at random (hypothesis): every value and
error must be `compute`'s for the row as the frame holds it, and no valid row may leave the columnar path
(`left_path`: refused rows that `compute` answers with a value).
"""
from __future__ import annotations

import datetime as dt
import json
import math
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry.loader import get_registry
from solver.data import ONE_SHOT, REFERENCE_CASES, read_benchmark
from solver.library import CalculatorError, compute, compute_many
from solver.library.core import resolve
from solver.library.vectorised import columnar


@lru_cache(maxsize=1)
def _blocks() -> dict[str, tuple[dict[str, Any], ...]]:
    reg = get_registry()
    out: dict[str, list[dict[str, Any]]] = {}
    for path in (REFERENCE_CASES, ONE_SHOT):
        for row in read_benchmark(path).rows:
            out.setdefault(resolve(row.calculator_id, reg).slug, []).append(row.entities)
    return {k: tuple(v) for k, v in out.items()}


SLUGS = sorted(s for s in _blocks() if columnar(s, get_registry()) is not None)
SCALAR_ONLY = {("glasgow-blatchford", "published")}  # (as tests/solver/test_batch_columnar.py lists it)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (a == b and math.copysign(1, a) == math.copysign(1, b)) or (math.isnan(a) and math.isnan(b))
    return a == b and type(a) is type(b)


def _held(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Each row as the frame holds it: an empty cell not given, numpy scalars as Python values, JSON text parsed
    (what compute_many documents a cell to mean), in the order of the input names (as compute_many hands a row
    to compute: an error that names the first bad input names the same one)."""
    out = []
    for rec in frame.to_dict("records"):
        e = {}
        for k, v in sorted(rec.items()):
            v = v.item() if isinstance(v, np.generic) else v
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            e[k] = json.loads(v) if isinstance(v, str) and v.startswith("[") else v
        out.append(e)
    return out


def _expected(slug: str, ents: dict[str, Any], variant: str = "benchmark") -> tuple[Any, str | None]:
    try:
        v = compute(slug, ents, variant=variant).value
    except CalculatorError as e:
        return None, str(e)
    return (v.isoformat() if isinstance(v, dt.date) else list(v) if isinstance(v, tuple) else v), None


def _check(slug: str, frame: pd.DataFrame, variant: str = "benchmark") -> None:
    res = compute_many(slug, frame, variant=variant)
    if not res.attrs["vectorised"]:  # (a variant with a branch of no columnar form: row by row, by design)
        assert (slug, variant) in SCALAR_ONLY
        return
    values, errors = res["value"].tolist(), res["error"].tolist()
    for i, ents in enumerate(_held(frame)):
        want, why = _expected(slug, ents, variant)
        assert _same(values[i], want) and errors[i] == why, (slug, i, ents, values[i], errors[i], want, why)
    assert res.attrs["left_path"] == 0, (slug, res.attrs)


# another spelling of the same quantity: unit -> (unit, factor applied to the value); compute decides what it is
REWRITE = {"years": ("months", 12), "kg": ("lbs", 2.2), "cm": ("m", 0.01), "m": ("cm", 100), "in": ("cm", 2.54),
           "mg/dL": ("µmol/L", 88.4), "µmol/L": ("mg/dL", 1 / 88.4), "mmol/L": ("mEq/L", 1), "mEq/L": ("mmol/L", 1),
           "degrees celsius": ("degrees fahrenheit", 1.8)}


@st.composite
def frames(draw: Any, slug: str) -> pd.DataFrame:
    blocks = _blocks()[slug]
    picks = draw(st.lists(st.integers(0, len(blocks) - 1), min_size=1, max_size=25))
    rows = []
    for k in picks:
        row = {}
        for name, cell in blocks[k].items():
            what = draw(st.sampled_from(["keep", "keep", "keep", "drop", "rewrite", "int"]))
            if what == "drop":  # a criterion (or a required input) not given: an empty cell
                continue
            if what == "rewrite" and isinstance(cell, list) and len(cell) == 2 and cell[1] in REWRITE:
                unit, factor = REWRITE[cell[1]]
                cell = [round(cell[0] * factor, 2), unit]
            elif what == "int" and isinstance(cell, list) and len(cell) == 2 and isinstance(cell[0], float) \
                    and cell[0].is_integer():
                cell = [int(cell[0]), cell[1]]  # ints among floats
            row[name] = cell
        rows.append(row)
    frame = pd.DataFrame.from_records(rows)
    if draw(st.booleans()):  # the JSON text of the list cells, as a CSV of the entities holds them
        for col in frame.columns:
            if frame[col].map(lambda c: isinstance(c, list)).any():
                frame[col] = frame[col].map(lambda c: json.dumps(c) if isinstance(c, list) else c)
    return frame


def _on_frames(slug: str, check: Any, examples: int) -> None:
    """`check(slug, frame)` on `examples` benchmark-shaped frames of `slug` (derandomized: the same in every run)."""
    @settings(max_examples=examples, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(frame=frames(slug))
    def run(frame: pd.DataFrame) -> None:
        check(slug, frame)

    run()


@pytest.mark.parametrize("slug", SLUGS)
def test_benchmark_shaped_frames_equal_compute_and_stay_columnar(slug: str) -> None:
    _on_frames(slug, _check, 12)


@pytest.mark.parametrize("variant", ["benchmark", "published"])
@pytest.mark.parametrize("slug", SLUGS)
def test_every_shipped_entity_block_as_one_frame(slug: str, variant: str) -> None:
    """All of a calculator's shipped blocks as one frame, each three times: every valid row stays on the
    columnar path, and every answer is compute's, in both variants."""
    blocks = list(_blocks()[slug])
    frame = pd.DataFrame.from_records(blocks * 3)
    _check(slug, frame, variant)


def test_booleans_stored_as_objects_are_coded_not_read_cell_by_cell() -> None:
    """A criterion column with empty cells holds True/False objects: it is coded once per distinct value."""
    from solver.library.batch import entity_columns
    from solver.library.vectorised import Coded

    frame = pd.DataFrame.from_records([{"Hemoptysis": True}, {}, {"Hemoptysis": False}] * 10)
    cols = entity_columns(frame, get_registry().calculators["wells-pe"])
    assert isinstance(cols["Hemoptysis"], Coded) and sorted(cols["Hemoptysis"].uniques) == [False, True]


def test_ints_among_floats_are_typed_once_per_distinct_combination() -> None:
    """Anion gap of all-int cells is an int (as compute gives it), of a float cell a float; the arrays cannot
    tell, so compute answers once per distinct combination of cells, never once per row."""
    rows = [{"Sodium": [140, "mmol/L"], "Chloride": [100, "mmol/L"], "Bicarbonate": [24, "mmol/L"]},
            {"Sodium": [140.0, "mmol/L"], "Chloride": [100, "mmol/L"], "Bicarbonate": [24.5, "mmol/L"]}] * 500
    res = compute_many("anion-gap", pd.DataFrame.from_records(rows), variant="benchmark")
    assert res["value"].tolist()[:2] == [16, 15.5] and type(res["value"].iloc[0]) is int
    assert res.attrs["left_path"] == 0 and res.attrs["by_combination"] == 500 and res.attrs["compute_calls"] == 1


def _check_details(slug: str, frame: pd.DataFrame, variant: str = "benchmark") -> None:
    """details=True: each row's unit, warnings and recorded inputs are compute's for the row as the frame holds it
    (and None on a row with an error); the values and errors are those of details=False."""
    res = compute_many(slug, frame, variant=variant, details=True)
    plain = compute_many(slug, frame, variant=variant)
    assert res["value"].tolist() == plain["value"].tolist() or all(
        _same(a, b) for a, b in zip(res["value"].tolist(), plain["value"].tolist()))
    assert res["error"].tolist() == plain["error"].tolist()
    for i, ents in enumerate(_held(frame)):
        try:
            r = compute(slug, ents, variant=variant)
        except CalculatorError:
            assert (res["unit"].iloc[i], res["warnings"].iloc[i], res["inputs"].iloc[i]) == (None, None, None)
            continue
        got = (res["unit"].iloc[i], res["warnings"].iloc[i], res["inputs"].iloc[i])
        assert got == (r.unit, r.warnings, r.inputs), (slug, i, ents, got)
        assert all(_same(a.value, b.value) for a, b in zip(got[2].values(), r.inputs.values())), (slug, i)
    assert res.attrs["details_compute_calls"] <= len(frame)


@pytest.mark.parametrize("slug", SLUGS)
def test_details_equal_compute_row_by_row_on_benchmark_shaped_frames(slug: str) -> None:
    _on_frames(slug, _check_details, 6)


def test_details_name_broken_plausibility_rules_and_share_no_mutable_cell() -> None:
    """A blood pressure with the systolic under the diastolic breaks a difference rule: the warning is the row's,
    as compute gives it; equal rows are computed once, and each row holds its own list and dict."""
    good = {"age": [55, "years"], "sex": "Male", "Systolic Blood Pressure": [140, "mm hg"],
            "Diastolic Blood Pressure": [80, "mm hg"]}
    bad = {**good, "Systolic Blood Pressure": [70, "mm hg"]}
    slug = "mean-arterial-pressure"
    names = {i.name for i in get_registry().calculators[slug].inputs}
    rows = [{k: v for k, v in r.items() if k in names} for r in (good, bad, good, bad)]
    res = compute_many(slug, pd.DataFrame.from_records(rows), details=True, variant="benchmark")
    want = compute(slug, rows[1], variant="benchmark").warnings
    assert want and res["warnings"].tolist() == [[], want, [], want]
    assert res.attrs["details_compute_calls"] == 2
    assert res["warnings"].iloc[1] is not res["warnings"].iloc[3]
    assert res["inputs"].iloc[0] is not res["inputs"].iloc[2] and res["inputs"].iloc[0] == res["inputs"].iloc[2]
