"""Mean arterial pressure, body surface area (Mosteller) and target weight: invariants and bad input.

None of the three has a deviation from its publication; the all-calculators reference test lives elsewhere.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from solver.library import BadValue, CalculatorError, MissingInput, OutOfRange, UnknownInput, UnknownUnit, compute

FAST = settings(max_examples=60, deadline=None)
MAP, BSA, TW = "mean-arterial-pressure", "body-surface-area", "target-weight"


def both(slug: str, ents: dict) -> tuple:
    return compute(slug, ents, variant="benchmark").value, compute(slug, ents, variant="published").value


# ----------------------------------------------------------------------------- hand-computed values


def test_map_one_third_rule():
    ents = {"Systolic Blood Pressure": [120, "mm Hg"], "Diastolic Blood Pressure": [80, "mm Hg"]}
    bench, pub = both(MAP, ents)
    assert bench == pytest.approx(80 + (120 - 80) / 3, abs=1e-5)  # DBP + pulse pressure / 3
    assert pub == pytest.approx(93.333333, abs=1e-5)


def test_bsa_mosteller_by_hand():
    bench, pub = both(BSA, {"weight": [85.0, "kg"], "height": [180.0, "cm"]})
    assert pub == pytest.approx(math.sqrt(85 * 180 / 3600), abs=1e-5)  # 2.0616
    assert bench == pytest.approx(2.06155, abs=1e-5)


def test_target_weight_by_hand():
    bench, pub = both(TW, {"Body Mass Index (BMI)": [23.2, "kg/m^2"], "height": [72, "in"]})
    assert pub == pytest.approx(23.2 * (72 * 0.0254) ** 2, abs=1e-5)  # 77.59 kg
    assert bench == pytest.approx(77.59262, abs=1e-5)


# ----------------------------------------------------------------------------- (b) invariants

bp = st.floats(min_value=30, max_value=250, allow_nan=False)


@FAST
@given(s=bp, d=st.floats(min_value=10, max_value=250, allow_nan=False), variant=st.sampled_from(["benchmark", "published"]))
def test_map_lies_between_diastolic_and_systolic(s, d, variant):
    assume(s >= d)
    v = compute(MAP, {"Systolic Blood Pressure": [s, "mm Hg"], "Diastolic Blood Pressure": [d, "mm hg"]}, variant=variant).value
    assert d - 1e-4 <= v <= s + 1e-4
    assert v <= d + (s - d) / 2 + 1e-4  # closer to diastolic: diastole is the longer phase


@FAST
@given(s=bp, d=st.floats(min_value=10, max_value=200, allow_nan=False))
def test_map_unit_spellings_agree(s, d):
    a = compute(MAP, {"Systolic Blood Pressure": [s, "mm Hg"], "Diastolic Blood Pressure": [d, "mm Hg"]}, variant="benchmark").value
    b = compute(MAP, {"Systolic Blood Pressure": [s, "mm hg"], "Diastolic Blood Pressure": [d, "mm hg"]}, variant="benchmark").value
    assert a == b


@FAST
@given(kg=st.floats(min_value=2, max_value=300, allow_nan=False), cm=st.floats(min_value=40, max_value=250, allow_nan=False))
def test_bsa_unit_equivalent_inputs_agree(kg, cm):
    a = compute(BSA, {"weight": [kg, "kg"], "height": [cm, "cm"]}, variant="benchmark").value
    b = compute(BSA, {"weight": [kg * 1000, "g"], "height": [cm / 100, "m"]}, variant="benchmark").value
    assert b == pytest.approx(a, rel=1e-3)


@FAST
@given(kg=st.floats(min_value=2, max_value=300, allow_nan=False), cm=st.floats(min_value=40, max_value=250, allow_nan=False),
       extra=st.floats(min_value=1, max_value=50, allow_nan=False))
def test_bsa_increases_with_weight(kg, cm, extra):
    a = compute(BSA, {"weight": [kg, "kg"], "height": [cm, "cm"]}, variant="published").value
    b = compute(BSA, {"weight": [kg + extra, "kg"], "height": [cm, "cm"]}, variant="published").value
    assert b > a


@FAST
@given(bmi=st.floats(min_value=10, max_value=60, allow_nan=False), m=st.floats(min_value=0.5, max_value=2.5, allow_nan=False))
def test_target_weight_gives_back_the_bmi(bmi, m):
    w = compute(TW, {"Body Mass Index (BMI)": [bmi, "kg/m^2"], "height": [m, "m"]}, variant="published").value
    assert w / (m * m) == pytest.approx(bmi, rel=1e-5)  # output rounded to 5 decimals
    a = compute(TW, {"Body Mass Index (BMI)": [bmi, "kg/m^2"], "height": [m * 100, "cm"]}, variant="benchmark").value
    assert a == pytest.approx(w, rel=1e-3)


# ----------------------------------------------------------------------------- (c) bad input

GOOD = {
    MAP: {"Systolic Blood Pressure": [120, "mm Hg"], "Diastolic Blood Pressure": [80, "mm Hg"]},
    BSA: {"weight": [70, "kg"], "height": [170, "cm"]},
    TW: {"Body Mass Index (BMI)": [22, "kg/m^2"], "height": [170, "cm"]},
}


@pytest.mark.parametrize("slug, change, error, variable", [
    (MAP, {"Systolic Blood Pressure": None}, MissingInput, "Systolic Blood Pressure"),
    (MAP, {"Mean Pressure": [90, "mm Hg"]}, UnknownInput, "Mean Pressure"),
    (MAP, {"Diastolic Blood Pressure": [80, "mmH2O"]}, UnknownUnit, "Diastolic Blood Pressure"),
    (MAP, {"Diastolic Blood Pressure": [80, "kPa"]}, UnknownUnit, "Diastolic Blood Pressure"),
    (MAP, {"Systolic Blood Pressure": ["120", "mm Hg"]}, BadValue, "Systolic Blood Pressure"),
    (MAP, {"Systolic Blood Pressure": 120}, BadValue, "Systolic Blood Pressure"),
    (MAP, {"Systolic Blood Pressure": [1200, "mm Hg"]}, OutOfRange, "Systolic Blood Pressure"),
    (BSA, {"weight": None}, MissingInput, "weight"),
    (BSA, {"weight": [150, "stone"]}, UnknownUnit, "weight"),
    (BSA, {"weight": [150, "oz"]}, UnknownUnit, "weight"),
    (BSA, {"height": [1700, "mm"]}, UnknownUnit, "height"),
    (BSA, {"height": ["170", "cm"]}, BadValue, "height"),
    (BSA, {"weight": [0, "kg"]}, OutOfRange, "weight"),
    (BSA, {"height": [17, "m"]}, OutOfRange, "height"),
    (TW, {"Body Mass Index (BMI)": None}, MissingInput, "Body Mass Index (BMI)"),
    (TW, {"Body Mass Index (BMI)": [22, "kg/m2"]}, UnknownUnit, "Body Mass Index (BMI)"),
    (TW, {"Body Mass Index (BMI)": [True, "kg/m^2"]}, BadValue, "Body Mass Index (BMI)"),
    (TW, {"Body Mass Index (BMI)": [500, "kg/m^2"]}, OutOfRange, "Body Mass Index (BMI)"),
    (TW, {"weight": [70, "kg"]}, UnknownInput, "weight"),
])
def test_bad_input_is_refused_with_its_variable(slug, change, error, variable):
    ents = dict(GOOD[slug])
    for k, v in change.items():
        if v is None:
            ents.pop(k)
        else:
            ents[k] = v
    for variant in ("benchmark", "published"):
        with pytest.raises(error) as e:
            compute(slug, ents, variant=variant)
        assert isinstance(e.value, CalculatorError)
        assert e.value.calculator == slug
        assert e.value.variable == variable
