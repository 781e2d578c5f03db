"""The working behind every answer (`compute(..., working=True)`): from the same kernel, ending at the answer,
and checked against the benchmark's own explanations of the 2,200 reference cases, number by number.

The explanations (tests/solver/data/medcalc/reference_explanations.jsonl.gz) are MedCalc-Bench's: for each line
of the reference cases, the working its reference implementation prints (its `*_explanation` functions at
commit 0eb5960, Apache-2.0; github.com/nikhilk7153/MedCalc-Bench-Verified).
"""
from __future__ import annotations

import json

import pytest

from bench.working_figures import figures, table, totals
from solver.data import REFERENCE_CASES
from solver.library import FUNCTIONS, MissingInput, compute, resolve
from solver.library.working import Step
from solver.library.working_text import first_difference, numbered

CASES = [json.loads(line) for line in REFERENCE_CASES.read_text().splitlines() if line.strip()]

# a case for each successor (no benchmark cases of its own), from the published examples the library's tests use
SUCCESSORS = {
    "meld-3-0": {"creatinine": [1.5, "mg/dL"], "Bilirubin": [3.0, "mg/dL"], "international normalized ratio": 1.8,
                 "Sodium": [130, "mEq/L"], "Albumin": [2.8, "g/dL"], "sex": "Male"},
    "qsofa": {"respiratory rate": [24, "breaths per minute"], "Systolic Blood Pressure": [95, "mm Hg"]},
    "prevent-10-year": {"sex": "Female", "age": [50.0, "years"], "Total cholesterol": [200.0, "mg/dL"],
                        "high-density lipoprotein cholesterol": [45.0, "mg/dL"],
                        "Systolic Blood Pressure": [160.0, "mm Hg"], "Blood pressure being treated with medicines": True,
                        "Statin use": False, "Diabetes history": True, "Smoker": False,
                        "estimated glomerular filtration rate": [90.0, "mL/min/1.73 m²"],
                        "Body Mass Index (BMI)": [35.0, "kg/m^2"]},
    "cha2ds2-va": {"age": [73, "years"], "Congestive Heart Failure": True},
    "ckd-epi-2021": {"creatinine": [1.2, "mg/dL"], "age": [60, "years"], "sex": "Female"},
    "ldl-sampson": {"Total cholesterol": [200, "mg/dL"], "high-density lipoprotein cholesterol": [50, "mg/dL"],
                    "Triglycerides": [150, "mg/dL"]},
    "sodium-correction-katz": {"Sodium": [130, "mmol/L"], "Glucose": [400, "mg/dL"]},
    "pooled-cohort-equations": {"sex": "Female", "age": [55, "years"], "Race": "White",
                                "Total cholesterol": [213, "mg/dL"], "high-density lipoprotein cholesterol": [50, "mg/dL"],
                                "Systolic Blood Pressure": [120, "mm Hg"],
                                "Blood pressure being treated with medicines": False, "Smoker": False,
                                "Diabetes history": False},
}


def _first_case(slug: str) -> dict:
    calc = resolve(slug)
    if calc.medcalc_id is None:
        return SUCCESSORS[slug]
    return next(c["entities"] for c in CASES if c["calculator_id"] == calc.medcalc_id)


@pytest.mark.parametrize("slug", sorted(FUNCTIONS))
@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_every_calculator_shows_working_ending_at_the_answer(slug, variant):
    try:
        res = compute(slug, _first_case(slug), variant=variant, working=True)
    except KeyError:
        pytest.skip(f"{slug} has no example here")
    assert res.working and all(isinstance(s, Step) for s in res.working)
    assert res.working[-1].kind == "answer" and res.working[-1].value == res.value
    assert compute(slug, _first_case(slug), variant=variant).working == ()  # off: nothing recorded


def test_sixty_two_calculators_are_covered():
    assert len(FUNCTIONS) == 62
    missing = [s for s in FUNCTIONS if resolve(s).medcalc_id is None and s not in SUCCESSORS]
    assert not missing


def _without_working(res):
    """Every field of a result, its sub-results' too, but the working."""
    return (*res[:-2], tuple(_without_working(r) for r in res.subs))


