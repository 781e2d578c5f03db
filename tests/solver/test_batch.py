"""compute_many equals compute, row by row, on every reference case (vectorised calculators included)."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from solver.library import CalculatorError, compute, compute_many
from solver.library.functions import COLUMNAR as VECTORISED
from tests.solver.conftest import reference_cases

CASES = reference_cases()
BY_ID: dict[int, list[dict]] = {}
for _c in CASES:
    BY_ID.setdefault(_c["calculator_id"], []).append(_c)
FIVE = {"body-mass-index", "ckd-epi-2021", "meld-na", "has-bled", "creatinine-clearance-cockcroft-gault"}


def _expected(cid, ents, variant):
    try:
        r = compute(cid, ents, variant=variant)
    except CalculatorError as e:
        return None, str(e)
    v = r.value
    return (v.isoformat() if hasattr(v, "isoformat") else list(v) if isinstance(v, tuple) else v), None


def _same(a, b) -> bool:
    """Equal to the bit, and of the same type (an int stays an int)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b) or (math.isnan(a) and math.isnan(b))
    return a == b and type(a) is type(b)


def _check(cid, frame, ents_list, variant, **kw):
    res = compute_many(cid, frame, variant=variant, **kw)
    assert list(res.index) == list(frame.index)
    for got, err, ents in zip(res["value"].tolist(), res["error"].tolist(), ents_list):
        value, error = _expected(cid, ents, variant)
        assert err == error, (cid, ents)
        assert _same(got, value), (cid, variant, ents, got, value)
    return res


def _mixed_int_rows(ents: list[dict]) -> int:
    """Rows holding an int number in a column that also holds floats."""
    def number(cell):
        v = cell[0] if isinstance(cell, list) and cell else cell
        return type(v) if type(v) in (int, float) else None

    kinds = {k: {number(e[k]) for e in ents if k in e} for k in {k for e in ents for k in e}}
    mixed = {k for k, t in kinds.items() if {int, float} <= t}
    return sum(any(k in e and number(e[k]) is int for k in mixed) for e in ents)


def test_vectorised_set_covers_the_five():
    assert FIVE <= set(VECTORISED)


@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_every_reference_case_row_by_row(variant):
    """One frame per calculator with the entities as cells ([value, unit] lists), as compute takes them."""
    vectorised = 0
    for cid, cases in BY_ID.items():
        ents = [c["entities"] for c in cases]
        frame = pd.DataFrame({"_row": range(len(ents))})
        names = sorted({k for e in ents for k in e})
        for name in names:
            frame[name] = pd.Series([e.get(name) for e in ents], dtype=object)
        res = _check(cid, frame, ents, variant)
        if res.attrs["vectorised"]:
            vectorised += 1
            # every valid case went through numpy, except rows where an int among floats could make the library's
            # result an int (Python's type, which an array of floats cannot carry); a refused row is worded by compute
            refused = int(res["error"].notna().sum())
            assert res.attrs["row_by_row"] <= _mixed_int_rows(ents) + refused, cid
    assert vectorised >= 7  # the five, and the body-weight calculators Cockcroft-Gault uses


@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_vectorised_value_and_unit_columns(variant):
    """The cohort layout: numbers in one column, units in `<column>_unit`; bare JSON text cells as CSV stores them."""
    for cid, cases in BY_ID.items():
        ents = [c["entities"] for c in cases]
        if cases[0]["calculator_id"] not in {2, 3, 6, 23, 25}:
            continue
        frame = pd.DataFrame(index=range(100, 100 + len(ents)))
        for name in sorted({k for e in ents for k in e}):
            cells = [e.get(name) for e in ents]
            pairs = [c for c in cells if c is not None]
            if all(isinstance(c, list) and len(c) == 2 for c in pairs):
                frame[name] = [c[0] if c is not None else np.nan for c in cells]
                frame[f"{name}_unit"] = [c[1] if c is not None else None for c in cells]
            elif all(isinstance(c, list) for c in pairs):
                frame[name] = [json.dumps(c, ensure_ascii=False) if c is not None else None for c in cells]
            else:
                frame[name] = pd.Series(cells, dtype=object, index=frame.index)
        res = _check(cid, frame, ents, variant)
        assert res.attrs["vectorised"] and res.attrs["row_by_row"] == 0


def test_bad_rows_keep_their_own_error():
    data = {
        "sex": ["Male", "mle", "Female", None, "Male"],
        "age": [[53, "years"], [53, "years"], [70, "years"], [40, "years"], [53, "aeons"]],
        "creatinine": [[1.39, "mg/dL"], [1.39, "mg/dL"], [88, "µmol/L"], [1.0, "mg/dL"], [1.0, "mg/dL"]],
    }
    frame = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in data.items()})
    ents = [{k: v[i] for k, v in data.items() if v[i] is not None} for i in range(5)]
    res = _check("ckd-epi-2021", frame, ents, "benchmark")
    errors = res["error"].tolist()
    assert [e is not None for e in errors] == [False, True, False, True, True]
    assert "'sex'" in errors[1] and "required input is missing" in errors[3]
    assert res.attrs["row_by_row"] == 3


