"""Successor entries held in the registry: MELD 3.0 (successor of MELD-Na) and CHA2DS2-VA (successor
of CHA2DS2-VASc).

Neither has a benchmark, so the `benchmark` and `published` variants must agree. Expected values are
computed here by hand from the published equation and point table, with their numbers written out
literally, so that a wrong registry constant fails these tests rather than moving with them.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from registry.loader import get_registry
from solver.library import BadValue, MissingInput, OutOfRange, UnknownInput, UnknownUnit, compute
from tests.solver.helpers import raises_calc_error as _raises

FAST = settings(max_examples=60, deadline=None)
VARIANTS = ("benchmark", "published")
DIALYSIS = "Dialysis at least twice in the past week"
CVVHD = "Continuous veno-venous hemodialysis for ≥24 hours in the past week"


# =========================================================================== MELD 3.0


def hand_meld3(cr: float, bili: float, inr: float, na: float, alb: float, female: bool) -> float:
    """Kim 2021 MELD 3.0 by hand (inputs already bounded), before rounding."""
    ln = math.log
    return (1.33 * female + 4.56 * ln(bili) + 0.82 * (137 - na) - 0.24 * (137 - na) * ln(bili)
            + 9.09 * ln(inr) + 11.14 * ln(cr) + 1.85 * (3.5 - alb) - 1.83 * (3.5 - alb) * ln(cr) + 6)


def meld3(cr=1.5, bili=3.0, inr=1.8, na=130.0, alb=2.8, sex="Male", variant="benchmark", **flags):
    e = {"creatinine": [cr, "mg/dL"], "Bilirubin": [bili, "mg/dL"], "international normalized ratio": inr,
         "Sodium": [na, "mEq/L"], "Albumin": [alb, "g/dL"], "sex": sex, **flags}
    return compute("meld-3-0", e, variant=variant).value


GOOD_MELD = {"creatinine": [1.5, "mg/dL"], "Bilirubin": [3.0, "mg/dL"], "international normalized ratio": 1.8,
             "Sodium": [130, "mEq/L"], "Albumin": [2.8, "g/dL"], "sex": "Male"}


@pytest.mark.parametrize("variant", VARIANTS)
def test_meld3_worked_example_term_by_term(variant):
    # man, creatinine 1.5 mg/dL, bilirubin 3.0 mg/dL, INR 1.8, Na 130 mEq/L, albumin 2.8 g/dL:
    #   4.56 x ln 3.0              =  5.0096720
    #   0.82 x (137 - 130)         =  5.74
    # - 0.24 x 7 x ln 3.0          = -1.8456686
    #   9.09 x ln 1.8              =  5.3429808
    #  11.14 x ln 1.5              =  4.5168813
    #   1.85 x (3.5 - 2.8)         =  1.295
    # - 1.83 x 0.7 x ln 1.5        = -0.5194008
    #   + 6                        = 25.5394647 -> 26
    terms = [4.56 * math.log(3.0), 0.82 * 7, -0.24 * 7 * math.log(3.0), 9.09 * math.log(1.8),
             11.14 * math.log(1.5), 1.85 * 0.7, -1.83 * 0.7 * math.log(1.5), 6]
    assert sum(terms) == pytest.approx(25.5394647, abs=1e-6)
    assert sum(terms) == pytest.approx(hand_meld3(1.5, 3.0, 1.8, 130, 2.8, False))
    assert meld3(variant=variant) == 26
    # the same patient as a woman: + 1.33 before rounding, 26.8694647 -> 27
    assert meld3(sex="Female", variant=variant) == round(hand_meld3(1.5, 3.0, 1.8, 130, 2.8, True)) == 27


@pytest.mark.parametrize("args,expected", [
    ((2.0, 2.0, 1.5, 132, 3.0, "Male"), 24),     # 24.127
    ((1.2, 2.5, 1.5, 135, 3.0, "Male"), 18),     # 17.853
    ((1.0, 1.0, 1.0, 137, 3.5, "Male"), 6),      # every term at its reference: the intercept
    ((1.0, 1.0, 1.0, 137, 3.5, "Female"), 7),    # 6 + 1.33 = 7.33
    ((3.0, 10.0, 2.5, 125, 1.5, "Female"), 41),  # 41.285: the equation has no cap; allocation caps at 40
])
def test_meld3_worked_values(args, expected):
    cr, bili, inr, na, alb, sex = args
    assert round(hand_meld3(cr, bili, inr, na, alb, sex == "Female")) == expected
    for variant in VARIANTS:
        v = meld3(cr, bili, inr, na, alb, sex, variant)
        assert isinstance(v, int) and v == min(expected, 40)  # OPTN allocation cap (meld-3-0 1.1.0)


def test_meld3_creatinine_above_three_is_capped():
    capped = round(hand_meld3(3.0, 3.0, 1.8, 130, 2.8, False))
    assert meld3(cr=3.0) == meld3(cr=3.5) == meld3(cr=5.0) == meld3(cr=12.0) == capped
    # MELD-Na's ceiling of 4.0 no longer applies: 4.0 scores as 3.0
    assert meld3(cr=4.0) == capped < round(hand_meld3(4.0, 3.0, 1.8, 130, 2.8, False))
    assert meld3(cr=2.0) < capped


@pytest.mark.parametrize("flag", [DIALYSIS, CVVHD])
@pytest.mark.parametrize("cr", [0.5, 1.5, 3.0, 6.0])
def test_meld3_dialysis_sets_creatinine_to_three(flag, cr):
    expected = round(hand_meld3(3.0, 3.0, 1.8, 130, 2.8, False))
    for variant in VARIANTS:
        assert meld3(cr=cr, variant=variant, **{flag: True}) == expected
        assert meld3(cr=cr, variant=variant, **{flag: "True"}) == expected


def test_meld3_dialysis_absent_or_false_is_no():
    assert meld3(cr=1.5, **{DIALYSIS: False, CVVHD: "False"}) == meld3(cr=1.5) == 26


def test_meld3_lower_bounds_of_one():
    base = round(hand_meld3(1.0, 1.0, 1.0, 130, 2.8, False))
    assert meld3(cr=0.4, bili=0.3, inr=0.8) == meld3(cr=1.0, bili=1.0, inr=1.0) == base
    assert meld3(cr=0.6) == meld3(cr=1.0)
    assert meld3(bili=0.5) == meld3(bili=1.0)
    assert meld3(inr=0.9) == meld3(inr=1.0)


def test_meld3_sodium_bounds():
    assert meld3(na=120) == meld3(na=125) == round(hand_meld3(1.5, 3.0, 1.8, 125, 2.8, False))
    assert meld3(na=145) == meld3(na=137) == round(hand_meld3(1.5, 3.0, 1.8, 137, 2.8, False))


def test_meld3_albumin_bounds():
    assert meld3(alb=0.9) == meld3(alb=1.5) == round(hand_meld3(1.5, 3.0, 1.8, 130, 1.5, False))
    assert meld3(alb=4.6) == meld3(alb=3.5) == round(hand_meld3(1.5, 3.0, 1.8, 130, 3.5, False))


@pytest.mark.parametrize("variant", VARIANTS)
def test_meld3_albumin_and_other_units(variant):
    si = {**GOOD_MELD, "Albumin": [28, "g/L"], "Sodium": [130, "mmol/L"]}
    assert compute("meld-3-0", si, variant=variant).value == 26
    # bilirubin 51.3 µmol/L x 584.66 g/mol = 2.999 mg/dL; creatinine 132.6 µmol/L = 1.172 mg/dL at 113.12 g/mol
    si = {**GOOD_MELD, "Bilirubin": [51.3, "µmol/L"], "creatinine": [132.6, "µmol/L"]}
    expected = round(hand_meld3(132.6 * 113.12 / 10000, 51.3 * 584.66 / 10000, 1.8, 130, 2.8, False))
    assert abs(compute("meld-3-0", si, variant=variant).value - expected) <= 1  # benchmark rounds conversions


@FAST
@given(cr=st.floats(0.2, 15), bili=st.floats(0.1, 50), inr=st.floats(0.5, 10), na=st.floats(110, 160),
       alb=st.floats(0.5, 6), sex=st.sampled_from(["Male", "Female"]),
       fl=st.fixed_dictionaries({}, optional={DIALYSIS: st.booleans(), CVVHD: st.booleans()}))
def test_meld3_variants_agree_and_match_the_hand_equation(cr, bili, inr, na, alb, sex, fl):
    a = meld3(cr, bili, inr, na, alb, sex, "benchmark", **fl)
    b = meld3(cr, bili, inr, na, alb, sex, "published", **fl)
    assert a == b and isinstance(a, int) and a >= 6
    c = 3.0 if any(fl.values()) else min(max(cr, 1.0), 3.0)
    expected = hand_meld3(c, max(bili, 1.0), max(inr, 1.0), min(max(na, 125), 137), min(max(alb, 1.5), 3.5),
                          sex == "Female")
    assert a == min(round(expected), 40)  # allocation cap


def test_meld3_reads_its_numbers_from_the_registry():
    calc = get_registry().calculators["meld-3-0"]
    c = {k: v.value for k, v in calc.constants.items()}
    assert c == {"creatinine_floor": 1.0, "creatinine_ceiling": 3.0, "dialysis_creatinine": 3.0,
                 "bilirubin_floor": 1.0, "inr_floor": 1.0, "sodium_floor": 125, "sodium_ceiling": 137,
                 "albumin_floor": 1.5, "albumin_ceiling": 3.5, "female_coefficient": 1.33,
                 "bilirubin_coefficient": 4.56, "sodium_coefficient": 0.82, "sodium_bilirubin_coefficient": 0.24,
                 "inr_coefficient": 9.09, "creatinine_coefficient": 11.14, "albumin_coefficient": 1.85,
                 "albumin_creatinine_coefficient": 1.83, "intercept": 6,
                 "score_cap": 40, "adolescent_min_age": 12, "adult_age": 18}
    assert calc.medcalc_id is None and calc.completeness is None and not calc.deviations
    assert calc.literature_audit.concern.value == "none"


# --------------------------------------------------------------------------- MELD 3.0 bad input


@pytest.mark.parametrize("key", ["Albumin", "sex", "Sodium", "creatinine", "Bilirubin",
                                 "international normalized ratio"])
def test_meld3_missing_required(key):
    _raises(MissingInput, "meld-3-0", {k: v for k, v in GOOD_MELD.items() if k != key}, key)


@pytest.mark.parametrize("key", ["weight", "INR"])  # age is an input since 1.1.0
def test_meld3_unknown_key(key):
    _raises(UnknownInput, "meld-3-0", {**GOOD_MELD, key: 1}, key)


@pytest.mark.parametrize("key,value", [("Albumin", [2.8, "mg/dL"]), ("Albumin", [2.8, "g%"]),
                                       ("creatinine", [100, "nmol/L"]), ("Sodium", [130, "mEq"])])
def test_meld3_unknown_unit(key, value):
    _raises(UnknownUnit, "meld-3-0", {**GOOD_MELD, key: value}, key)


@pytest.mark.parametrize("key,value", [("sex", "X"), ("sex", None), ("Albumin", 2.8), ("Albumin", ["2.8", "g/dL"]),
                                       ("international normalized ratio", "1.8"), (DIALYSIS, "si"), (CVVHD, 2)])
def test_meld3_wrong_type(key, value):
    _raises(BadValue, "meld-3-0", {**GOOD_MELD, key: value}, key)


@pytest.mark.parametrize("key,value", [("Albumin", [0, "g/dL"]), ("Albumin", [20, "g/dL"]),
                                       ("creatinine", [0, "mg/dL"]), ("international normalized ratio", 0),
                                       ("Sodium", [40, "mEq/L"])])
def test_meld3_out_of_range(key, value):
    _raises(OutOfRange, "meld-3-0", {**GOOD_MELD, key: value}, key)


# =========================================================================== CHA2DS2-VA

VA_FLAGS = ["Congestive Heart Failure", "Hypertension history", "Stroke", "Transient Ischemic Attacks History",
            "Thromboembolism history", "Vascular disease history", "Diabetes history"]


def va(age=50, variant="benchmark", **flags):
    return compute("cha2ds2-va", {"age": [age, "years"], **flags}, variant=variant).value


def hand_va(age, chf=False, htn=False, stroke_like=False, vascular=False, diabetes=False):
    """ESC 2024 CHA2DS2-VA by hand: C 1, H 1, A2 2 (>= 75), D 1, S2 2, V 1, A 1 (65-74)."""
    age_pts = 2 if age >= 75 else 1 if age >= 65 else 0
    return age_pts + chf + htn + 2 * stroke_like + vascular + diabetes


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name,points", [("Congestive Heart Failure", 1), ("Hypertension history", 1),
                                         ("Stroke", 2), ("Transient Ischemic Attacks History", 2),
                                         ("Thromboembolism history", 2), ("Vascular disease history", 1),
                                         ("Diabetes history", 1)])
def test_va_point_table(name, points, variant):
    assert va(50, variant, **{name: True}) == points
    assert va(50, variant, **{name: False}) == 0


@pytest.mark.parametrize("age,points", [(0, 0), (64, 0), (65, 1), (74, 1), (75, 2), (99, 2)])
def test_va_age_bands(age, points):
    assert va(age) == va(age, "published") == points


def test_va_stroke_tia_thromboembolism_count_once():
    assert va(50, Stroke=True, **{"Transient Ischemic Attacks History": True, "Thromboembolism history": True}) == 2


def test_va_range_is_zero_to_eight():
    assert va(30) == 0
    assert va(80, **{n: True for n in VA_FLAGS}) == 8 == hand_va(80, True, True, True, True, True)
    assert get_registry().calculators["cha2ds2-va"].output.range == (0, 8)


def test_va_worked_examples():
    # 72-year-old with hypertension and diabetes: A 1 + H 1 + D 1 = 3
    assert va(72, **{"Hypertension history": True, "Diabetes history": True}) == 3 == hand_va(72, htn=True,
                                                                                             diabetes=True)
    # 78-year-old with a prior TIA and heart failure: A2 2 + S2 2 + C 1 = 5
    assert va(78, **{"Transient Ischemic Attacks History": True, "Congestive Heart Failure": True}) == 5
    # months count as completed years: 779 months = 64 years 11 months, under 65
    assert compute("cha2ds2-va", {"age": [779, "months"]}, variant="benchmark").value == 0
    assert compute("cha2ds2-va", {"age": [780, "months"]}, variant="benchmark").value == 1


@FAST
@given(age=st.integers(18, 100), sex=st.sampled_from(["Male", "Female"]),
       fl=st.fixed_dictionaries({}, optional={n: st.booleans() for n in VA_FLAGS}), variant=st.sampled_from(VARIANTS))
def test_va_is_vasc_without_the_female_point(age, sex, fl, variant):
    ents = {"age": [age, "years"], **fl}
    vasc = compute("cha2ds2-vasc", {**ents, "sex": sex}, variant=variant).value
    v = compute("cha2ds2-va", ents, variant=variant).value
    assert v == vasc - (1 if sex == "Female" else 0)
    assert 0 <= v <= 8
    stroke_like = any(fl.get(n, False) for n in ("Stroke", "Transient Ischemic Attacks History",
                                                  "Thromboembolism history"))
    assert v == hand_va(age, fl.get("Congestive Heart Failure", False), fl.get("Hypertension history", False),
                        stroke_like, fl.get("Vascular disease history", False), fl.get("Diabetes history", False))


def test_va_has_no_sex_input_and_reads_the_registry():
    calc = get_registry().calculators["cha2ds2-va"]
    assert "sex" not in {i.name for i in calc.inputs}
    assert calc.tables["points"].points == {"Congestive Heart Failure": 1, "Hypertension history": 1,
                                            "stroke, TIA or thromboembolism": 2, "Vascular disease history": 1,
                                            "Diabetes history": 1}
    assert calc.medcalc_id is None and calc.completeness is None
    vasc = get_registry().calculators["cha2ds2-vasc"]
    assert {i.name for i in vasc.inputs} - {i.name for i in calc.inputs} == {"sex"}


# --------------------------------------------------------------------------- CHA2DS2-VA bad input


def test_va_refuses_sex():
    _raises(UnknownInput, "cha2ds2-va", {"age": [70, "years"], "sex": "Female"}, "sex")


def test_va_missing_age():
    _raises(MissingInput, "cha2ds2-va", {"Stroke": True}, "age")


@pytest.mark.parametrize("key,value", [("age", "70"), ("age", [True, "years"]), ("Stroke", "si"),
                                       ("Diabetes history", 2)])
def test_va_wrong_type(key, value):
    _raises(BadValue, "cha2ds2-va", {"age": [70, "years"], key: value}, key)


@pytest.mark.parametrize("value", [[70, "yrz"], [3, "dy"]])
def test_va_unknown_age_unit(value):
    _raises(UnknownUnit, "cha2ds2-va", {"age": value}, "age")


def test_va_age_out_of_range():
    _raises(OutOfRange, "cha2ds2-va", {"age": [200, "years"]}, "age")
