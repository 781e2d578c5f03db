"""Framingham's columnar log and exp are numpy's (`numpy_math=True`): no answer may change against `math`.

numpy's exp and log differ from Python's by one unit in the last place for some arguments; Framingham rounds
its risk to 3 decimals, and a row near a half step is left to `compute`, so its answers must be exactly those
of the `math` path over its reference cases and 100,000 generated rows (both variants). The Pooled Cohort
Equations and PREVENT give their risk unrounded, so numpy would change some answers: they must keep `math`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from solver.library import CalculatorError, compute, compute_many
from solver.library import vectorised as v
from solver.library.rounding import Step
from tests.solver.conftest import reference_cases

SLUG = "framingham-hard-chd"
COLUMNS = {"age": ("age", "years"), "Total cholesterol": ("tc", "mg/dL"),
           "high-density lipoprotein cholesterol": ("hdl", "mg/dL"), "Systolic Blood Pressure": ("sbp", "mm Hg")}


def _generated(n: int, seed: int = 20261202) -> pd.DataFrame:
    """Patients across and a little beyond the ranges the equations cover, with the precision of recorded data."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "sex": rng.choice(["Male", "Female"], n), "age": rng.integers(25, 85, n).astype(float),
        "tc": np.round(rng.uniform(120, 340, n), 0), "hdl": np.round(rng.uniform(20, 110, n), 0),
        "sbp": rng.integers(85, 210, n).astype(float), "Smoker": rng.random(n) < 0.3,
        "Blood pressure being treated with medicines": rng.random(n) < 0.3})


def _both(monkeypatch: pytest.MonkeyPatch, frame: pd.DataFrame, variant: str,
          columns: dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    fast = compute_many(SLUG, frame, variant=variant, columns=columns)
    with monkeypatch.context() as m:
        m.setattr(v, "NUMPY_MATH", set())
        exact = compute_many(SLUG, frame, variant=variant, columns=columns)
    return fast, exact


def test_the_set_is_framingham_alone() -> None:
    assert {SLUG} == v.NUMPY_MATH


@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_numpy_math_changes_no_answer_of_100000_generated_rows(monkeypatch: pytest.MonkeyPatch, variant: str) -> None:
    frame = _generated(100_000)
    fast, exact = _both(monkeypatch, frame, variant, COLUMNS)
    assert fast["value"].tolist() == exact["value"].tolist()
    assert fast["error"].tolist() == exact["error"].tolist()
    # no valid row left alone on the math path; on numpy's only the rare rows near a half step (about 2 in 10^6)
    assert exact.attrs["left_path"] == 0 and fast.attrs["left_path"] <= 3
    assert fast["error"].notna().sum() < len(frame) // 2  # most rows computed, not refused


@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_numpy_math_changes_no_answer_of_the_reference_cases(monkeypatch: pytest.MonkeyPatch, variant: str) -> None:
    ents = [c["entities"] for c in reference_cases() if c["calculator_id"] == 46]
    assert len(ents) == 40
    frame = pd.DataFrame.from_records(ents)
    fast, exact = _both(monkeypatch, frame, variant)
    assert fast["value"].tolist() == exact["value"].tolist()
    for i, e in enumerate(ents):  # and both are compute's
        try:
            want = compute(SLUG, e, variant=variant).value
        except CalculatorError:  # a refused row: its error is the same on both paths
            assert fast["error"].iloc[i] == exact["error"].iloc[i] is not None
            continue
        assert fast["value"].iloc[i] == want


def test_a_risk_near_a_half_step_is_left_to_compute() -> None:
    """The guard of `Columns.round_to`: a value within a millionth of a step of a half is refused (compute rounds
    it), any other is not."""
    cols = v.Columns.__new__(v.Columns)
    cols.approximate, cols.bad = True, np.zeros(3, dtype=bool)
    cols.round_to(np.array([12.3455, 12.34550000001, 12.3456]), Step("half_even", 3))
    assert cols.bad.tolist() == [True, True, False]
