"""Glasgow Coma Scale and Child-Pugh: deviations, clinical invariants and bad input."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.library import BadValue, MissingInput, OutOfRange, UnknownInput, UnknownUnit, compute
from tests.solver.helpers import raises_calc_error

FAST = settings(max_examples=60, deadline=None)

EYE = ["eyes open spontaneously", "eye opening to verbal command", "eye opening to pain", "no eye opening"]
VERBAL = ["oriented", "confused", "inappropriate words", "incomprehensible sounds", "no verbal response"]
MOTOR = ["obeys commands", "localizes pain", "withdrawal from pain", "flexion to pain", "extension to pain", "no motor response"]

CP_BASE = {"international normalized ratio": 1.0, "Bilirubin": [1.0, "mg/dL"], "Albumin": [4.0, "g/dL"]}


def both(slug: str, ents: dict) -> tuple:
    return compute(slug, ents, variant="benchmark").value, compute(slug, ents, variant="published").value


def _raises(exc, slug, variable, ents, variant="benchmark"):
    return raises_calc_error(exc, slug, ents, variable, variant)


# ----------------------------------------------------------------------------- (a) deviations


@pytest.mark.deviation("glasgow-coma-scale", "verbal-not-testable-scored-4")
def test_gcs_verbal_not_testable():
    ents = {"Best eye response": "eyes open spontaneously", "Best verbal response": "not testable",
            "Best motor response": "obeys commands"}
    assert compute("glasgow-coma-scale", ents, variant="benchmark").value == 4 + 4 + 6  # NT verbal scored 4 by the benchmark
    # Teasdale: an untestable component is reported as NT and no sum is formed.
    err = _raises(BadValue, "glasgow-coma-scale", "Best verbal response", ents, "published")
    assert "NT" in str(err)


@pytest.mark.deviation("glasgow-coma-scale", "eye-not-testable-scored-4")
def test_gcs_eye_not_testable():
    ents = {"Best eye response": "not testable", "Best verbal response": "confused", "Best motor response": "localizes pain"}
    assert compute("glasgow-coma-scale", ents, variant="benchmark").value == 4 + 4 + 5
    _raises(BadValue, "glasgow-coma-scale", "Best eye response", ents, "published")


@pytest.mark.deviation("child-pugh", "bilirubin-molar-mass")
def test_child_pugh_bilirubin_molar_mass():
    ents = {**CP_BASE, "Bilirubin": [35, "µmol/L"]}
    bench, pub = both("child-pugh", ents)
    # 35 µmol/L x 548.66 g/mol = 1.92 mg/dL (< 2: 1 point); x 584.66 g/mol = 2.05 mg/dL (2-3: 2 points).
    assert 35 * 548.66 / 10000 < 2 <= 35 * 584.66 / 10000
    assert bench == 5
    assert pub == bench + 1
    # Published cut-off 2 mg/dL = 34.2 µmol/L: 34 µmol/L stays at 1 point both ways.
    assert both("child-pugh", {**CP_BASE, "Bilirubin": [34, "µmol/L"]}) == (5, 5)


def test_child_pugh_si_cut_offs_sit_at_17_1_times_the_mg_dl_ones():
    """The edge that was wrong: 34.2 µmol/L is 2.0 mg/dL with the SI criteria's 17.1 (584.66 g/mol gave 1.9995)."""
    pub = lambda b: compute("child-pugh", {**CP_BASE, "Bilirubin": [b, "µmol/L"]}, variant="published").value  # noqa: E731
    assert (pub(34.19), pub(34.2), pub(51.3), pub(51.31)) == (5, 6, 6, 7)  # 2.0 and 3.0 mg/dL are in the 2-point band


@pytest.mark.parametrize("variant", ["benchmark", "published"])
@pytest.mark.parametrize("key,value", [("Ascites", "Absnt"), ("Ascites", "severe"), ("Encephalopathy", "none"),
                                       ("Encephalopathy", "grade 12")])
@pytest.mark.deviation("child-pugh", "unknown-option-scores-zero")
def test_child_pugh_unknown_option_refused(variant, key, value):
    # The reference scores 0 for these; every published item is 1-3, so we refuse.
    _raises(BadValue, "child-pugh", key, {**CP_BASE, key: value}, variant)


def test_child_pugh_missing_items_are_absent():
    assert both("child-pugh", CP_BASE) == (5, 5)
    assert both("child-pugh", {**CP_BASE, "Ascites": "moderate", "Encephalopathy": "Grade 3-4"}) == (9, 9)


# ----------------------------------------------------------------------------- (b) invariants


