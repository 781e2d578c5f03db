"""The anion-gap family (solver/library/calculators/acid_base.py): one shared anion-gap
definition, clinical invariants, and refusal of bad input."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.library import BadValue, MissingInput, OutOfRange, UnknownInput, UnknownUnit, compute
from solver.library.core import get_registry
from tests.solver.helpers import raises_calc_error as _raises

FAST = settings(max_examples=60, deadline=None)
FAMILY = ["anion-gap", "delta-gap", "delta-ratio", "albumin-corrected-anion-gap", "albumin-corrected-delta-gap",
          "albumin-corrected-delta-ratio"]
WITH_ALBUMIN = {"albumin-corrected-anion-gap", "albumin-corrected-delta-gap", "albumin-corrected-delta-ratio"}


def ents(na=140.0, cl=100.0, hco3=14.0, alb=None, unit="mEq/L", alb_unit="g/dL"):
    e = {"Sodium": [na, unit], "Chloride": [cl, unit], "Bicarbonate": [hco3, unit]}
    if alb is not None:
        e["Albumin"] = [alb, alb_unit]
    return e


def val(slug, e, variant="benchmark"):
    if slug not in WITH_ALBUMIN:  # the plain members refuse an albumin they do not use
        e = {k: v for k, v in e.items() if k != "Albumin"}
    return compute(slug, e, variant=variant).value


def test_worked_values():
    e = ents(140, 100, 14, alb=2.0)
    ag = 140 - (100 + 14)  # 26
    acag = ag + 2.5 * (4 - 2.0)  # 31
    assert val("anion-gap", e) == pytest.approx(ag)
    assert val("delta-gap", e) == pytest.approx(ag - 12)
    assert val("delta-ratio", e) == pytest.approx((ag - 12) / (24 - 14))
    assert val("albumin-corrected-anion-gap", e) == pytest.approx(acag)
    assert val("albumin-corrected-delta-gap", e) == pytest.approx(acag - 12)
    assert val("albumin-corrected-delta-ratio", e) == pytest.approx((acag - 12) / (24 - 14))


def test_family_shares_one_anion_gap_definition():
    reg = get_registry()
    for slug in FAMILY[1:]:
        deps, seen = list(reg.calculators[slug].depends_on), set()
        while deps:  # the anion gap is reached through depends_on, directly or transitively
            d = deps.pop()
            if d not in seen:
                seen.add(d)
                deps.extend(reg.calculators[d].depends_on)
        assert "anion-gap" in seen, slug
    for slug in FAMILY:
        assert "normal_anion_gap" not in reg.calculators[slug].constants or slug.endswith("delta-gap")


def test_no_deviations_recorded_and_variants_agree():
    e = ents(138, 101, 17, alb=3.1)
    for slug in FAMILY:
        assert not get_registry().calculators[slug].deviations
        assert val(slug, e) == pytest.approx(val(slug, e, "published"), rel=1e-6)


# --------------------------------------------------------------------------- (b) invariants

na_s = st.floats(120, 165)
cl_s = st.floats(70, 130)
hco3_s = st.floats(3, 40).filter(lambda x: abs(x - 24) > 0.05)
alb_s = st.floats(1, 6)


@FAST
@given(na=na_s, cl=cl_s, hco3=hco3_s, alb=alb_s)
def test_family_identities(na, cl, hco3, alb):
    e = ents(na, cl, hco3, alb)
    ag = val("anion-gap", ents(na, cl, hco3))
    assert ag == pytest.approx(na - cl - hco3, abs=1e-4)
    assert val("delta-gap", ents(na, cl, hco3)) == pytest.approx(ag - 12, abs=1e-4)
    acag = val("albumin-corrected-anion-gap", e)
    assert (acag - ag) * (4 - alb) >= -1e-4  # low albumin raises the corrected gap
    assert val("albumin-corrected-delta-gap", e) == pytest.approx(acag - 12, abs=1e-4)
    assert val("delta-ratio", ents(na, cl, hco3)) * (24 - hco3) == pytest.approx(ag - 12, abs=1e-3)
    assert val("albumin-corrected-delta-ratio", e) * (24 - hco3) == pytest.approx(acag - 12, abs=1e-3)


@FAST
@given(na=na_s, cl=cl_s, hco3=hco3_s)
def test_albumin_at_normal_changes_nothing(na, cl, hco3):
    e = ents(na, cl, hco3, 4.0)
    assert val("albumin-corrected-anion-gap", e, "published") == pytest.approx(
        val("anion-gap", ents(na, cl, hco3), "published"), abs=1e-6)


@FAST
@given(na=na_s, cl=cl_s, hco3=hco3_s, alb=alb_s)
def test_unit_equivalence(na, cl, hco3, alb):
    for slug in FAMILY:
        a = val(slug, ents(na, cl, hco3, alb if slug in WITH_ALBUMIN else None))
        b = val(slug, ents(na, cl, hco3, alb * 10 if slug in WITH_ALBUMIN else None, unit="mmol/L", alb_unit="g/L"))
        assert b == pytest.approx(a, rel=1e-4, abs=1e-4)


@FAST
@given(na=na_s, cl=cl_s, hco3=hco3_s, d=st.floats(0.1, 10))
def test_anion_gap_increases_with_sodium(na, cl, hco3, d):
    assert val("anion-gap", ents(na + d if na + d <= 200 else na, cl, hco3)) >= val("anion-gap", ents(na, cl, hco3))


# --------------------------------------------------------------------------- (c) bad input


def good(slug):
    return ents(140, 100, 14, 3.0 if slug in WITH_ALBUMIN else None)



@pytest.mark.parametrize("slug", FAMILY)
def test_missing_required(slug):
    e = good(slug)
    del e["Chloride"]
    _raises(MissingInput, slug, e, "Chloride")


@pytest.mark.parametrize("slug", FAMILY)
def test_unknown_key(slug):
    _raises(UnknownInput, slug, {**good(slug), "Potassium": [4, "mEq/L"]}, "Potassium")


def test_albumin_is_unknown_to_the_plain_anion_gap():
    _raises(UnknownInput, "anion-gap", ents(140, 100, 14, 3.0), "Albumin")


@pytest.mark.parametrize("slug", FAMILY)
@pytest.mark.parametrize("unit", ["mEq", "meq/dL", "mg%", "mmol"])  # "meq/L", "mg/dl": read without case
def test_unknown_unit(slug, unit):
    _raises(UnknownUnit, slug, {**good(slug), "Sodium": [140, unit]}, "Sodium")


@pytest.mark.parametrize("slug", sorted(WITH_ALBUMIN))
def test_unknown_albumin_unit(slug):
    _raises(UnknownUnit, slug, {**good(slug), "Albumin": [3, "g%"]}, "Albumin")


@pytest.mark.parametrize("slug", FAMILY)
@pytest.mark.parametrize("bad", [140, "140", ["140", "mEq/L"], [False, "mEq/L"], [140, "mEq/L", 1]])
def test_wrong_type(slug, bad):
    _raises(BadValue, slug, {**good(slug), "Sodium": bad}, "Sodium")


@pytest.mark.parametrize("slug", FAMILY)
@pytest.mark.parametrize("key,value", [("Sodium", [14, "mEq/L"]), ("Bicarbonate", [0, "mEq/L"]),
                                       ("Chloride", [1000, "mmol/L"])])
def test_out_of_range(slug, key, value):
    _raises(OutOfRange, slug, {**good(slug), key: value}, key)


@pytest.mark.parametrize("slug", sorted(WITH_ALBUMIN))
def test_albumin_out_of_range(slug):
    _raises(OutOfRange, slug, {**good(slug), "Albumin": [30, "g/dL"]}, "Albumin")


# --------------------------------------------------------------------------- (d) inputs that crash the reference


@pytest.mark.parametrize("slug", ["delta-ratio", "albumin-corrected-delta-ratio"])
@pytest.mark.parametrize("variant", ["benchmark", "published"])
@pytest.mark.parametrize("unit", ["mEq/L", "mmol/L"])
def test_bicarbonate_24_is_a_clear_error(slug, variant, unit):
    e = {**good(slug), "Bicarbonate": [24, unit]}
    with pytest.raises(OutOfRange) as exc:
        compute(slug, e, variant=variant)
    assert exc.value.calculator == slug and exc.value.variable == "Bicarbonate"


@pytest.mark.parametrize("slug", sorted(WITH_ALBUMIN))
def test_albumin_in_micromoles_is_converted(slug):
    # 600 µmol/L x 66 500 g/mol = 39.9 g/L = 3.99 g/dL (the reference crashes: no molar mass)
    by_mass = val(slug, {**good(slug), "Albumin": [3.99, "g/dL"]}, "published")
    by_moles = val(slug, {**good(slug), "Albumin": [600, "µmol/L"]}, "published")
    assert by_moles == pytest.approx(by_mass, rel=1e-6)
    assert val(slug, {**good(slug), "Albumin": [600, "µmol/L"]}) == pytest.approx(by_mass, rel=1e-3)
