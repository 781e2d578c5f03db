"""What `compute` keeps between calls (the plan's constants, bands and lookups; the converters' unit ratios) follows
the entry and the unit data in hand: an edited copy computes from its own numbers, and the original is unchanged."""
from __future__ import annotations

import dataclasses

import pytest

from registry.loader import get_registry
from solver.library import compute

CHA2DS2 = {"age": [70, "years"], "sex": "Male", "Congestive Heart Failure": False, "Hypertension history": True,
           "Stroke": False, "Transient Ischemic Attacks History": False, "Thromboembolism history": False,
           "Vascular disease history": False, "Diabetes history": False}
CKD = {"age": [60, "years"], "sex": "Male", "creatinine": [97.0, "µmol/L"]}


def _with_table(slug: str, name: str, **update: object):
    reg = get_registry()
    calc = reg.calculators[slug]
    table = calc.tables[name].model_copy(update=update)
    edited = calc.model_copy(update={"tables": {**calc.tables, name: table}})
    return reg, dataclasses.replace(reg, calculators={**reg.calculators, slug: edited}, hashes={})


@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_an_edited_band_table_is_read_from_the_copy(variant):
    reg, _ = _with_table("cha2ds2-vasc", "age_points")
    bands = reg.calculators["cha2ds2-vasc"].tables["age_points"].bands
    assert bands is not None
    moved = [b.model_copy(update={"value": b.value + 10}) for b in bands]
    reg, other = _with_table("cha2ds2-vasc", "age_points", bands=moved)
    base = compute("cha2ds2-vasc", CHA2DS2, variant=variant, registry=reg).value
    assert compute("cha2ds2-vasc", CHA2DS2, variant=variant, registry=other).value == base + 10
    assert compute("cha2ds2-vasc", CHA2DS2, variant=variant, registry=reg).value == base  # the original is unchanged


def test_an_edited_points_table_is_read_from_the_copy():
    reg = get_registry()
    points = reg.calculators["cha2ds2-vasc"].tables["points"].points
    assert points is not None
    reg, other = _with_table("cha2ds2-vasc", "points", points={**points, "Hypertension history": 7})
    base = compute("cha2ds2-vasc", CHA2DS2, registry=reg, variant="benchmark").value
    assert compute("cha2ds2-vasc", CHA2DS2, registry=other, variant="benchmark").value == base - points["Hypertension history"] + 7
    assert compute("cha2ds2-vasc", CHA2DS2, registry=reg, variant="benchmark").value == base


@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_edited_unit_data_gets_its_own_conversion_factors(variant):
    reg = get_registry()
    assert reg.units is not None
    base = compute("ckd-epi-2021", CKD, variant=variant, registry=reg)
    amount = {**reg.units.amount, "µmol": reg.units.amount["µmol"] * 2}  # a µmol twice as large: twice the creatinine
    other = dataclasses.replace(reg, units=reg.units.model_copy(update={"amount": amount}))
    moved = compute("ckd-epi-2021", CKD, variant=variant, registry=other)
    # (the benchmark variant rounds each conversion step, so "twice" holds to its rounding, within a few per cent)
    assert moved.inputs["creatinine"].value == pytest.approx(2 * base.inputs["creatinine"].value, rel=0.05)
    assert moved.value < base.value
    again = compute("ckd-epi-2021", CKD, variant=variant, registry=reg)  # the first unit data's factors still apply
    assert (again.value, again.inputs["creatinine"].value) == (base.value, base.inputs["creatinine"].value)
