"""PREVENT base 10-year equations (Khan 2024), the successor of the Pooled Cohort Equations.

Expected values come from outside the registry: preventr's README example (printed to three decimals),
a term-by-term hand computation with the coefficients written out literally as Linden's Stata
prevent10i.ado prints them, and a differential test against pyprevent 0.1.6 (a compiled Rust
implementation, test-only dependency) over random patients and at every range edge. A wrong registry
constant fails these tests rather than moving with them.
"""
from __future__ import annotations

import math
import random

import pyprevent
import pytest

from registry.loader import get_registry
from solver.library import BadValue, MissingInput, OutOfRange, compute
from tests.solver.helpers import raises_calc_error

SLUG = "prevent-10-year"
VARIANTS = ("benchmark", "published")
OUTCOMES = ("total CVD", "ASCVD", "heart failure")
PYPREVENT = {"total CVD": pyprevent.calculate_10_yr_cvd_risk, "ASCVD": pyprevent.calculate_10_yr_ascvd_risk,
             "heart failure": pyprevent.calculate_10_yr_heart_failure_risk}
EGFR, BMI = "estimated glomerular filtration rate", "Body Mass Index (BMI)"


def entities(sex="Female", age=50.0, tc=200.0, hdl=45.0, sbp=160.0, bp_tx=True, statin=False, dm=True,
             smoker=False, egfr=90.0, bmi=35.0, outcome=None, chol_unit="mg/dL"):
    e = {"sex": sex, "age": [age, "years"], "Total cholesterol": [tc, chol_unit],
         "high-density lipoprotein cholesterol": [hdl, chol_unit], "Systolic Blood Pressure": [sbp, "mm Hg"],
         "Blood pressure being treated with medicines": bp_tx, "Statin use": statin, "Diabetes history": dm,
         "Smoker": smoker, EGFR: [egfr, "mL/min/1.73 m²"], BMI: [bmi, "kg/m^2"]}
    if outcome is not None:
        e["outcome"] = outcome
    return e


def risk(variant="published", **kw) -> float:
    return compute(SLUG, entities(**kw), variant=variant).value  # type: ignore[return-value]


def theirs(outcome, sex="Female", age=50.0, tc=200.0, hdl=45.0, sbp=160.0, bp_tx=True, statin=False, dm=True,
           smoker=False, egfr=90.0, bmi=35.0) -> float:
    """pyprevent's 10-year risk in percent (argument order: sex, age, TC, HDL, SBP, diabetes, smoker, BMI,
    eGFR, antihypertensive, statin)."""
    return PYPREVENT[outcome](sex.lower(), age, tc, hdl, sbp, dm, smoker, bmi, egfr, bp_tx, statin)


# =========================================================================== the published examples


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("outcome", "printed"), [("total CVD", 0.147), ("ASCVD", 0.092), ("heart failure", 0.081)])
def test_preventr_readme_example(variant, outcome, printed):
    # preventr README: woman of 50, SBP 160 treated, TC 200, HDL 45 mg/dL, no statin, diabetic, non-smoker,
    # eGFR 90, BMI 35 -> 10-year total CVD 0.147, ASCVD 0.092, heart failure 0.081 (rounded half up to 3 dp)
    p = risk(variant, outcome=outcome) / 100
    assert math.floor(p * 1000 + 0.5) / 1000 == printed


def test_female_total_cvd_term_by_term():
    # The README woman by hand, coefficients as printed in prevent10i.ado (female total CVD):
    a = (50 - 55) / 10                            # -0.5
    nh = (200 - 45) * 0.02586 - 3.5               # 0.5083
    h = (45 * 0.02586 - 1.3) / 0.3                # -0.454333...
    s_hi = (160 - 130) / 20                       # 1.5 (SBP >= 110 term; the < 110 term is 0)
    x = (0.7939329 * a + 0.0305239 * nh - 0.1606857 * h + 0.3600781 * s_hi + 0.8667604 * 1
         + 0.0433769 * (90 - 90) / -15 + 0.3151672 * 1 - 0.0663612 * s_hi * 1
         - 0.0819715 * a * nh + 0.0306769 * a * h - 0.0946348 * a * s_hi - 0.27057 * a * 1 - 3.307728)
    assert x == pytest.approx(-1.75961, abs=1e-5)
    assert risk(outcome="total CVD") == pytest.approx(100 * math.exp(x) / (1 + math.exp(x)), rel=1e-13)


def test_the_female_sbp_coefficient_is_the_three_implementations_value():
    # 0.3600781 (preventr, prevent10i.ado, pyprevent); some pages print 0.360078: the registry holds the
    # former and marks it unverified until Supplemental Table S12A itself is read
    const = get_registry().calculators[SLUG].constants["female_total_cvd_sbp_110_up"]
    assert const.value == 0.3600781
    assert "verified: false" in (const.source or "") and "0.360078," in (const.source or "")
    lo, hi = risk(outcome="total CVD", sbp=140), risk(outcome="total CVD", sbp=150)
    logit = lambda p: math.log(p / (100 - p))
    # 10 mm Hg above 130: 0.5 x (0.3600781 - 0.0663612 x treated - 0.0946348 x age term -0.5)
    assert logit(hi) - logit(lo) == pytest.approx(0.5 * (0.3600781 - 0.0663612 + 0.0946348 * 0.5), rel=1e-9)


