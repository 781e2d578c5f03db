"""Cardiovascular point scores: deviations, clinical invariants and bad input.

Covers cha2ds2-vasc, wells-pe, wells-dvt, revised-cardiac-risk-index, heart-score, has-bled and
perc-rule. The all-calculators reference test lives elsewhere.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.library import BadValue, MissingInput, OutOfRange, UnknownInput, UnknownUnit, compute
from tests.solver.helpers import raises_calc_error

FAST = settings(max_examples=60, deadline=None)


def both(slug: str, ents: dict) -> tuple:
    return compute(slug, ents, variant="benchmark").value, compute(slug, ents, variant="published").value


def flags(names: list[str]):
    """A strategy of entity dicts giving each boolean criterion True, False or leaving it out."""
    return st.fixed_dictionaries({}, optional={n: st.booleans() for n in names})


# ----------------------------------------------------------------------------- (a) deviations


@pytest.mark.deviation("heart-score", "atherosclerotic-disease-alone")
def test_heart_atherosclerotic_disease_alone_scores_two_when_published():
    ents = {"age": [30, "years"], "atherosclerotic disease": True}
    bench, pub = both("heart-score", ents)
    # Age < 45: 0; history, ECG, troponin default to 0. Benchmark: one risk factor -> 1 point.
    # Six 2008: history of atherosclerotic disease -> 2 risk-factor points.
    assert bench == 1
    assert pub == 2
    assert pub - bench == 1


@pytest.mark.deviation("heart-score", "tia-not-read")
def test_heart_tia_history_counts_as_atherosclerotic_disease_when_published():
    ents = {"age": [50, "years"], "Transient Ischemic Attacks History": True}
    bench, pub = both("heart-score", ents)
    # Age 45-64: 1 point. The benchmark never reads TIA -> 0 risk points; published CVA/TIA -> 2.
    assert bench == 1
    assert pub == 1 + 2


def test_heart_atherosclerosis_with_many_factors_same_both_ways():
    ents = {"age": [70, "years"], "atherosclerotic disease": True, "smoking": True, "obesity": True,
            "Suspicion History": "Highly suspicious"}
    bench, pub = both("heart-score", ents)
    assert bench == pub == 2 + 2 + 2  # history 2, age 2, >= 3 risk factors 2


# ----------------------------------------------------------------------------- worked values


def test_wells_pe_half_points_exact():
    ents = {"Heart Rate or Pulse": [101, "beats per minute"], "Surgery in the previous 4 weeks": True,
            "Immobilization for at least 3 days": True, "Hemoptysis": True}
    # HR > 100: 1.5; immobilisation/surgery once: 1.5; haemoptysis 1
    assert compute("wells-pe", ents, variant="benchmark").value == 4.0
    assert compute("wells-pe", {"Heart Rate or Pulse": [100, "beats per minute"]}, variant="benchmark").value == 0


def test_wells_dvt_alternative_diagnosis_negative():
    assert compute("wells-dvt", {"Alternative diagnosis to Deep Vein Thrombosis as likely or more likely": True},
                   variant="benchmark").value == -2
    both_reasons = {"Bedridden recently >3 days": True, "Major surgery within 12 weeks": True}
    assert compute("wells-dvt", both_reasons, variant="benchmark").value == 1


def test_rcri_creatinine_strictly_above_two():
    assert compute("revised-cardiac-risk-index", {"Pre-operative creatinine": [2.0, "mg/dL"]}, variant="benchmark").value == 0
    assert compute("revised-cardiac-risk-index", {"Pre-operative creatinine": [2.1, "mg/dL"]}, variant="benchmark").value == 1
    assert compute("revised-cardiac-risk-index", {}, variant="benchmark").value == 0


def test_has_bled_age_strictly_over_65_and_alcohol_threshold():
    base = {"Number of Alcoholic Drinks Per Week": 7}
    assert compute("has-bled", {**base, "age": [65, "years"]}, variant="benchmark").value == 0
    assert compute("has-bled", {**base, "age": [66, "years"]}, variant="benchmark").value == 1
    assert compute("has-bled", {"age": [40, "years"], "Number of Alcoholic Drinks Per Week": 8}, variant="benchmark").value == 1
    assert both("has-bled", {"age": [40, "years"], "Number of Alcoholic Drinks Per Week": 7.9}) == (0, 0)


def test_cha2ds2_vasc_stroke_group_counted_once():
    ents = {"sex": "Female", "age": [80, "years"], "Stroke": True, "Transient Ischemic Attacks History": True,
            "Thromboembolism history": True}
    assert compute("cha2ds2-vasc", ents, variant="benchmark").value == 2 + 1 + 2


def test_perc_thresholds():
    ents = {"age": [50, "years"], "Heart Rate or Pulse": [100, "beats per minute"], "O₂ saturation percentage": [94.9, "%"]}
    assert compute("perc-rule", ents, variant="benchmark").value == 3
    ents = {"age": [49, "years"], "Heart Rate or Pulse": [99, "beats per minute"], "O₂ saturation percentage": [95, "%"]}
    assert compute("perc-rule", ents, variant="benchmark").value == 0


# ----------------------------------------------------------------------------- (b) invariants

CHA_FLAGS = ["Congestive Heart Failure", "Hypertension history", "Stroke", "Transient Ischemic Attacks History",
             "Thromboembolism history", "Vascular disease history", "Diabetes history"]


@FAST
@given(flags(CHA_FLAGS), st.sampled_from(["Male", "Female"]), st.integers(18, 110), st.integers(0, 30))
def test_cha2ds2_vasc_range_and_age_monotone(fl, sex, age, older):
    a = compute("cha2ds2-vasc", {**fl, "sex": sex, "age": [age, "years"]}, variant="benchmark").value
    b = compute("cha2ds2-vasc", {**fl, "sex": sex, "age": [min(age + older, 130), "years"]}, variant="benchmark").value
    assert 0 <= a <= 9 and a <= b
    assert a == compute("cha2ds2-vasc", {**fl, "sex": sex, "age": [age, "years"]}, variant="published").value


WELLS_PE_FLAGS = ["Clinical signs and symptoms of Deep Vein Thrombosis", "Pulmonary Embolism is #1 diagnosis OR equally likely",
                  "Immobilization for at least 3 days", "Surgery in the previous 4 weeks",
                  "Previously Documented Pulmonary Embolism", "Previously documented Deep Vein Thrombosis",
                  "Hemoptysis", "Malignancy with treatment within 6 months or palliative"]


@FAST
@given(flags(WELLS_PE_FLAGS), st.floats(20, 250))
def test_wells_pe_range_half_steps(fl, hr):
    v = compute("wells-pe", {**fl, "Heart Rate or Pulse": [hr, "beats per minute"]}, variant="benchmark").value
    assert 0 <= v <= 12.5
    assert (2 * v) == int(2 * v)


WELLS_DVT_FLAGS = ["Active cancer", "Bedridden recently >3 days", "Major surgery within 12 weeks",
                   "Calf swelling >3 centimeters compared to the other leg", "Collateral (nonvaricose) superficial veins present",
                   "Entire Leg Swollen", "Localized tenderness along the deep venous system",
                   "Pitting edema, confined to symptomatic leg",
                   "Paralysis, paresis, or recent plaster immobilization of the lower extremity",
                   "Previously documented Deep Vein Thrombosis",
                   "Alternative diagnosis to Deep Vein Thrombosis as likely or more likely"]


@FAST
@given(flags(WELLS_DVT_FLAGS))
def test_wells_dvt_range(fl):
    v, p = both("wells-dvt", fl)
    assert -2 <= v <= 9 and v == p and isinstance(v, int)


@FAST
@given(st.floats(0.1, 1.9) | st.floats(2.1, 15))
def test_rcri_creatinine_units_equivalent(mg_dl):
    umol = mg_dl * 88.4  # 1 mg/dL = 10000 / 113.12 = 88.4 µmol/L
    a = compute("revised-cardiac-risk-index", {"Pre-operative creatinine": [mg_dl, "mg/dL"]}, variant="benchmark").value
    b = compute("revised-cardiac-risk-index", {"Pre-operative creatinine": [umol, "µmol/L"]}, variant="benchmark").value
    assert a == b == (1 if mg_dl > 2 else 0)


HEART_FLAGS = ["Hypertension history", "hypercholesterolemia", "Diabetes mellitus", "obesity", "smoking",
               "parent or sibling with Cardiovascular disease before age 65", "atherosclerotic disease",
               "Transient Ischemic Attacks History"]


@FAST
@given(flags(HEART_FLAGS), st.integers(18, 110),
       st.sampled_from(["Slightly suspicious", "Moderately suspicious", "Highly suspicious"]),
       st.sampled_from(["Normal", "Non-specific repolarization disturbance", "Significant ST deviation"]))
def test_heart_range_and_published_never_lower(fl, age, hist, ecg):
    ents = {**fl, "age": [age, "years"], "Suspicion History": hist, "Electrocardiogram Test": ecg}
    bench, pub = both("heart-score", ents)
    assert 0 <= bench <= 10 and 0 <= pub <= 10
    assert pub >= bench


HAS_BLED_FLAGS = ["Hypertension", "Liver disease criteria for the HAS-BLED rule", "Renal disease criteria for the HAS-BLED rule",
                  "Stroke", "Prior major bleeding or predisposition to bleeding", "Labile international normalized ratio",
                  "Medication usage predisposing to bleeding"]


@FAST
@given(flags(HAS_BLED_FLAGS), st.integers(18, 110), st.integers(0, 60))
def test_has_bled_range_and_variants_agree(fl, age, drinks):
    bench, pub = both("has-bled", {**fl, "age": [age, "years"], "Number of Alcoholic Drinks Per Week": drinks})
    assert 0 <= bench <= 9 and bench == pub


PERC_FLAGS = ["Hemoptysis", "Recent surgery or trauma", "Previously documented Deep Vein Thrombosis",
              "Previously Documented Pulmonary Embolism", "Unilateral Leg Swelling", "Hormone use"]


@FAST
@given(flags(PERC_FLAGS), st.integers(18, 100), st.floats(30, 200), st.floats(70, 100))
def test_perc_range_and_saturation_monotone(fl, age, hr, sat):
    ents = {**fl, "age": [age, "years"], "Heart Rate or Pulse": [hr, "beats per minute"]}
    low = compute("perc-rule", {**ents, "O₂ saturation percentage": [sat - 10 if sat >= 80 else sat, "%"]}, variant="benchmark").value
    high = compute("perc-rule", {**ents, "O₂ saturation percentage": [sat, "%"]}, variant="benchmark").value
    assert 0 <= high <= low <= 8


# ----------------------------------------------------------------------------- (c) bad input


def _raises(exc, slug, variable, ents, variant="benchmark"):
    return raises_calc_error(exc, slug, ents, variable, variant)


@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_bad_inputs(variant):
    _raises(MissingInput, "cha2ds2-vasc", "sex", {"age": [70, "years"]}, variant)
    _raises(UnknownInput, "cha2ds2-vasc", "Stroke history", {"sex": "Male", "age": [70, "years"], "Stroke history": True}, variant)
    _raises(BadValue, "cha2ds2-vasc", "sex", {"sex": "femme", "age": [70, "years"]}, variant)
    _raises(BadValue, "cha2ds2-vasc", "Stroke", {"sex": "Male", "age": [70, "years"], "Stroke": "si"}, variant)
    _raises(UnknownUnit, "cha2ds2-vasc", "age", {"sex": "Male", "age": [3, "mnth"]}, variant)
    _raises(UnknownUnit, "revised-cardiac-risk-index", "Pre-operative creatinine", {"Pre-operative creatinine": [1.2, "mg%"]}, variant)
    _raises(UnknownUnit, "revised-cardiac-risk-index", "Pre-operative creatinine", {"Pre-operative creatinine": [100, "nmol/L"]}, variant)
    _raises(OutOfRange, "revised-cardiac-risk-index", "Pre-operative creatinine", {"Pre-operative creatinine": [400, "mg/dL"]}, variant)
    _raises(UnknownUnit, "wells-pe", "Heart Rate or Pulse", {"Heart Rate or Pulse": [90, "bpm"]}, variant)
    _raises(OutOfRange, "wells-pe", "Heart Rate or Pulse", {"Heart Rate or Pulse": [1000, "beats per minute"]}, variant)
    _raises(BadValue, "wells-pe", "Heart Rate or Pulse", {"Heart Rate or Pulse": ["90", "beats per minute"]}, variant)
    _raises(MissingInput, "wells-pe", "Heart Rate or Pulse", {}, variant)
    _raises(BadValue, "heart-score", "Suspicion History", {"age": [50, "years"], "Suspicion History": "slightly suspect"}, variant)
    _raises(BadValue, "has-bled", "Number of Alcoholic Drinks Per Week",
            {"age": [50, "years"], "Number of Alcoholic Drinks Per Week": "8"}, variant)
    _raises(OutOfRange, "has-bled", "Number of Alcoholic Drinks Per Week",
            {"age": [50, "years"], "Number of Alcoholic Drinks Per Week": -1}, variant)
    _raises(UnknownUnit, "perc-rule", "O₂ saturation percentage",
            {"age": [50, "years"], "Heart Rate or Pulse": [80, "beats per minute"], "O₂ saturation percentage": [0.97, "fraction"]}, variant)  # noqa: E501
    _raises(OutOfRange, "perc-rule", "O₂ saturation percentage",
            {"age": [50, "years"], "Heart Rate or Pulse": [80, "beats per minute"], "O₂ saturation percentage": [197, "%"]}, variant)


# ----------------------------------------------------------------------------- (d) reference crashes (VOCAB §6)


@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_has_bled_without_drinks_is_a_clear_missing_input(variant):
    err = _raises(MissingInput, "has-bled", "Number of Alcoholic Drinks Per Week", {"age": [70, "years"], "Stroke": True}, variant)
    assert "required" in str(err)