def test_column_mapping_and_fixed_units():
    frame = pd.DataFrame({"pid": ["a", "b"], "kg": [87.0, 60.5], "cm": [175, 160]})
    res = compute_many(6, frame, columns={"weight": ("kg", "kg"), "height": ("cm", "cm")}, variant="benchmark")
    assert res["value"].tolist() == [compute(6, {"weight": [87.0, "kg"], "height": [175, "cm"]}, variant="benchmark").value,
                                     compute(6, {"weight": [60.5, "kg"], "height": [160, "cm"]}, variant="benchmark").value]
    with pytest.raises(ValueError, match="unknown input"):
        compute_many(6, frame, columns={"mass": "kg"}, variant="benchmark")
    with pytest.raises(ValueError, match="not in the table"):
        compute_many(6, frame, columns={"weight": "kilos"}, variant="benchmark")


def test_forced_row_by_row_equals_vectorised():
    rng = np.random.default_rng(7)
    n = 3000
    frame = pd.DataFrame({
        "sex": rng.choice(["Male", "Female"], n), "age": rng.integers(18, 95, n), "age_unit": "years",
        "weight": np.round(rng.uniform(35, 160, n), 1), "weight_unit": rng.choice(["kg", "lbs"], n),
        "height": np.round(rng.uniform(140, 205, n), 1), "height_unit": "cm",
        "creatinine": np.round(rng.uniform(0.3, 9, n), 2), "creatinine_unit": "mg/dL",
    })
    for variant in ("benchmark", "published"):
        a = compute_many(2, frame, variant=variant)
        b = compute_many(2, frame, variant=variant, vectorise=False)
        assert a.attrs["vectorised"] and not b.attrs["vectorised"]
        assert all(_same(x, y) for x, y in zip(a["value"], b["value"]))
        assert a["error"].equals(b["error"])


def test_an_empty_optional_column_is_not_given():
    """A numeric column with no value in any row (an empty CSV column) means the entity was not given."""
    frame = pd.DataFrame({"Sodium": [140.0], "Sodium_unit": ["mmol/L"], "Chloride": [100.0], "Chloride_unit": ["mmol/L"],
                          "Bicarbonate": [24.0], "Bicarbonate_unit": ["mmol/L"], "Albumin": [np.nan]})
    res = compute_many("albumin-corrected-anion-gap", frame, variant="benchmark")
    assert res["error"][0] == _expected("albumin-corrected-anion-gap", {
        "Sodium": [140.0, "mmol/L"], "Chloride": [100.0, "mmol/L"], "Bicarbonate": [24.0, "mmol/L"]}, "benchmark")[1]


@pytest.mark.parametrize("as_text", [False, True])
def test_pair_cells_are_columnar_with_bad_cells_mixed_in(as_text):
    """[value, unit] cells (or their JSON text, as a CSV of MedCalc-Bench entities holds them) convert with numpy;
    ints among floats keep their type, and odd cells (a NaN value, a bool, text, an unknown unit) keep their own
    error through compute."""
    cells = [[70, "kg"], [70.5, "kg"], [154, "lbs"], [float("nan"), "kg"], None, [80, "furlongs"], [True, "kg"],
             ["heavy", "kg"], [2 ** 60, "kg"], [65.0, "kg"], {"kg": 70}, [70, ["kg"]]]
    heights = [[170, "cm"]] * len(cells)
    ents = [{"height": h} if c is None else {"weight": c, "height": h} for c, h in zip(cells, heights)]
    enc = (lambda c: None if c is None else json.dumps(c)) if as_text else (lambda c: c)
    if as_text:  # text that is no JSON list stays text, as `compute_many` reads a CSV cell
        ents[10]["weight"] = json.dumps({"kg": 70})
    frame = pd.DataFrame({"weight": pd.Series([enc(c) for c in cells], dtype=object),
                          "height": pd.Series([enc(h) for h in heights], dtype=object)})
    for variant in ("benchmark", "published"):
        res = _check("body-mass-index", frame, ents, variant)
        # only the rows with a bad cell leave numpy (compute words their error)
        assert res.attrs["vectorised"] and res.attrs["row_by_row"] == int(res["error"].notna().sum()) == 8
    clean = pd.DataFrame({"weight": pd.Series([enc([70 + i % 9, "kg"]) for i in range(500)], dtype=object),
                          "height": pd.Series([enc([150.5 + i % 40, "cm"]) for i in range(500)], dtype=object)})
    assert compute_many("body-mass-index", clean, variant="benchmark").attrs["row_by_row"] == 0
