"""APACHE II and SOFA: deviations from the publications, invariants, and bad input."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.library import BadValue, MissingInput, OutOfRange, UnknownInput, UnknownUnit, compute
from tests.solver.helpers import raises_calc_error as _raises

# A patient whose APACHE II physiology scores 0 everywhere except as varied in each test.
APACHE_BASE = {
    "age": [30, "years"],
    "Temperature": [37.0, "degrees celsius"],
    "Systolic Blood Pressure": [120, "mm Hg"],
    "Diastolic Blood Pressure": [80, "mm Hg"],
    "pH": 7.4,
    "Heart Rate or Pulse": [80, "beats per minute"],
    "respiratory rate": [16, "breaths per minute"],
    "Sodium": [140, "mmol/L"],
    "Potassium": [4.0, "mmol/L"],
    "creatinine": [1.0, "mg/dL"],
    "Hematocrit": [40, "%"],
    "White blood cell count": [8000, "µL"],
    "Glasgow Coma Score": 15,
    "FiO2": [21, "%"],
    "PaO2": [90, "mm Hg"],
}


def apache(variant: str = "benchmark", **changes):
    return compute("apache-ii", {**APACHE_BASE, **changes}, variant=variant).value


def test_apache_base_patient_scores_zero():
    assert apache() == 0
    assert apache("published") == 0


# ------------------------------------------------------------------ APACHE II deviations


@pytest.mark.deviation("apache-ii", "chronic-health-points-never-scored")
@pytest.mark.parametrize("surgery, points", [("Nonoperative", 5), ("Emergency", 5), ("Elective", 2)])
def test_apache_chronic_health_points_only_in_published(surgery, points):
    ents = {"History of severe organ failure or immunocompromise": True, "Surgery Type": surgery}
    assert apache(**ents) == 0  # the benchmark never reads these keys
    assert apache("published", **ents) == points  # Knaus 1985: +5 nonoperative/emergency, +2 elective


def test_apache_chronic_health_needs_surgery_type_in_published():
    with pytest.raises(MissingInput) as e:
        apache("published", **{"History of severe organ failure or immunocompromise": True})
    assert e.value.variable == "Surgery Type"


@pytest.mark.deviation("apache-ii", "renal-failure-low-creatinine")
def test_apache_low_creatinine_with_acute_renal_failure():
    # Cr 0.5 mg/dL scores 2; acute renal failure doubles it to 4 in the publication; the benchmark gives 0.
    ents = {"creatinine": [0.5, "mg/dL"], "Acute renal failure": True}
    assert apache(**ents) == 0
    assert apache("published", **ents) == 2 * 2


@pytest.mark.deviation("apache-ii", "renal-failure-low-creatinine")
def test_apache_low_creatinine_with_chronic_renal_failure():
    ents = {"creatinine": [0.5, "mg/dL"], "Chronic renal failure": True}
    assert apache(**ents) == 0
    assert apache("published", **ents) == 2


def test_apache_acute_renal_failure_doubles_in_both_variants_above_1_5():
    ents = {"creatinine": [2.5, "mg/dL"], "Acute renal failure": True}
    assert apache(**ents) == 6 == apache("published", **ents)


@pytest.mark.deviation("apache-ii", "non-integer-band-gaps")
def test_apache_age_gap():
    assert apache(age=[54.5, "years"]) == 0
    assert apache("published", age=[54.5, "years"]) == 2


@pytest.mark.deviation("apache-ii", "non-integer-band-gaps")
def test_apache_aa_gradient_gap():
    ents = {"FiO2": [60, "%"], "A-a gradient": 349.5}
    assert apache(**ents) == 0
    assert apache("published", **ents) == 2


@pytest.mark.deviation("apache-ii", "non-integer-band-gaps")
def test_apache_pao2_gap():
    assert apache(PaO2=[60.5, "mm Hg"]) == 4
    assert apache("published", PaO2=[60.5, "mm Hg"]) == 3


# ------------------------------------------------------------------ APACHE II invariants


@settings(max_examples=60, deadline=None)
@given(
    age=st.integers(0, 110),
    temp=st.floats(25, 43),
    sbp=st.integers(50, 250),
    dbp=st.integers(20, 140),
    ph=st.floats(6.8, 7.9),
    hr=st.integers(20, 220),
    rr=st.integers(2, 70),
    na=st.floats(100, 190),
    k=st.floats(1.5, 9),
    cr=st.floats(0.2, 12),
    arf=st.booleans(),
    hct=st.floats(10, 70),
    wbc=st.integers(300, 80000),
    gcs=st.integers(3, 15),
    fio2=st.integers(21, 100),
    oxy=st.floats(30, 600),
    variant=st.sampled_from(["benchmark", "published"]),
)
def test_apache_within_published_range(age, temp, sbp, dbp, ph, hr, rr, na, k, cr, arf, hct, wbc, gcs, fio2, oxy,
                                       variant):
    ents = {**APACHE_BASE, "age": [age, "years"], "Temperature": [temp, "degrees celsius"],
            "Systolic Blood Pressure": [sbp, "mm Hg"], "Diastolic Blood Pressure": [dbp, "mm Hg"], "pH": ph,
            "Heart Rate or Pulse": [hr, "beats per minute"], "respiratory rate": [rr, "breaths per minute"],
            "Sodium": [na, "mmol/L"], "Potassium": [k, "mmol/L"], "creatinine": [cr, "mg/dL"],
            "Acute renal failure": arf, "Hematocrit": [hct, "%"], "White blood cell count": [wbc, "µL"],
            "Glasgow Coma Score": gcs, "FiO2": [fio2, "%"], "PaO2": [min(oxy, 700), "mm Hg"], "A-a gradient": oxy}
    score = compute("apache-ii", ents, variant=variant).value
    assert 0 <= score <= 71


@settings(max_examples=30, deadline=None)
@given(gcs=st.integers(3, 14))
def test_apache_each_gcs_point_lost_adds_one(gcs):
    assert apache(**{"Glasgow Coma Score": gcs}) - apache(**{"Glasgow Coma Score": gcs + 1}) == 1


def test_apache_creatinine_units_agree():
    # 3.0 mg/dL = 265.2 µmol/L; both score 3
    assert apache(creatinine=[265.2, "µmol/L"]) == apache(creatinine=[3.0, "mg/dL"]) == 3


# ------------------------------------------------------------------ APACHE II bad input



def test_apache_bad_inputs():
    slug = "apache-ii"
    ents = dict(APACHE_BASE)
    del ents["pH"]
    _raises(MissingInput, slug, ents, "pH")
    _raises(UnknownInput, slug, {**APACHE_BASE, "Lactate": [2, "mmol/L"]}, "Lactate")
    _raises(UnknownUnit, slug, {**APACHE_BASE, "creatinine": [1.0, "mg%"]}, "creatinine")
    _raises(UnknownUnit, slug, {**APACHE_BASE, "Temperature": [37, "celsius"]}, "Temperature")
    _raises(BadValue, slug, {**APACHE_BASE, "pH": "7.4"}, "pH")
    _raises(BadValue, slug, {**APACHE_BASE, "Surgery Type": "Urgent"}, "Surgery Type", "published")
    _raises(OutOfRange, slug, {**APACHE_BASE, "pH": 9.4}, "pH")
    _raises(UnknownUnit, slug, {**APACHE_BASE, "White blood cell count": [12, "10^9/L"]}, "White blood cell count")


def test_apache_aa_gradient_list_form_is_a_clear_error():
    # VOCAB §6: [300, 'mm Hg'] crashes the reference; the library names the variable
    _raises(BadValue, "apache-ii", {**APACHE_BASE, "FiO2": [60, "%"], "A-a gradient": [300, "mm Hg"]}, "A-a gradient")


def test_apache_oxygenation_input_required_by_fio2():
    ents = {k: v for k, v in APACHE_BASE.items() if k != "PaO2"}
    _raises(MissingInput, "apache-ii", ents, "PaO2")
    _raises(MissingInput, "apache-ii", {**APACHE_BASE, "FiO2": [60, "%"]}, "A-a gradient")


# ------------------------------------------------------------------ SOFA

SOFA_BASE = {
    "FiO2": [21, "%"],
    "PaO2": [95, "mm Hg"],  # P/F 452: 0
    "Platelet count": [250000, "µL"],
    "Glasgow Coma Score": 15,
    "Bilirubin": [0.8, "mg/dL"],
    "creatinine": [0.9, "mg/dL"],
}


def sofa(variant: str = "benchmark", **changes):
    return compute("sofa", {**SOFA_BASE, **changes}, variant=variant).value


def test_sofa_base_scores_zero():
    assert sofa() == 0 == sofa("published")


@pytest.mark.deviation("sofa", "dobutamine-ignored")
def test_sofa_dobutamine_only_in_published():
    ents = {"DOBUTamine": [5, "µg/kg/min"]}
    assert sofa(**ents) == 0
    assert sofa("published", **ents) == 2  # Vincent 1996: dobutamine any dose = 2


@pytest.mark.deviation("sofa", "hypotension-flag-ignored")
def test_sofa_hypotension_flag_only_in_published():
    assert sofa(Hypotension=True) == 0
    assert sofa("published", Hypotension=True) == 1


def test_sofa_map_scores_in_both():
    ents = {"Systolic Blood Pressure": [80, "mm Hg"], "Diastolic Blood Pressure": [60, "mm Hg"]}  # MAP 66.7
    assert sofa(**ents) == 1 == sofa("published", **ents)


@pytest.mark.deviation("sofa", "pf-ratio-gaps")
def test_sofa_pf_ratio_gap_without_support():
    ents = {"FiO2": [100, "%"], "PaO2": [199.5, "mm Hg"]}  # P/F 199.5
    assert sofa(**ents) == 0
    assert sofa("published", **ents) == 2


@pytest.mark.deviation("sofa", "pf-ratio-gaps")
def test_sofa_pf_ratio_199_with_ventilation():
    ents = {"FiO2": [100, "%"], "PaO2": [199, "mm Hg"], "On mechanical ventilation": True}
    assert sofa(**ents) == 0
    assert sofa("published", **ents) == 3


@pytest.mark.deviation("sofa", "creatinine-5-boundary")
def test_sofa_creatinine_5_boundary():
    assert sofa(creatinine=[5.0, "mg/dL"]) == 3
    assert sofa("published", creatinine=[5.0, "mg/dL"]) == 4


def test_sofa_missing_gcs_counts_as_15():
    ents = {k: v for k, v in SOFA_BASE.items() if k != "Glasgow Coma Score"}
    assert compute("sofa", ents, variant="benchmark").value == 0


@settings(max_examples=60, deadline=None)
@given(
    fio2=st.integers(21, 100), pao2=st.floats(30, 600), mv=st.booleans(), plt=st.integers(1000, 900000),
    gcs=st.integers(3, 15), bili=st.floats(0.1, 40), cr=st.floats(0.2, 15), uo=st.integers(0, 4000),
    dop=st.floats(0, 30), ne=st.floats(0, 1), variant=st.sampled_from(["benchmark", "published"]),
)
def test_sofa_within_range(fio2, pao2, mv, plt, gcs, bili, cr, uo, dop, ne, variant):
    ents = {"FiO2": [fio2, "%"], "PaO2": [pao2, "mm Hg"], "On mechanical ventilation": mv,
            "Platelet count": [plt, "µL"], "Glasgow Coma Score": gcs, "Bilirubin": [bili, "mg/dL"],
            "creatinine": [cr, "mg/dL"], "Urine Output": [uo, "mL/day"], "DOPamine": [dop, "µg/kg/min"],
            "norEPINEPHrine": [ne, "µg/kg/min"]}
    assert 0 <= compute("sofa", ents, variant=variant).value <= 24


@settings(max_examples=40, deadline=None)
@given(a=st.floats(0.1, 40), b=st.floats(0.1, 40))
def test_sofa_monotone_in_bilirubin(a, b):
    lo, hi = sorted((a, b))
    assert sofa(Bilirubin=[lo, "mg/dL"]) <= sofa(Bilirubin=[hi, "mg/dL"])


def test_sofa_platelet_units_agree():
    assert sofa(**{"Platelet count": [90000, "mm^3"]}) == sofa(**{"Platelet count": [9.0e10, "L"]}) == 2


def test_sofa_bad_inputs():
    ents = dict(SOFA_BASE)
    del ents["PaO2"]
    _raises(MissingInput, "sofa", ents, "PaO2")
    _raises(UnknownInput, "sofa", {**SOFA_BASE, "Dobutamine": [5, "µg/kg/min"]}, "Dobutamine")
    _raises(UnknownUnit, "sofa", {**SOFA_BASE, "Bilirubin": [20, "nmol/L"]}, "Bilirubin")
    _raises(UnknownUnit, "sofa", {**SOFA_BASE, "DOPamine": [5, "mg/kg/min"]}, "DOPamine")
    _raises(BadValue, "sofa", {**SOFA_BASE, "On mechanical ventilation": "si"}, "On mechanical ventilation")
    _raises(OutOfRange, "sofa", {**SOFA_BASE, "FiO2": [0.5, "%"]}, "FiO2")
