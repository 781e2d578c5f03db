"""Infection scores: deviations, clinical invariants and bad input.

Covers curb-65, centor-mcisaac, feverpain and sirs-criteria.
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
    return st.fixed_dictionaries({}, optional={n: st.booleans() for n in names})


CURB_BASE = {"age": [40, "years"], "Systolic Blood Pressure": [120, "mm Hg"], "Diastolic Blood Pressure": [80, "mm Hg"],
             "Blood Urea Nitrogen (BUN)": [10.0, "mg/dL"], "respiratory rate": [16, "breaths per minute"]}
CENTOR_BASE = {"age": [30, "years"], "Temperature": [37.0, "degrees celsius"], "Cough Absent": False}


# ----------------------------------------------------------------------------- (a) deviations


@pytest.mark.deviation("curb-65", "vital-signs-truncated")
def test_curb65_diastolic_truncation():
    ents = {**CURB_BASE, "Diastolic Blood Pressure": [60.5, "mm Hg"]}
    bench, pub = both("curb-65", ents)
    # Benchmark: int(60.5) = 60 <= 60 -> 1 point. Published: 60.5 > 60 -> no point.
    assert (bench, pub) == (1, 0)


@pytest.mark.deviation("curb-65", "bun-19-mg-dl")
def test_curb65_bun_19_to_19_6_mg_dl():
    ents = {**CURB_BASE, "Blood Urea Nitrogen (BUN)": [19.5, "mg/dL"]}
    bench, pub = both("curb-65", ents)
    # 19.5 mg/dL BUN = 19.5 * 10 / 28.02 = 6.96 mmol/L urea: > 19 mg/dL scores, not > 7 mmol/L.
    assert 19.5 * 10 / 28.02 < 7
    assert (bench, pub) == (1, 0)
    above = {**CURB_BASE, "Blood Urea Nitrogen (BUN)": [19.7, "mg/dL"]}  # 7.03 mmol/L
    assert both("curb-65", above) == (1, 1)
    assert both("curb-65", {**CURB_BASE, "Blood Urea Nitrogen (BUN)": [7.1, "mmol/L"]}) == (1, 1)


@pytest.mark.deviation("centor-mcisaac", "missing-cough-scores")
def test_centor_missing_cough_counts_only_in_benchmark():
    ents = {k: v for k, v in CENTOR_BASE.items() if k != "Cough Absent"}
    bench, pub = both("centor-mcisaac", ents)
    assert (bench, pub) == (1, 0)  # age 15-44: 0; afebrile; missing cough: +1 vs 0


@pytest.mark.deviation("centor-mcisaac", "fractional-age-gap")
def test_centor_fractional_age_in_gap():
    ents = {**CENTOR_BASE, "age": [14.5, "years"]}
    bench, pub = both("centor-mcisaac", ents)
    assert (bench, pub) == (0, 1)  # 14.5 falls between 14 and 15 in the benchmark; published 3-14 band
    assert both("centor-mcisaac", {**CENTOR_BASE, "age": [14, "years"]}) == (1, 1)


@pytest.mark.deviation("centor-mcisaac", "under-three")
def test_centor_under_three_refused_when_published():
    ents = {**CENTOR_BASE, "age": [2, "years"]}
    assert compute("centor-mcisaac", ents, variant="benchmark").value == 0
    with pytest.raises(OutOfRange) as info:
        compute("centor-mcisaac", ents, variant="published")
    assert info.value.calculator == "centor-mcisaac" and info.value.variable == "age"


@pytest.mark.deviation("feverpain", "missing-cough-coryza-scores")
def test_feverpain_missing_cough_coryza_counts_only_in_benchmark():
    bench, pub = both("feverpain", {"Fever in past 24 hours": True})
    assert (bench, pub) == (2, 1)
    assert both("feverpain", {"Absence of cough or coryza": True}) == (1, 1)


# ----------------------------------------------------------------------------- (b) invariants


@FAST
@given(st.integers(18, 110), st.floats(60, 250), st.floats(30, 150), st.floats(4, 60), st.booleans(),
       st.floats(1, 150))
def test_curb65_range_and_urea_units(age, sbp, dbp, rr, confusion, bun):
    ents = {"age": [age, "years"], "Systolic Blood Pressure": [sbp, "mm hg"], "Diastolic Blood Pressure": [dbp, "mm Hg"],
            "respiratory rate": [rr, "breaths per minute"], "Confusion": confusion}
    for variant in ("benchmark", "published"):
        v = compute("curb-65", {**ents, "Blood Urea Nitrogen (BUN)": [bun, "mg/dL"]}, variant=variant).value
        assert 0 <= v <= 5
    # urea in mmol/L and the same BUN in mg/dL agree away from the threshold
    mmol = bun * 10 / 28.02
    if abs(mmol - 7) > 0.05:
        a = compute("curb-65", {**ents, "Blood Urea Nitrogen (BUN)": [bun, "mg/dL"]}, variant="published").value
        b = compute("curb-65", {**ents, "Blood Urea Nitrogen (BUN)": [mmol, "mmol/L"]}, variant="published").value
        assert a == b


@FAST
@given(flags(["Cough Absent", "Tender/swollen anterior cervical lymph nodes", "Exudate or swelling on tonsils"]),
       st.integers(3, 100), st.floats(34, 41.5))
def test_centor_range_and_fahrenheit_equivalent(fl, age, celsius):
    c = compute("centor-mcisaac", {**fl, "age": [age, "years"], "Temperature": [celsius, "degrees celsius"]}, variant="benchmark").value
    assert -1 <= c <= 5
    if abs(celsius - 38) > 0.01:
        f = compute("centor-mcisaac", {**fl, "age": [age, "years"], "Temperature": [celsius * 9 / 5 + 32, "degrees fahrenheit"]},
                    variant="benchmark").value
        assert c == f
    pub = compute("centor-mcisaac", {**fl, "age": [age, "years"], "Temperature": [celsius, "degrees celsius"]}, variant="published").value
    assert -1 <= pub <= 5 and pub <= c


@FAST
@given(flags(["Fever in past 24 hours", "Absence of cough or coryza", "Symptom onset <=3 days", "Purulent tonsils",
              "Severe tonsil inflammation"]))
def test_feverpain_range(fl):
    bench, pub = both("feverpain", fl)
    assert 0 <= pub <= bench <= 5
    assert bench - pub == (0 if "Absence of cough or coryza" in fl else 1)


@FAST
@given(st.floats(30, 42), st.floats(30, 200), st.integers(500, 40000), st.one_of(st.none(), st.floats(6, 50)),
       st.one_of(st.none(), st.floats(15, 80)))
def test_sirs_range_and_wbc_units(temp, hr, wbc, rr, paco2):
    ents = {"Temperature": [temp, "degrees celsius"], "Heart Rate or Pulse": [hr, "beats per minute"]}
    if rr is not None:
        ents["respiratory rate"] = [rr, "breaths per minute"]
    if paco2 is not None:
        ents["PaCO2"] = [paco2, "mm Hg"]
    values = {compute("sirs-criteria", {**ents, "White blood cell count": w}, variant=v).value
              for w in ([wbc, "µL"], [wbc, "mm^3"], [wbc * 1e6, "L"]) for v in ("benchmark", "published")}
    assert len(values) == 1
    assert 0 <= values.pop() <= 4


# ----------------------------------------------------------------------------- (c) bad input


def _raises(exc, slug, variable, ents, variant="benchmark"):
    return raises_calc_error(exc, slug, ents, variable, variant)


SIRS_BASE = {"Temperature": [37, "degrees celsius"], "Heart Rate or Pulse": [80, "beats per minute"],
             "White blood cell count": [8000, "µL"]}


@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_bad_inputs(variant):
    _raises(MissingInput, "curb-65", "Blood Urea Nitrogen (BUN)",
            {k: v for k, v in CURB_BASE.items() if k != "Blood Urea Nitrogen (BUN)"}, variant)
    _raises(UnknownInput, "curb-65", "Urea", {**CURB_BASE, "Urea": [7, "mmol/L"]}, variant)
    _raises(UnknownUnit, "curb-65", "Blood Urea Nitrogen (BUN)", {**CURB_BASE, "Blood Urea Nitrogen (BUN)": [20, "mg%"]}, variant)
    _raises(UnknownUnit, "curb-65", "Systolic Blood Pressure", {**CURB_BASE, "Systolic Blood Pressure": [12, "kPa"]}, variant)
    _raises(BadValue, "curb-65", "respiratory rate", {**CURB_BASE, "respiratory rate": "fast"}, variant)
    _raises(BadValue, "curb-65", "Confusion", {**CURB_BASE, "Confusion": 2}, variant)
    _raises(OutOfRange, "curb-65", "Systolic Blood Pressure", {**CURB_BASE, "Systolic Blood Pressure": [-5, "mm Hg"]}, variant)
    _raises(UnknownUnit, "centor-mcisaac", "Temperature", {**CENTOR_BASE, "Temperature": [38.5, "celsius"]}, variant)
    _raises(OutOfRange, "centor-mcisaac", "Temperature", {**CENTOR_BASE, "Temperature": [60, "degrees celsius"]}, variant)
    _raises(MissingInput, "centor-mcisaac", "Temperature", {"age": [30, "years"]}, variant)
    _raises(UnknownUnit, "centor-mcisaac", "age", {**CENTOR_BASE, "age": [3, "dy"]}, variant)
    _raises(BadValue, "feverpain", "Purulent tonsils", {"Purulent tonsils": "vrai"}, variant)
    _raises(UnknownInput, "feverpain", "Cough", {"Cough": False}, variant)
    _raises(UnknownUnit, "sirs-criteria", "White blood cell count", {**SIRS_BASE, "White blood cell count": [12, "10^9/L"]}, variant)
    _raises(UnknownUnit, "sirs-criteria", "White blood cell count", {**SIRS_BASE, "White blood cell count": [12, "K/µL"]}, variant)
    _raises(OutOfRange, "sirs-criteria", "PaCO2", {**SIRS_BASE, "PaCO2": [0, "mm Hg"]}, variant)
    _raises(UnknownUnit, "sirs-criteria", "PaCO2", {**SIRS_BASE, "PaCO2": [4.3, "kPa"]}, variant)


# ----------------------------------------------------------------------------- (d) reference crashes (VOCAB §6)


@pytest.mark.parametrize("variant", ["benchmark", "published"])
@pytest.mark.parametrize("rr", [None, 18, 20])
def test_sirs_paco2_exactly_32_is_not_met(variant, rr):
    # The reference raises UnboundLocalError here; Bone 1992: PaCO2 < 32 mm Hg, so 32 does not meet it.
    ents = {**SIRS_BASE, "PaCO2": [32, "mm Hg"]}
    if rr is not None:
        ents["respiratory rate"] = [rr, "breaths per minute"]
    assert compute("sirs-criteria", ents, variant=variant).value == 0
    assert compute("sirs-criteria", {**ents, "PaCO2": [31.9, "mm Hg"]}, variant=variant).value == 1


@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_sirs_paco2_32_with_tachypnoea(variant):
    ents = {**SIRS_BASE, "PaCO2": [32, "mm Hg"], "respiratory rate": [24, "breaths per minute"]}
    assert compute("sirs-criteria", ents, variant=variant).value == 1


@pytest.mark.parametrize("unit", ["mnth", "wek", "dy"])  # "month", "week", "day": read (units.yaml)
def test_singular_age_units_are_a_clear_error(unit):
    _raises(UnknownUnit, "centor-mcisaac", "age", {**CENTOR_BASE, "age": [1, unit]})
    _raises(UnknownUnit, "curb-65", "age", {**CURB_BASE, "age": [1, unit]})
