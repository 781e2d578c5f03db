"""PSI, Glasgow-Blatchford and Framingham hard CHD: deviations, invariants, bad input."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.library import BadValue, MissingInput, OutOfRange, UnknownInput, UnknownUnit, compute
from tests.solver.helpers import raises_calc_error as _raises

# ---------------------------------------------------------------------------------------- PSI

PSI_BASE = {
    "age": [50, "years"],
    "sex": "Male",
    "Heart Rate or Pulse": [80, "beats per minute"],
    "Temperature": [37.0, "degrees celsius"],
    "pH": 7.4,
    "respiratory rate": [16, "breaths per minute"],
    "Systolic Blood Pressure": [120, "mm Hg"],
    "Blood Urea Nitrogen (BUN)": [15, "mg/dL"],
    "Sodium": [140, "mmol/L"],
    "Glucose": [100, "mg/dL"],
    "Hematocrit": [40, "%"],
    "Partial pressure of oxygen": [90, "mm Hg"],
}


def psi(variant="benchmark", **changes):
    return compute("pneumonia-severity-index", {**PSI_BASE, **changes}, variant=variant).value


def test_psi_base_is_age():
    assert psi() == 50 == psi("published")
    assert psi(sex="Female") == 40


@pytest.mark.deviation("pneumonia-severity-index", "temperature-upper-cutoff")
def test_psi_temperature_upper_cutoff():
    t = {"Temperature": [39.95, "degrees celsius"]}
    assert psi(**t) == 50 + 15  # benchmark: > 39.9 scores
    assert psi("published", **t) == 50  # Fine 1997: >= 40 scores
    assert psi("published", Temperature=[40.0, "degrees celsius"]) == 65


@pytest.mark.deviation("pneumonia-severity-index", "missing-pao2")
def test_psi_missing_pao2():
    ents = {k: v for k, v in PSI_BASE.items() if k != "Partial pressure of oxygen"}
    _raises(MissingInput, "pneumonia-severity-index", ents, "Partial pressure of oxygen")
    assert compute("pneumonia-severity-index", ents, variant="published").value == 50  # missing = normal


def test_psi_pao2_units():
    assert psi(**{"Partial pressure of oxygen": [7.9, "kPa"]}) == 60
    assert psi(**{"Partial pressure of oxygen": [59, "mm Hg"]}) == 60
    assert psi(**{"Partial pressure of oxygen": [8.1, "kPa"]}) == 50


def test_psi_all_items():
    flags = ["Nursing home resident", "Neoplastic disease", "Liver disease history", "Congestive Heart Failure",
             "Cerebrovascular disease history", "Renal disease history", "Altered mental status",
             "Pleural effusion on x-ray"]
    worst = {**{f: True for f in flags}, "respiratory rate": [35, "breaths per minute"],
             "Systolic Blood Pressure": [80, "mm Hg"], "Temperature": [34, "degrees celsius"],
             "Heart Rate or Pulse": [130, "beats per minute"], "pH": 7.2, "Blood Urea Nitrogen (BUN)": [40, "mg/dL"],
             "Sodium": [125, "mmol/L"], "Glucose": [300, "mg/dL"], "Hematocrit": [25, "%"],
             "Partial pressure of oxygen": [50, "mm Hg"]}
    assert psi(**worst) == 50 + 285


@settings(max_examples=60, deadline=None)
@given(age=st.integers(18, 105), female=st.booleans(), hr=st.integers(30, 200), t=st.floats(30, 42),
       ph=st.floats(6.9, 7.7), rr=st.integers(5, 60), sbp=st.integers(50, 220), bun=st.floats(2, 150),
       na=st.floats(110, 170), glu=st.floats(40, 800), hct=st.floats(15, 60), pao2=st.floats(30, 200),
       variant=st.sampled_from(["benchmark", "published"]))
def test_psi_range(age, female, hr, t, ph, rr, sbp, bun, na, glu, hct, pao2, variant):
    ents = {**PSI_BASE, "age": [age, "years"], "sex": "Female" if female else "Male",
            "Heart Rate or Pulse": [hr, "beats per minute"], "Temperature": [t, "degrees celsius"], "pH": ph,
            "respiratory rate": [rr, "breaths per minute"], "Systolic Blood Pressure": [sbp, "mm Hg"],
            "Blood Urea Nitrogen (BUN)": [bun, "mg/dL"], "Sodium": [na, "mmol/L"], "Glucose": [glu, "mg/dL"],
            "Hematocrit": [hct, "%"], "Partial pressure of oxygen": [pao2, "mm Hg"]}
    base = age - (10 if female else 0)
    assert base <= compute("pneumonia-severity-index", ents, variant=variant).value <= base + 285


def test_psi_unit_equivalents():
    assert psi(Glucose=[15.0, "mmol/L"]) == psi(Glucose=[270, "mg/dL"]) == 60
    assert psi(**{"Blood Urea Nitrogen (BUN)": [12, "mmol/L"]}) == psi(**{"Blood Urea Nitrogen (BUN)": [33.6, "mg/dL"]})


def test_psi_bad_inputs():
    slug = "pneumonia-severity-index"
    ents = {k: v for k, v in PSI_BASE.items() if k != "pH"}
    _raises(MissingInput, slug, ents, "pH")
    _raises(UnknownInput, slug, {**PSI_BASE, "O2 saturation": [88, "%"]}, "O2 saturation")
    _raises(UnknownUnit, slug, {**PSI_BASE, "Partial pressure of oxygen": [55, "mmH2O"]}, "Partial pressure of oxygen")
    _raises(UnknownUnit, slug, {**PSI_BASE, "Glucose": [100, "mg%"]}, "Glucose")
    _raises(BadValue, slug, {**PSI_BASE, "sex": "mle"}, "sex")
    _raises(BadValue, slug, {**PSI_BASE, "Neoplastic disease": 2}, "Neoplastic disease")
    _raises(OutOfRange, slug, {**PSI_BASE, "Hematocrit": [400, "%"]}, "Hematocrit")
    _raises(UnknownUnit, slug, {**PSI_BASE, "age": [1, "mnth"]}, "age")


# ---------------------------------------------------------------------------------------- Glasgow-Blatchford

GBS_BASE = {
    "sex": "Male",
    "Heart Rate or Pulse": [80, "beats per minute"],
    "Blood Urea Nitrogen (BUN)": [10, "mg/dL"],
    "Hemoglobin": [14, "g/dL"],
    "Systolic Blood Pressure": [120, "mm Hg"],
}


def gbs(variant="benchmark", **changes):
    return compute("glasgow-blatchford", {**GBS_BASE, **changes}, variant=variant).value


def test_gbs_base_zero():
    assert gbs() == 0 == gbs("published")


@pytest.mark.deviation("glasgow-blatchford", "bun-molar-mass")
def test_gbs_bun_molar_mass():
    # 6.49 mmol/L x 28.08 / 10 = 18.22 mg/dL >= 18.2: 2 points in the benchmark; the paper's cut-off is 6.5 mmol/L
    b = {"Blood Urea Nitrogen (BUN)": [6.49, "mmol/L"]}
    assert gbs(**b) == 2
    assert gbs("published", **b) == 0


@pytest.mark.deviation("glasgow-blatchford", "bun-molar-mass")
def test_gbs_bun_mg_dl_published_uses_28_02():
    # 18.2 mg/dL / 2.802 = 6.495 mmol/L < 6.5: 0 published; the benchmark's 18.2 mg/dL cut-off gives 2
    b = {"Blood Urea Nitrogen (BUN)": [18.2, "mg/dL"]}
    assert gbs(**b) == 2
    assert gbs("published", **b) == 0


def test_gbs_hemoglobin_by_sex_and_units():
    assert gbs(Hemoglobin=[12.5, "g/dL"]) == 1
    assert gbs(Hemoglobin=[125, "g/L"]) == 1
    assert gbs(sex="Female", Hemoglobin=[12.5, "g/dL"]) == 0
    assert gbs(sex="Female", Hemoglobin=[11, "g/dL"]) == 1
    assert gbs(Hemoglobin=[11, "g/dL"]) == 3


def test_gbs_maximum():
    worst = {"Blood Urea Nitrogen (BUN)": [90, "mg/dL"], "Hemoglobin": [8, "g/dL"],
             "Systolic Blood Pressure": [80, "mm Hg"], "Heart Rate or Pulse": [120, "beats per minute"],
             "Melena Present": True, "Recent Syncope": True, "Hepatic disease history": True,
             "Cardiac Failure Present": True}
    assert gbs(**worst) == 23 == gbs("published", **worst)


@settings(max_examples=60, deadline=None)
@given(a=st.floats(1, 200), b=st.floats(1, 200), variant=st.sampled_from(["benchmark", "published"]))
def test_gbs_monotone_in_bun(a, b, variant):
    lo, hi = sorted((a, b))
    assert gbs(variant, **{"Blood Urea Nitrogen (BUN)": [lo, "mg/dL"]}) <= gbs(
        variant, **{"Blood Urea Nitrogen (BUN)": [hi, "mg/dL"]})


def test_gbs_bad_inputs():
    slug = "glasgow-blatchford"
    _raises(MissingInput, slug, {k: v for k, v in GBS_BASE.items() if k != "Hemoglobin"}, "Hemoglobin")
    _raises(UnknownInput, slug, {**GBS_BASE, "Melaena": True}, "Melaena")
    _raises(UnknownUnit, slug, {**GBS_BASE, "Hemoglobin": [14, "g%"]}, "Hemoglobin")
    _raises(BadValue, slug, {**GBS_BASE, "sex": "X"}, "sex")
    _raises(BadValue, slug, {**GBS_BASE, "Heart Rate or Pulse": 80}, "Heart Rate or Pulse")
    _raises(OutOfRange, slug, {**GBS_BASE, "Hemoglobin": [140, "g/dL"]}, "Hemoglobin")


# ---------------------------------------------------------------------------------------- Framingham

FRAM_BASE = {
    "sex": "Male",
    "age": [55, "years"],
    "Systolic Blood Pressure": [130, "mm Hg"],
    "Total cholesterol": [200, "mg/dL"],
    "high-density lipoprotein cholesterol": [45, "mg/dL"],
    "Smoker": True,
}


def fram(variant="benchmark", **changes):
    return compute("framingham-hard-chd", {**FRAM_BASE, **changes}, variant=variant).value


def _by_hand_male(age, tc, hdl, sbp, treated, smoker):
    la, lt = math.log(age), math.log(tc)
    s = (52.00961 * la + 20.014077 * lt - 0.905964 * math.log(hdl) + 1.305784 * math.log(sbp)
         + 0.241549 * treated + 12.096316 * smoker - 4.605038 * la * lt - 2.84367 * math.log(min(age, 70)) * smoker
         - 2.93323 * la * la - 172.300168)
    return round(100 * (1 - 0.9402 ** math.exp(s)), 3)


def test_framingham_matches_hand_arithmetic():
    assert fram() == _by_hand_male(55, 200, 45, 130, 0, 1)
    assert fram("published") == _by_hand_male(55, 200, 45, 130, 0, 1)


@pytest.mark.deviation("framingham-hard-chd", "molar-total-cholesterol")
def test_framingham_molar_total_cholesterol_converts():
    # VOCAB §6: the reference crashes on mmol/L total cholesterol; 5.2 mmol/L x 386.654 / 10 = 201.06 mg/dL
    expected = _by_hand_male(55, 5.2 * 386.654 / 10, 45, 130, 0, 1)
    assert fram("published", **{"Total cholesterol": [5.2, "mmol/L"]}) == pytest.approx(expected, abs=0.002)
    assert fram(**{"Total cholesterol": [5.2, "mmol/L"]}) == pytest.approx(expected, abs=0.01)


@pytest.mark.deviation("framingham-hard-chd", "age-outside-model-range")
def test_framingham_published_refuses_ages_outside_20_79():
    assert fram(age=[85, "years"]) == _by_hand_male(85, 200, 45, 130, 0, 1)
    _raises(OutOfRange, "framingham-hard-chd", {**FRAM_BASE, "age": [85, "years"]}, "age", "published")


def test_framingham_infant_age_is_a_clear_error():
    # VOCAB §6: [6, 'months'] is log(0) in the reference
    _raises(OutOfRange, "framingham-hard-chd", {**FRAM_BASE, "age": [6, "months"]}, "age")


@settings(max_examples=60, deadline=None)
@given(male=st.booleans(), age=st.integers(20, 79), tc=st.floats(100, 400), hdl=st.floats(20, 100),
       sbp=st.integers(90, 200), smoker=st.booleans(), treated=st.booleans(),
       variant=st.sampled_from(["benchmark", "published"]))
def test_framingham_risk_is_a_percentage_and_falls_with_hdl(male, age, tc, hdl, sbp, smoker, treated, variant):
    ents = {"sex": "Male" if male else "Female", "age": [age, "years"], "Systolic Blood Pressure": [sbp, "mm Hg"],
            "Total cholesterol": [tc, "mg/dL"], "high-density lipoprotein cholesterol": [hdl, "mg/dL"],
            "Smoker": smoker, "Blood pressure being treated with medicines": treated}
    r = compute("framingham-hard-chd", ents, variant=variant).value
    assert 0 <= r <= 100
    ents["high-density lipoprotein cholesterol"] = [hdl * 1.5, "mg/dL"]
    assert compute("framingham-hard-chd", ents, variant=variant).value <= r


def test_framingham_bad_inputs():
    slug = "framingham-hard-chd"
    _raises(MissingInput, slug, {k: v for k, v in FRAM_BASE.items() if k != "sex"}, "sex")
    _raises(UnknownInput, slug, {**FRAM_BASE, "LDL": [100, "mg/dL"]}, "LDL")
    _raises(UnknownUnit, slug, {**FRAM_BASE, "Total cholesterol": [200, "mg%"]}, "Total cholesterol")
    _raises(BadValue, slug, {**FRAM_BASE, "sex": "Other"}, "sex")
    _raises(BadValue, slug, {**FRAM_BASE, "Smoker": "si"}, "Smoker")
    _raises(OutOfRange, slug, {**FRAM_BASE, "high-density lipoprotein cholesterol": [0, "mg/dL"]},
            "high-density lipoprotein cholesterol")
