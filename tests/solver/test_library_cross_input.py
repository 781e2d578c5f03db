"""Cross-input plausibility rules (issue 21): registry data that warns, in both variants, when two inputs
cannot both be right (systolic at or below diastolic, HDL at or above total cholesterol)."""
from __future__ import annotations

import pytest

from registry.loader import get_registry, load
from registry.validate import validate
from solver.data import REFERENCE_CASES, read_cases
from solver.library import CalculatorError, compute

VARIANTS = ("benchmark", "published")


def bp(sbp, dbp):
    return {"Systolic Blood Pressure": [sbp, "mm Hg"], "Diastolic Blood Pressure": [dbp, "mm Hg"]}


@pytest.mark.parametrize("variant", VARIANTS)
def test_map_80_over_120_warns_and_still_computes(variant):
    r = compute("mean-arterial-pressure", bp(80, 120), variant=variant)
    assert r.value == pytest.approx((80 + 2 * 120) / 3, abs=1e-5)
    assert len(r.warnings) == 1 and "systolic-above-diastolic" in r.warnings[0] and "-40 mm Hg" in r.warnings[0]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("sbp, dbp, warned", [(120, 80, False), (81, 80, False), (80, 80, True), (80, 80.5, True)])
def test_systolic_must_exceed_diastolic_at_the_edge(variant, sbp, dbp, warned):
    assert bool(compute("mean-arterial-pressure", bp(sbp, dbp), variant=variant).warnings) is warned


@pytest.mark.parametrize("slug", ["ldl-friedewald", "ldl-sampson"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_hdl_at_or_above_total_cholesterol_warns(slug, variant):
    def lipids(tc, hdl):
        return {"Total cholesterol": [tc, "mg/dL"], "high-density lipoprotein cholesterol": [hdl, "mg/dL"],
                "Triglycerides": [100, "mg/dL"]}
    assert not compute(slug, lipids(200, 50), variant=variant).warnings
    assert "hdl-below-total-cholesterol" in " ".join(compute(slug, lipids(50, 200), variant=variant).warnings)


def test_rules_compare_converted_values():
    # 5.2 mmol/L total cholesterol is about 201 mg/dL: HDL 1.3 mmol/L is below it, 250 mg/dL is not
    ents = {"Total cholesterol": [5.2, "mmol/L"], "high-density lipoprotein cholesterol": [1.3, "mmol/L"],
            "Triglycerides": [100, "mg/dL"]}
    assert not compute("ldl-friedewald", ents, variant="benchmark").warnings
    ents["high-density lipoprotein cholesterol"] = [250, "mg/dL"]
    assert compute("ldl-friedewald", ents, variant="benchmark").warnings


def test_every_calculator_with_both_pressures_or_both_lipids_has_the_rule():
    pairs = {("Systolic Blood Pressure", "Diastolic Blood Pressure"): "systolic-above-diastolic",
             ("Total cholesterol", "high-density lipoprotein cholesterol"): "hdl-below-total-cholesterol"}
    for calc in get_registry().calculators.values():
        names = {i.name for i in calc.inputs}
        for pair, rule in pairs.items():
            if set(pair) <= names:
                assert any(r.id == rule and tuple(r.inputs or ()) == pair for r in calc.plausibility), calc.slug


def test_reversed_pressures_in_the_benchmark_data_are_flagged():
    """Five CURB-65 reference cases give a diastolic above the systolic pressure: both variants say so."""
    flagged = 0
    for case in read_cases(REFERENCE_CASES):
        if case.calculator_id != 45:
            continue
        try:
            if compute("curb-65", case.entities, variant="benchmark").warnings:
                flagged += 1
        except CalculatorError:
            pass
    assert flagged == 5


def test_a_rule_naming_an_unknown_input_fails_validation(registry_copy):
    path = registry_copy / "formulas" / "mean-arterial-pressure.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace(
        "inputs: [Systolic Blood Pressure, Diastolic Blood Pressure]", "inputs: [Systolic Blood Pressure, Diastolic]"),
        encoding="utf-8")
    problems = validate(load(registry_copy))
    assert any(p.code == "R-PLAUSIBILITY" and "'Diastolic'" in p.problem for p in problems), problems
