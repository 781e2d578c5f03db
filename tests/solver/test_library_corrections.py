"""Corrections of the published variant found by an outside check (issue 14), each tested at the edge
that was wrong. Expected numbers are worked out here by hand from the stated rule, never read back
from the library.
"""
from __future__ import annotations

import math

import pytest

from registry.loader import get_registry
from registry.texts import render
from solver.library import BadValue, OutOfRange, compute
from tests.solver.helpers import raises_calc_error


def bench(slug, ents):
    return compute(slug, ents, variant="benchmark").value


def pub(slug, ents):
    return compute(slug, ents, variant="published").value


# ------------------------------------------------------------------------------ LDL (Friedewald)

LIPIDS = {"Total cholesterol": [200, "mg/dL"], "high-density lipoprotein cholesterol": [50, "mg/dL"]}


@pytest.mark.deviation("ldl-friedewald", "triglyceride-mmol-factor")
def test_ldl_triglycerides_in_mmol_use_the_conventional_factor():
    ents = {**LIPIDS, "Triglycerides": [2.0, "mmol/L"]}
    # published: 2.0 x 88.57 = 177.14 mg/dL; 200 - 50 - 177.14 / 5 = 114.572
    assert pub("ldl-friedewald", ents) == pytest.approx(114.572, abs=1e-9)
    # benchmark: molar mass 861.338 g/mol -> 172.2676 mg/dL -> 115.546 (0.49 mg/dL higher per mmol/L)
    assert bench("ldl-friedewald", ents) == pytest.approx(200 - 50 - 172.2676 / 5, abs=2e-3)
    assert bench("ldl-friedewald", ents) - pub("ldl-friedewald", ents) == pytest.approx(2 * (88.57 - 86.1338) / 5, abs=2e-3)
    # mg/dL input is not affected
    same = {**LIPIDS, "Triglycerides": [150, "mg/dL"]}
    assert pub("ldl-friedewald", same) == bench("ldl-friedewald", same) == pytest.approx(120)


def test_ldl_text_and_code_agree_at_400():
    at = {**LIPIDS, "Triglycerides": [400, "mg/dL"]}
    assert pub("ldl-friedewald", at) == pytest.approx(200 - 50 - 80)  # valid up to and including 400
    raises_calc_error(OutOfRange, "ldl-friedewald", {**LIPIDS, "Triglycerides": [400.01, "mg/dL"]}, "Triglycerides",
                      variant="published")
    reg = get_registry()
    calc = reg.get("ldl-friedewald")
    text = render(calc, calcs=reg.calculators, units=reg.units)
    assert "above 400 mg/dL" in text and "at exactly 400 mg/dL" in text
    assert "above 400 mg/dL" in calc.literature_audit.summary and "or more" not in calc.literature_audit.summary


# ------------------------------------------------------------------------------ APACHE II MAP bands

APACHE = {"Glasgow Coma Score": 15, "Potassium": [4.0, "mmol/L"], "Sodium": [140.0, "mmol/L"], "PaO2": [90, "mm Hg"],
          "creatinine": [1.0, "mg/dL"], "Temperature": [37.0, "degrees celsius"], "White blood cell count": [8000, "mm^3"],
          "Hematocrit": [40.0, "%"], "respiratory rate": [16, "breaths per minute"],
          "Heart Rate or Pulse": [80, "beats per minute"], "pH": 7.40, "Acute renal failure": False,
          "FiO2": [21, "%"], "age": [40, "years"]}


def apache(variant, sbp, dbp):
    e = {**APACHE, "Systolic Blood Pressure": [sbp, "mm Hg"], "Diastolic Blood Pressure": [dbp, "mm Hg"]}
    return compute("apache-ii", e, variant=variant).value


@pytest.mark.deviation("apache-ii", "map-band-edges")
@pytest.mark.parametrize("sbp, dbp, bench_pts, pub_pts", [
    (120, 75, 0, 0),      # MAP 90: normal in both
    (130, 129, 3, 2),     # MAP 129.33: published 110-129 band (2), benchmark > 129 (3)
    (130, 130, 3, 3),     # MAP 130: the printed lower bound of 130-159
    (110, 109.5, 2, 0),   # MAP 109.67: published 70-109 (0), benchmark > 109 (2)
    (160, 160, 4, 4),     # MAP 160
    (70, 69.5, 0, 2),     # MAP 69.67: published 50-69 band (2), benchmark > 69 (0)
])
def test_apache_map_bands_from_each_lower_bound(sbp, dbp, bench_pts, pub_pts):
    base_b, base_p = apache("benchmark", 120, 75), apache("published", 120, 75)
    assert apache("benchmark", sbp, dbp) - base_b == bench_pts
    assert apache("published", sbp, dbp) - base_p == pub_pts


# ------------------------------------------------------------------------------ HOMA-IR insulin units