# =========================================================================== against pyprevent


def random_patient(rng: random.Random) -> dict:
    return {"sex": rng.choice(["Female", "Male"]), "age": rng.uniform(30, 79), "tc": rng.uniform(130, 320),
            "hdl": rng.uniform(20, 100), "sbp": rng.uniform(90, 200), "bp_tx": rng.random() < 0.5,
            "statin": rng.random() < 0.5, "dm": rng.random() < 0.5, "smoker": rng.random() < 0.5,
            "egfr": rng.uniform(15, 140), "bmi": rng.uniform(18.5, 39.9)}


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_agrees_with_pyprevent_on_random_patients(outcome):
    rng = random.Random(f"prevent-{outcome}")
    for _ in range(300):
        p = random_patient(rng)
        assert risk(outcome=outcome, **p) == pytest.approx(theirs(outcome, **p), rel=1e-12), p


EDGES = [("age", 30, 79), ("tc", 130, 320), ("hdl", 20, 100), ("sbp", 90, 200), ("egfr", 15, 140), ("bmi", 18.5, 39.9)]
KNOTS = [("sbp", 110), ("bmi", 30), ("egfr", 60)]


@pytest.mark.parametrize("outcome", OUTCOMES)
@pytest.mark.parametrize(("sex", "statin", "smoker"), [("Female", True, False), ("Male", False, True)])
def test_agrees_with_pyprevent_at_every_edge_and_knot(outcome, sex, statin, smoker):
    base = {"sex": sex, "statin": statin, "smoker": smoker}
    for name, lo, hi in EDGES:
        for v in (lo, hi):
            assert risk(outcome=outcome, **base, **{name: v}) == pytest.approx(
                theirs(outcome, **base, **{name: v}), rel=1e-12), (name, v)
    for name, knot in KNOTS:
        for v in (knot - 1e-9, knot, knot + 1e-9):
            assert risk(outcome=outcome, **base, **{name: v}) == pytest.approx(
                theirs(outcome, **base, **{name: v}), rel=1e-12), (name, v)


@pytest.mark.parametrize(("name", "lo", "hi"), EDGES)
def test_refuses_just_outside_the_ranges_as_pyprevent_does(name, lo, hi):
    variable = {"age": "age", "tc": "Total cholesterol", "hdl": "high-density lipoprotein cholesterol",
                "sbp": "Systolic Blood Pressure", "egfr": EGFR, "bmi": BMI}[name]
    step = 0.01
    for v in (lo - step, hi + step):
        with pytest.raises(ValueError):
            theirs("total CVD", **{name: v})
        err = raises_calc_error(OutOfRange, SLUG, entities(**{name: v}), variable, variant="published")
        assert "PREVENT equations cover" in str(err)


# =========================================================================== inputs and units


@pytest.mark.parametrize("variant", VARIANTS)
def test_cholesterol_in_mmol_per_l_is_used_as_given(variant):
    # the equations work in mmol/L; mg/dL is converted with their 0.02586, so 200 and 45 mg/dL are
    # 5.172 and 1.1637 mmol/L exactly, and a mmol/L value is not converted twice
    mg = risk(variant, tc=200, hdl=45)
    mmol = risk(variant, tc=200 * 0.02586, hdl=45 * 0.02586, chol_unit="mmol/L")
    assert mmol == pytest.approx(mg, rel=1e-13)
    rec = compute(SLUG, entities(tc=5.172, hdl=1.1637, chol_unit="mmol/L"), variant=variant)
    assert rec.inputs["Total cholesterol"].value == pytest.approx(200.0)


def test_cholesterol_range_in_mmol_per_l_names_both_units():
    err = raises_calc_error(OutOfRange, SLUG, entities(tc=3.36, chol_unit="mmol/L"), "Total cholesterol",
                            variant="published")
    assert "3.36 mmol/L (129.9 mg/dL)" in str(err) and "130 to 320 mg/dL" in str(err)


def test_defaults_total_cvd_and_absent_flags_count_as_no():
    full = entities(bp_tx=False, statin=False, dm=False, smoker=False)
    sparse = {k: v for k, v in full.items() if not isinstance(v, bool)}
    assert compute(SLUG, sparse, variant="benchmark").value == compute(SLUG, {**full, "outcome": "total CVD"}, variant="benchmark").value


def test_bmi_enters_heart_failure_only():
    for outcome in ("total CVD", "ASCVD"):
        assert risk(outcome=outcome, bmi=20) == risk(outcome=outcome, bmi=39)
    assert risk(outcome="heart failure", bmi=20) < risk(outcome="heart failure", bmi=39)


def test_unknown_outcome_and_missing_egfr_are_named():
    raises_calc_error(BadValue, SLUG, entities(outcome="stroke"), "outcome")
    e = entities()
    del e[EGFR]
    raises_calc_error(MissingInput, SLUG, e, EGFR)


# =========================================================================== registry links


def test_pooled_cohort_equations_name_prevent_as_successor():
    reg = get_registry()
    links = [r for r in reg.calculators["pooled-cohort-equations"].replacements if r.successor == SLUG]
    assert len(links) == 1 and links[0].kind == "replaced_by" and links[0].guideline == "aha-2023-prevent-equations"
    assert reg.calculators[SLUG].medcalc_id is None