@FAST
@given(st.sampled_from(EYE), st.sampled_from(VERBAL), st.sampled_from(MOTOR))
def test_gcs_range_and_components(eye, verbal, motor):
    ents = {"Best eye response": eye, "Best verbal response": verbal, "Best motor response": motor}
    bench, pub = both("glasgow-coma-scale", ents)
    assert bench == pub == (4 - EYE.index(eye)) + (5 - VERBAL.index(verbal)) + (6 - MOTOR.index(motor))
    assert 3 <= bench <= 15


@FAST
@given(st.floats(0.8, 6), st.floats(0.1, 30), st.floats(1.0, 6.0), st.floats(0, 5),
       st.sampled_from(["absent", "slight", "moderate"]), st.sampled_from(["No Encephalopathy", "Grade 1-2", "Grade 3-4"]))
def test_child_pugh_range_and_bilirubin_monotone(inr, bili, alb, more, asc, enc):
    ents = {"international normalized ratio": inr, "Albumin": [alb, "g/dL"], "Ascites": asc, "Encephalopathy": enc}
    for variant in ("benchmark", "published"):
        lo = compute("child-pugh", {**ents, "Bilirubin": [bili, "mg/dL"]}, variant=variant).value
        hi = compute("child-pugh", {**ents, "Bilirubin": [bili + more, "mg/dL"]}, variant=variant).value
        assert 5 <= lo <= hi <= 15


@FAST
@given(st.floats(1.0, 6.0))
def test_child_pugh_albumin_units_equivalent(alb):
    if min(abs(alb - 2.8), abs(alb - 3.5)) < 0.01:
        return
    a = compute("child-pugh", {**CP_BASE, "Albumin": [alb, "g/dL"]}, variant="benchmark").value
    b = compute("child-pugh", {**CP_BASE, "Albumin": [alb * 10, "g/L"]}, variant="benchmark").value
    c = compute("child-pugh", {**CP_BASE, "Albumin": [alb * 10000 / 66500 * 1000, "µmol/L"]}, variant="published").value
    assert a == b == c


# ----------------------------------------------------------------------------- (c) bad input


@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_bad_inputs(variant):
    gcs = {"Best eye response": "no eye opening", "Best verbal response": "oriented", "Best motor response": "obeys commands"}
    _raises(MissingInput, "glasgow-coma-scale", "Best motor response",
            {k: v for k, v in gcs.items() if k != "Best motor response"}, variant)
    _raises(UnknownInput, "glasgow-coma-scale", "GCS", {**gcs, "GCS": 15}, variant)
    _raises(BadValue, "glasgow-coma-scale", "Best verbal response", {**gcs, "Best verbal response": "Orientated"}, variant)
    _raises(BadValue, "glasgow-coma-scale", "Best eye response", {**gcs, "Best eye response": 4}, variant)
    _raises(MissingInput, "child-pugh", "international normalized ratio",
            {k: v for k, v in CP_BASE.items() if k != "international normalized ratio"}, variant)
    _raises(UnknownInput, "child-pugh", "Prothrombin time", {**CP_BASE, "Prothrombin time": [14, "s"]}, variant)
    _raises(UnknownUnit, "child-pugh", "Bilirubin", {**CP_BASE, "Bilirubin": [1.0, "mg%"]}, variant)
    _raises(UnknownUnit, "child-pugh", "Bilirubin", {**CP_BASE, "Bilirubin": [20, "nmol/L"]}, variant)
    _raises(UnknownUnit, "child-pugh", "Bilirubin", {**CP_BASE, "Bilirubin": [20, "\u043cmol/L"]}, variant)  # Cyrillic em
    _raises(UnknownUnit, "child-pugh", "Albumin", {**CP_BASE, "Albumin": [40, "g/m"]}, variant)
    _raises(BadValue, "child-pugh", "international normalized ratio", {**CP_BASE, "international normalized ratio": "1.2"}, variant)
    _raises(BadValue, "child-pugh", "Bilirubin", {**CP_BASE, "Bilirubin": 1.0}, variant)
    _raises(OutOfRange, "child-pugh", "international normalized ratio", {**CP_BASE, "international normalized ratio": 50}, variant)
    _raises(OutOfRange, "child-pugh", "Albumin", {**CP_BASE, "Albumin": [40, "g/dL"]}, variant)


# ----------------------------------------------------------------------------- (d) reference crashes (VOCAB §6)


@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_gcs_motor_not_testable_is_a_clear_error(variant):
    ents = {"Best eye response": "no eye opening", "Best verbal response": "no verbal response",
            "Best motor response": "not testable"}
    err = _raises(BadValue, "glasgow-coma-scale", "Best motor response", ents, variant)
    assert "obeys commands" in str(err)  # the message lists the accepted options
