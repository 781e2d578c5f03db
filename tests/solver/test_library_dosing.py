"""Maintenance fluids, steroid conversion and morphine milligram equivalents: deviations, invariants, bad input."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.library import BadValue, MissingInput, OutOfRange, UnknownInput, UnknownUnit, compute
from tests.solver.helpers import raises_calc_error

FAST = settings(max_examples=50, deadline=None)
MF, SC, MME = "maintenance-fluids", "steroid-conversion", "morphine-milligram-equivalents"
STEROIDS = ["Betamethasone IV", "Cortisone PO", "Dexamethasone IV", "Dexamethasone PO", "Hydrocortisone IV",
            "Hydrocortisone PO", "MethylPrednisoLONE IV", "MethylPrednisoLONE PO", "PrednisoLONE PO", "PredniSONE PO",
            "Triamcinolone IV"]
EQUIVALENT_MG = {"Betamethasone": 0.75, "Cortisone": 25, "Dexamethasone": 0.75, "Hydrocortisone": 20,
                 "MethylPrednisoLONE": 4, "PrednisoLONE": 5, "PredniSONE": 5, "Triamcinolone": 4}


def both(slug: str, ents: dict) -> tuple:
    return compute(slug, ents, variant="benchmark").value, compute(slug, ents, variant="published").value


# ----------------------------------------------------------------------------- (a) deviations


@pytest.mark.deviation("maintenance-fluids", "hourly-4-2-1-approximation")
def test_maintenance_fluids_4_2_1_versus_holliday_segar_daily_rule():
    # 70 kg: 4-2-1 gives 40 + 20 + 50 = 110 mL/h; Holliday-Segar 1000 + 500 + 20 x 50 = 2500 mL/day = 104.17 mL/h
    bench, pub = both(MF, {"weight": [70, "kg"]})
    assert bench == 110
    assert pub == pytest.approx(2500 / 24, abs=1e-5)
    assert bench > pub
    # 10 kg: 40 mL/h versus 1000 / 24 = 41.67 mL/h, the 4-2-1 rule is 4 % lower here
    bench, pub = both(MF, {"weight": [10, "kg"]})
    assert bench == 40
    assert pub == pytest.approx(1000 / 24, abs=1e-5)
    assert (pub - bench) / pub == pytest.approx(0.04, abs=1e-6)  # output rounded to 5 decimals
    # 35 kg: both 75 mL/h (1500 + 300 = 1800 mL/day)
    bench, pub = both(MF, {"weight": [35, "kg"]})
    assert bench == pub == pytest.approx(75)


@pytest.mark.deviation("steroid-conversion", "rounded-equivalence-factors")
def test_steroid_rounded_factors_versus_exact_equivalents():
    # 100 mg prednisone = 80 mg methylprednisolone (5 : 4); the benchmark's 5.33 / 6.67 = 0.7991
    ents = {"input steroid": ["PredniSONE PO", 100, "mg"], "target steroid": "MethylPrednisoLONE PO"}
    bench, pub = both(SC, ents)
    assert pub == pytest.approx(100 * 4 / 5, abs=1e-9)
    assert bench == pytest.approx(79.91, abs=1e-9)
    assert 0 < pub - bench < 0.002 * pub  # benchmark is about 0.1 % low
    # 20 mg hydrocortisone = 5 mg prednisone; benchmark 20 x 0.25009
    ents = {"input steroid": ["Hydrocortisone PO", 20, "mg"], "target steroid": "PredniSONE PO"}
    bench, pub = both(SC, ents)
    assert pub == pytest.approx(5.0, abs=1e-9)
    assert bench == pytest.approx(5.0018, abs=1e-9)


@pytest.mark.deviation("morphine-milligram-equivalents", "fentanyl-patch-in-mg")
def test_fentanyl_patch_is_micrograms_per_hour_when_published():
    ents = {"FentANYL patch Dose": [25, "µg"], "FentANYL patch Dose Per Day": [1, "per day"]}
    bench, pub = both(MME, ents)
    assert bench == pytest.approx(0.025 * 2.4)  # the benchmark reads 25 µg as 0.025 mg
    assert pub == pytest.approx(25 * 2.4)  # CDC 2022: 25 µg/h x 2.4 = 60 MME/day
    assert pub / bench == pytest.approx(1000)


@pytest.mark.deviation("morphine-milligram-equivalents", "buprenorphine-factor")
def test_buprenorphine_has_no_published_factor():
    ents = {"Buprenorphine Dose": [0.2, "mg"], "Buprenorphine Dose Per Day": [2, "per day"],
            "Morphine Dose": [10, "mg"], "Morphine Dose Per Day": [2, "per day"]}
    assert compute(MME, ents, variant="benchmark").value == pytest.approx(0.2 * 2 * 10 + 20)
    with pytest.raises(BadValue) as e:
        compute(MME, ents, variant="published")
    assert (e.value.calculator, e.value.variable) == (MME, "Buprenorphine Dose")
    assert "CDC" in str(e.value)


# ----------------------------------------------------------------------------- hand-computed values


def test_mme_by_hand():
    # oxymorphone 10 mg x 1 x 3 + buccal fentanyl 20 µg x 1 x 0.13 + morphine 50 mg x 1 = 82.6
    ents = {"OxyMORphone Dose": [10, "mg"], "OxyMORphone Dose Per Day": [1, "per day"],
            "FentaNYL buccal Dose": [20, "µg"], "FentaNYL buccal Dose Per Day": [1, "per day"],
            "Morphine Dose": [50, "mg"], "Morphine Dose Per Day": [1, "per day"]}
    for v in both(MME, ents):
        assert v == pytest.approx(82.6, abs=1e-9)
    # buccal fentanyl given in mg is converted to µg
    assert compute(MME, {"FentaNYL buccal Dose": [0.2, "mg"], "FentaNYL buccal Dose Per Day": [2, "per day"]}, variant="benchmark").value \
        == pytest.approx(200 * 2 * 0.13)


# ----------------------------------------------------------------------------- (b) invariants

kg_s = st.floats(min_value=0.5, max_value=200, allow_nan=False)


@FAST
@given(kg=kg_s, extra=st.floats(min_value=0.01, max_value=50, allow_nan=False), variant=st.sampled_from(["benchmark", "published"]))
def test_maintenance_fluids_increase_with_weight(kg, extra, variant):
    a = compute(MF, {"weight": [kg, "kg"]}, variant=variant).value
    b = compute(MF, {"weight": [kg + extra, "kg"]}, variant=variant).value
    assert b > a


@pytest.mark.parametrize("edge", [10, 20])
@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_maintenance_fluids_continuous_at_band_edges(edge, variant):
    lo = compute(MF, {"weight": [edge - 1e-6, "kg"]}, variant=variant).value
    at = compute(MF, {"weight": [edge, "kg"]}, variant=variant).value
    hi = compute(MF, {"weight": [edge + 1e-6, "kg"]}, variant=variant).value
    assert lo == pytest.approx(at, abs=1e-4) and hi == pytest.approx(at, abs=1e-4)


@FAST
@given(kg=st.floats(min_value=1, max_value=200, allow_nan=False))
def test_maintenance_fluids_unit_equivalents(kg):
    a = compute(MF, {"weight": [kg, "kg"]}, variant="benchmark").value
    b = compute(MF, {"weight": [kg * 1000, "g"]}, variant="benchmark").value
    assert b == pytest.approx(a, rel=1e-4)


@FAST
@given(a=st.sampled_from(STEROIDS), b=st.sampled_from(STEROIDS), mg=st.floats(min_value=0.5, max_value=1000, allow_nan=False))
def test_steroid_published_matches_equivalent_dose_ratio_and_round_trips(a, b, mg):
    out = compute(SC, {"input steroid": [a, mg, "mg"], "target steroid": b}, variant="published").value
    expected = mg * EQUIVALENT_MG[b.rsplit(" ", 1)[0]] / EQUIVALENT_MG[a.rsplit(" ", 1)[0]]
    assert out == pytest.approx(expected, rel=1e-5, abs=1e-5)
    bench = compute(SC, {"input steroid": [a, mg, "mg"], "target steroid": b}, variant="benchmark").value
    assert bench == pytest.approx(expected, rel=2e-3, abs=1e-4)  # the rounded factors stay within 0.2 %


@FAST
@given(a=st.sampled_from(STEROIDS), mg=st.floats(min_value=0.5, max_value=1000, allow_nan=False))
def test_steroid_same_drug_and_unit_equivalents(a, mg):
    assert compute(SC, {"input steroid": [a, mg, "mg"], "target steroid": a}, variant="benchmark").value == pytest.approx(mg, abs=1e-5)
    g = compute(SC, {"input steroid": [a, mg / 1000, "g"], "target steroid": "PredniSONE PO"}, variant="benchmark").value
    m = compute(SC, {"input steroid": [a, mg, "mg"], "target steroid": "PredniSONE PO"}, variant="benchmark").value
    assert g == pytest.approx(m, rel=1e-3, abs=1e-4)


DRUGS = ["Codeine", "HYDROcodone", "HYDROmorphone", "Methadone", "Morphine", "OxyCODONE", "OxyMORphone",
         "Tapentadol", "TraMADol"]


@FAST
@given(doses=st.dictionaries(st.sampled_from(DRUGS), st.tuples(st.floats(min_value=0.5, max_value=200, allow_nan=False),
                                                                   st.integers(min_value=1, max_value=6)), min_size=1),
       variant=st.sampled_from(["benchmark", "published"]))
def test_mme_is_the_sum_of_each_drug(doses, variant):
    ents = {}
    for d, (amount, n) in doses.items():
        ents[f"{d} Dose"] = [amount, "mg"]
        ents[f"{d} Dose Per Day"] = [n, "per day"]
    total = compute(MME, ents, variant=variant).value
    parts = sum(compute(MME, {f"{d} Dose": ents[f"{d} Dose"], f"{d} Dose Per Day": ents[f"{d} Dose Per Day"]},
                        variant=variant).value for d in doses)
    assert total == pytest.approx(parts, abs=1e-4 * len(doses))
    assert total > 0


# ----------------------------------------------------------------------------- (c) bad input and (d) reference crashes

MORPHINE = {"Morphine Dose": [10, "mg"], "Morphine Dose Per Day": [2, "per day"]}
PRED = {"input steroid": ["PredniSONE PO", 10, "mg"], "target steroid": "Dexamethasone PO"}


@pytest.mark.parametrize("slug, ents, error, variable", [
    (MF, {}, MissingInput, "weight"),
    (MF, {"weight": [70, "stone"]}, UnknownUnit, "weight"),
    (MF, {"weight": ["70", "kg"]}, BadValue, "weight"),
    (MF, {"weight": [0, "kg"]}, OutOfRange, "weight"),
    (MF, {"weight": [70, "kg"], "height": [170, "cm"]}, UnknownInput, "height"),
    (SC, {"target steroid": "PredniSONE PO"}, MissingInput, "input steroid"),
    (SC, {**PRED, "input steroid": ["Prednisone PO", 10, "mg"]}, BadValue, "input steroid"),
    (SC, {**PRED, "input steroid": ["PredniSONE PO", 10, "mcg"]}, UnknownUnit, "input steroid"),
    (SC, {**PRED, "input steroid": ["PredniSONE PO", 10, "mmol"]}, UnknownUnit, "input steroid"),
    (SC, {**PRED, "input steroid": ["PredniSONE PO", "10", "mg"]}, BadValue, "input steroid"),
    (SC, {**PRED, "input steroid": ["PredniSONE PO", 10]}, BadValue, "input steroid"),
    (SC, {**PRED, "input steroid": ["PredniSONE PO", 0, "mg"]}, OutOfRange, "input steroid"),
    (SC, {**PRED, "input steroid": ["PredniSONE PO", 50, "g"]}, OutOfRange, "input steroid"),
    (SC, {**PRED, "target steroid": "Dexamethasone"}, BadValue, "target steroid"),
    (SC, {**PRED, "route": "PO"}, UnknownInput, "route"),
    # the reference's own branch spelling crashes it with KeyError; we refuse it by name
    (MME, {"FentaNYL patch Dose": [25, "µg"], "FentaNYL patch Dose Per Day": [1, "per day"]}, UnknownInput, "FentaNYL patch Dose"),
    (MME, {"Fentanyl Dose": [25, "µg"], "Fentanyl Dose Per Day": [1, "per day"]}, UnknownInput, "Fentanyl Dose"),
    (MME, {"Morphine Dose": [10, "mg"]}, MissingInput, "Morphine Dose Per Day"),
    (MME, {"Morphine Dose Per Day": [2, "per day"]}, MissingInput, "Morphine Dose"),
    (MME, {}, MissingInput, None),
    (MME, {**MORPHINE, "Morphine Dose": [10, "mcg"]}, UnknownUnit, "Morphine Dose"),
    (MME, {**MORPHINE, "Morphine Dose": [10, "mg/dL"]}, UnknownUnit, "Morphine Dose"),
    (MME, {**MORPHINE, "Morphine Dose Per Day": [2, "daily"]}, UnknownUnit, "Morphine Dose Per Day"),
    (MME, {**MORPHINE, "Morphine Dose": ["10", "mg"]}, BadValue, "Morphine Dose"),
    (MME, {**MORPHINE, "Morphine Dose": 10}, BadValue, "Morphine Dose"),
    (MME, {**MORPHINE, "Morphine Dose Per Day": 2}, BadValue, "Morphine Dose Per Day"),
    (MME, {**MORPHINE, "Morphine Dose": [-10, "mg"]}, OutOfRange, "Morphine Dose"),
    (MME, {**MORPHINE, "Morphine Dose Per Day": [100, "per day"]}, OutOfRange, "Morphine Dose Per Day"),
    (MME, {"FentANYL patch Dose": [25, "mg"], "FentANYL patch Dose Per Day": [1, "per day"]}, OutOfRange, "FentANYL patch Dose"),
])
def test_bad_input_is_refused(slug, ents, error, variable):
    for variant in ("benchmark", "published"):
        raises_calc_error(error, slug, ents, variable, variant)