@pytest.mark.deviation("homa-ir", "insulin-ng-factor")
def test_homa_one_amount_of_insulin_one_result_whatever_the_unit():
    glucose = [90, "mg/dL"]
    # 1 ng/mL of insulin = 1e6 / 5808 pmol/L = 172.176 pmol/L = 28.696 µIU/mL
    pmol = 1e6 / 5808
    by_ng = pub("homa-ir", {"Insulin": [1, "ng/mL"], "Glucose": glucose})
    by_pmol = pub("homa-ir", {"Insulin": [pmol, "pmol/L"], "Glucose": glucose})
    assert by_ng == pytest.approx(by_pmol, abs=1e-5)
    assert by_ng == pytest.approx(pmol / 6 * 90 / 405, abs=1e-5)  # output rounded to 5 decimals
    # the benchmark keeps its 24.8 per ng/mL
    assert bench("homa-ir", {"Insulin": [1, "ng/mL"], "Glucose": glucose}) == pytest.approx(24.8 * 90 / 405, abs=1e-4)


@pytest.mark.deviation("homa-ir", "glucose-mmol-molar-mass")
def test_homa_glucose_in_mmol_is_divided_by_matthews_22_5():
    ents = {"Insulin": [51.9, "µIU/mL"], "Glucose": [17.1, "mmol/L"]}
    assert pub("homa-ir", ents) == 39.444                                  # 51.9 x 17.1 / 22.5 = 887.49 / 22.5
    assert compute("homa-ir", ents, variant="published").inputs["Glucose"].unit == "mmol/L"
    # the benchmark converts with glucose's molar mass (x 18.016) and divides by 405: 0.089 % high
    assert bench("homa-ir", ents) == pytest.approx(51.9 * 17.1 * 18.016 / 405, abs=1e-4)  # and its rounding chain
    # in mg/dL both variants divide by 405, as before
    assert pub("homa-ir", {"Insulin": [10, "µIU/mL"], "Glucose": [81, "mg/dL"]}) == 2.0


def test_homa_divisor_405_is_matthews_22_5_times_the_conventional_18():
    c = get_registry().calculators["homa-ir"].constants
    assert c["divisor"].value == 405 and c["matthews_divisor"].value == 22.5 and c["divisor_glucose_factor"].value == 18
    assert c["matthews_divisor"].value * c["divisor_glucose_factor"].value == c["divisor"].value


# ------------------------------------------------------------------------------ adult eGFR equations

EGFR = {"sex": "Female", "creatinine": [0.8, "mg/dL"]}


@pytest.mark.deviation("ckd-epi-2021", "adult-only")
@pytest.mark.deviation("mdrd-gfr", "adult-only")
@pytest.mark.parametrize("slug", ["ckd-epi-2021", "mdrd-gfr"])
def test_egfr_published_refuses_children_and_names_schwartz(slug):
    child = {**EGFR, "age": [10, "years"]}
    assert bench(slug, child) > 0  # the benchmark computes it
    err = raises_calc_error(OutOfRange, slug, child, "age", variant="published")
    assert "bedside Schwartz" in str(err) and "adult" in str(err)
    raises_calc_error(OutOfRange, slug, {**EGFR, "age": [17.9, "years"]}, "age", variant="published")
    assert pub(slug, {**EGFR, "age": [18, "years"]}) > 0  # 18 is an adult
    raises_calc_error(OutOfRange, slug, {**EGFR, "age": [200, "months"]}, "age", variant="published")  # 16 y


# ------------------------------------------------------------------------------ Caprini women-only items

W1 = "Oral contraceptives or hormone replacement therapy"
W2 = "Pregnancy or postpartum (less than 1 month)"
W3 = ("History of unexplained stillborn infant, recurrent spontaneous abortion (3 or more), premature birth "
      "with toxemia or growth-restricted infant")
CAPRINI = {"age": [30, "years"], "sex": "Female"}


@pytest.mark.deviation("caprini-2005", "women-only-items-not-scored")
def test_caprini_women_only_items_are_optional_published_inputs():
    base = pub("caprini-2005", CAPRINI)
    assert base == bench("caprini-2005", CAPRINI) == 0
    for n, items in enumerate(([W1], [W1, W2], [W1, W2, W3]), 1):
        ents = {**CAPRINI, **{w: True for w in items}}
        assert pub("caprini-2005", ents) == n  # 1 point each
        assert bench("caprini-2005", ents) == 0  # the benchmark never scores them
    assert pub("caprini-2005", {**CAPRINI, W2: False}) == 0
    raises_calc_error(BadValue, "caprini-2005", {**CAPRINI, "sex": "Male", W2: True}, W2, variant="published")


# ------------------------------------------------------------------------------ MELD 3.0 cap and age

MELD = {"creatinine": [1.5, "mg/dL"], "Bilirubin": [3.0, "mg/dL"], "international normalized ratio": 1.8,
        "Sodium": [130, "mEq/L"], "Albumin": [2.8, "g/dL"], "sex": "Male"}


def hand_meld3(cr, bili, inr, na, alb, female):
    ln = math.log
    return (1.33 * female + 4.56 * ln(bili) + 0.82 * (137 - na) - 0.24 * (137 - na) * ln(bili)
            + 9.09 * ln(inr) + 11.14 * ln(cr) + 1.85 * (3.5 - alb) - 1.83 * (3.5 - alb) * ln(cr) + 6)