def test_working_never_changes_the_value_on_the_reference_cases():
    for case in CASES:
        for variant in ("benchmark", "published"):
            try:
                plain = compute(case["calculator_id"], case["entities"], variant=variant)
            except Exception as e:  # noqa: BLE001  the same refusal with working on
                with pytest.raises(type(e)):
                    compute(case["calculator_id"], case["entities"], variant=variant, working=True)
                continue
            worked = compute(case["calculator_id"], case["entities"], variant=variant, working=True)
            assert _without_working(worked) == _without_working(plain), case


def test_against_the_benchmarks_explanations_of_all_2200_cases(capsys):
    rows = figures()
    t = totals(rows)
    with capsys.disabled():
        print("\n" + table(rows))
    assert t["cases"] == 2200 and t["ends_at_answer"] == 2200
    assert t["shown_share"] >= 0.95  # the working's numbers (beyond the inputs) the explanation shows
    assert t["specific_share"] >= 0.70  # the explanation's case-specific numbers the working shows
    assert t["derived_share"] >= 0.70  # ... leaving out the inputs as given too


def test_a_points_score_shows_each_criterion_and_the_running_total():
    case = next(c for c in CASES if c["calculator_id"] == 45)  # CURB-65
    res = compute(45, case["entities"], working=True, variant="benchmark")
    points = [s for s in res.working if s.kind == "points"]
    assert len(points) == 5 and points[-1].total == res.value
    running = 0
    for s in points:
        running += s.value
        assert s.total == running


def test_conversions_show_the_benchmarks_chain():
    ents = {"Sodium": [127, "mmol/L"], "Glucose": [60.5, "mmol/L"], "Blood Urea Nitrogen (BUN)": [77.9, "mg/dL"]}
    steps = compute(30, ents, working=True, variant="benchmark").working
    chain = [s.value for s in steps if s.kind == "conversion"]
    assert chain == [0.0605, 10.89968, 10899.68, 1089.968]  # mol, g (180.16 g/mol from units.yaml), mg, mg/dL


def test_nested_calculators_show_their_sub_results():
    ents = {"creatinine": [3.28, "mg/dL"], "sex": "Male", "height": [172.5, "cm"], "age": [32, "years"],
            "weight": [66.0, "kg"]}
    steps = compute(2, ents, working=True, variant="benchmark").working
    subs = {s.sources[0]: s.value for s in steps if s.kind == "sub"}
    assert subs == {"calculator body-mass-index": 22.18021, "calculator ideal-body-weight": 68.20087}
    assert any(s.step.startswith("weight used") and s.value == 66.0 for s in steps)


def test_the_published_variant_names_the_deviation_that_applies():
    ents = {"creatinine": [3.28, "mg/dL"], "sex": "Male", "height": [172.5, "cm"], "age": [32, "years"],
            "weight": [66.0, "kg"]}
    notes = [s for s in compute(2, ents, variant="published", working=True).working if s.kind == "note"]
    assert [s.sources for s in notes] == [("deviation bmi-class-weight",)]
    assert not [s for s in compute(2, ents, variant="benchmark", working=True).working if s.kind == "note"]


def test_constants_are_named_as_sources():
    steps = compute(2, _first_case("creatinine-clearance-cockcroft-gault"), working=True, variant="benchmark").working
    assert "constant age_offset" in {src for s in steps for src in s.sources}


def test_bad_input_gets_computes_error():
    with pytest.raises(MissingInput):
        compute(45, {"age": [67, "years"]}, working=True, variant="benchmark")


def test_explain_lines_fit_80_columns_and_are_numbered():
    case = next(c for c in CASES if c["calculator_id"] == 29)  # PSI: long labels
    lines = numbered([s.to_json() for s in compute(29, case["entities"], working=True, variant="benchmark").working])
    assert all(len(line) <= 80 for line in lines)
    assert lines[0].startswith("  1. ")


def test_first_difference_names_the_step():
    a = [{"step": "x", "value": 1}, {"step": "y", "value": 2}]
    assert first_difference(a, a) is None
    assert first_difference(a, [a[0], {"step": "y", "value": 3}]) == "working step 2 (y): value recorded 2, now 3"
    assert first_difference(a, a[:1]) == "working: recorded 2 steps, now 1"
