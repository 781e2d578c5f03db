"""Every calculator's formula is written once: the kernel `compute` runs is the one `compute_many` runs over arrays.

The proof is by observation, not by comparing two implementations: each columnar kernel is replaced by a spy
that records the reader it is given, and `compute` (a `Context`) and `compute_many` (a `Columns`) must both call
that very function. The column machinery (solver/library/vectorised.py) holds no formula: it names no calculator
and registers none.
"""
from __future__ import annotations

import inspect
from typing import Any

import pandas as pd
import pytest

from registry.loader import get_registry
from solver.library import compute, compute_many, vectorised
from solver.library.context import Context
from solver.library.functions import COLUMNAR, FUNCTIONS
from solver.library.vectorised import Columns, columnar
from tests.solver.conftest import reference_cases

CASES: dict[str, dict[str, Any]] = {}
for _c in reference_cases():
    CASES.setdefault(get_registry().by_id(_c["calculator_id"]).slug, _c["entities"])
# the successor formulas have no benchmark case: one plausible patient each (the worked examples are in
# tests/solver/test_library_successors.py and test_library_new_successors.py)
_LIPIDS = {"Total cholesterol": [200, "mg/dL"], "high-density lipoprotein cholesterol": [50, "mg/dL"]}
CASES.update({
    "sodium-correction-katz": {"Sodium": [130, "mEq/L"], "Glucose": [400, "mg/dL"]},
    "pooled-cohort-equations": {"sex": "Female", "age": [55, "years"], "Race": "White", **_LIPIDS,
                                "Systolic Blood Pressure": [120, "mm Hg"]},
    "qsofa": {"respiratory rate": [24, "breaths per minute"], "Systolic Blood Pressure": [95, "mm Hg"]},
    "ldl-sampson": {**_LIPIDS, "Triglycerides": [150, "mg/dL"]},
    "cha2ds2-va": {"age": [70, "years"], "Hypertension history": True},
    "meld-3-0": {"creatinine": [1.5, "mg/dL"], "Bilirubin": [3.0, "mg/dL"], "international normalized ratio": 1.8,
                 "Sodium": [130, "mEq/L"], "Albumin": [2.8, "g/dL"], "sex": "Male"},
    "prevent-10-year": {"sex": "Female", "age": [50, "years"], **_LIPIDS, "Systolic Blood Pressure": [130, "mm Hg"],
                        "estimated glomerular filtration rate": [90, "mL/min/1.73 m²"],
                        "Body Mass Index (BMI)": [27, "kg/m^2"]},
})


def test_every_columnar_kernel_is_the_registered_function() -> None:
    reg = get_registry()
    assert len(COLUMNAR) >= 13
    for slug in COLUMNAR:
        assert columnar(slug, reg) is FUNCTIONS[slug], slug


def test_the_column_machinery_holds_no_formula() -> None:
    source = inspect.getsource(vectorised)
    named = [slug for slug in get_registry().calculators if f'"{slug}"' in source]
    assert not named, f"solver/library/vectorised.py names calculators: {named}"
    assert not [fn for fn in FUNCTIONS.values() if fn.__module__ == vectorised.__name__]
    assert all(fn.__module__.startswith("solver.library.calculators.") for fn in FUNCTIONS.values())


@pytest.mark.parametrize("slug", sorted(COLUMNAR))
def test_both_paths_call_the_one_kernel(slug: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ents = CASES[slug]  # every columnar calculator has a case: a new one needs one here
    kernel = FUNCTIONS[slug]
    readers: list[type] = []

    def spy(x: Any) -> Any:
        readers.append(type(x))
        return kernel(x)

    monkeypatch.setitem(FUNCTIONS, slug, spy)
    value = compute(slug, ents, variant="benchmark").value
    value = value.isoformat() if hasattr(value, "isoformat") else list(value) if isinstance(value, tuple) else value
    frame = pd.DataFrame({k: pd.Series([v], dtype=object) for k, v in ents.items()})
    res = compute_many(slug, frame, variant="benchmark")
    assert res.attrs["vectorised"] and res["value"].tolist() == [value]
    assert Context in readers and Columns in readers, readers


def test_no_kernel_writes_into_an_array_in_place() -> None:
    """`x += y` rebinds a Python number but writes into a numpy array, which may be a memoised input column: the
    calculators' functions use `x = x + y`."""
    import ast
    from pathlib import Path

    from solver.library import calculators

    for path in sorted(Path(calculators.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aug = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.AugAssign)]
        assert not aug, f"{path.name}: augmented assignment at lines {aug}"