@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_meld3_is_capped_at_40_for_allocation(variant):
    sick = {**MELD, "creatinine": [3.0, "mg/dL"], "Bilirubin": [30, "mg/dL"], "international normalized ratio": 4.0,
            "Sodium": [125, "mEq/L"], "Albumin": [1.5, "g/dL"]}
    raw = hand_meld3(3.0, 30, 4.0, 125, 1.5, False)
    assert raw > 40  # about 46.5 uncapped
    assert compute("meld-3-0", sick, variant=variant).value == 40
    # just under the cap is untouched: pick INR so that the raw score rounds to 39
    below = {**sick, "international normalized ratio": 2.0}
    assert compute("meld-3-0", below, variant=variant).value == round(hand_meld3(3.0, 30, 2.0, 125, 1.5, False)) <= 40


@pytest.mark.parametrize("age, female_points", [([12, "years"], 1), ([17.9, "years"], 1), ([18, "years"], 0),
                                                ([40, "years"], 0), ([204, "months"], 1)])
def test_meld3_adolescents_get_the_female_points_whatever_their_sex(age, female_points):
    got = compute("meld-3-0", {**MELD, "age": age}, variant="benchmark").value
    assert got == round(hand_meld3(1.5, 3.0, 1.8, 130, 2.8, bool(female_points)))
    assert compute("meld-3-0", MELD, variant="benchmark").value == round(hand_meld3(1.5, 3.0, 1.8, 130, 2.8, False))  # no age: adult


def test_meld3_refuses_under_12_naming_peld():
    err = raises_calc_error(OutOfRange, "meld-3-0", {**MELD, "age": [11.9, "years"]}, "age")
    assert "PELD" in str(err)


def test_conventional_unit_factors_are_registry_data_with_a_source():
    """Where published criteria name a conventional factor, the entry holds it with its source (issue 21)."""
    reg = get_registry()
    named = {("homa-ir", "divisor_glucose_factor"): 18, ("child-pugh", "published_bilirubin_umol_per_mg_dl"): 17.1,
             ("ldl-friedewald", "published_triglyceride_mg_dl_per_mmol_l"): 88.57,
             ("ldl-sampson", "triglyceride_mg_dl_per_mmol_l"): 88.57}
    for (slug, name), value in named.items():
        const = reg.calculators[slug].constants[name]
        assert const.value == value and const.source, (slug, name)
    # elsewhere the molar masses of units.yaml convert: 17.104 and 88.40 µmol/L per mg/dL, not 17.1 and 88.4
    per_mg_dl = {a: 10_000 / reg.units.analytes[a].molar_mass for a in ("bilirubin", "creatinine")}
    assert round(per_mg_dl["bilirubin"], 3) == 17.104 and round(per_mg_dl["creatinine"], 2) == 88.40


_SOFA_NORMAL = {"PaO2": [95, "mm Hg"], "FiO2": [21, "%"], "Platelet count": [250000, "µL"], "Glasgow Coma Score": 15,
                "creatinine": [0.8, "mg/dL"], "Systolic Blood Pressure": [120, "mm Hg"],
                "Diastolic Blood Pressure": [80, "mm Hg"]}  # every organ system 0 points but the liver


# Vincent 1996 liver row in µmol/L (read in PMC4968574 Table 1): < 20 0, 20-32 1, 33-101 2, 102-204 3, > 204 4
@pytest.mark.parametrize("umol, points", [(19.9, 0), (20.0, 1), (20.4, 1), (32.9, 1), (33.0, 2), (101.9, 2), (102.0, 3),
                                          (204.0, 3), (204.1, 4)])
def test_sofa_published_scores_a_umol_bilirubin_by_the_si_bands(umol, points):
    assert compute("sofa", {**_SOFA_NORMAL, "Bilirubin": [umol, "µmol/L"]}, variant="published").value == points


@pytest.mark.deviation("sofa", "bilirubin-si-bands")
@pytest.mark.parametrize("umol", [20.0, 20.4, 33.0, 102.0, 204.1])
def test_sofa_benchmark_keeps_converting_a_umol_bilirubin_to_mg_dl(umol):
    """Just above an SI edge the mg/dL reading is one point lower (20.0 µmol/L is 1.17 mg/dL, below 1.2):
    deviation bilirubin-si-bands; the mg/dL bands of the benchmark variant are unchanged."""
    ents = {**_SOFA_NORMAL, "Bilirubin": [umol, "µmol/L"]}
    bench, pub = (compute("sofa", ents, variant=v).value for v in ("benchmark", "published"))
    assert bench == pub - 1
    assert "bilirubin-si-bands" in {d.id for d in get_registry().calculators["sofa"].deviations}


def test_sofa_mg_dl_bilirubin_still_scores_the_mg_dl_bands_in_both_variants():
    for mg, points in ((1.19, 0), (1.2, 1), (1.99, 1), (2.0, 2), (5.99, 2), (6.0, 3), (11.99, 3), (12.0, 4)):
        for variant in ("benchmark", "published"):
            assert compute("sofa", {**_SOFA_NORMAL, "Bilirubin": [mg, "mg/dL"]}, variant=variant).value == points
