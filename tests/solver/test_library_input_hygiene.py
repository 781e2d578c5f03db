"""Inputs that look right but are not (issue 21): NaN and infinity, and the Greek mu in a unit.

Every numeric input of every calculator, given as NaN or +-infinity, is refused in both variants with
"expected a finite number" (never a Python message such as "cannot convert float NaN to integer").
A unit written with the Greek mu (U+03BC) reads as the registry's micro sign (U+00B5); any other
lookalike character is refused with a message that names it.
"""
from __future__ import annotations

import copy
import unicodedata
from functools import lru_cache
from typing import Any

import pytest

from registry.loader import get_registry
from solver.data import REFERENCE_CASES, read_cases
from solver.library import BadValue, CalculatorError, UnknownUnit, compute
from solver.library.units import normalise_unit

# successors have no reference cases of their own: a valid base for each, else the first case that fits
SUCCESSOR_BASES: dict[str, dict[str, Any]] = {
    "meld-3-0": {"creatinine": [1.4, "mg/dL"], "Bilirubin": [2.1, "mg/dL"], "international normalized ratio": 1.6,
                 "Sodium": [131, "mEq/L"], "Albumin": [2.9, "g/dL"], "sex": "Female", "age": [50, "years"]},
    # preventr's README example (tests/solver/test_library_prevent.py)
    "prevent-10-year": {"sex": "Female", "age": [50, "years"], "Total cholesterol": [200, "mg/dL"],
                        "high-density lipoprotein cholesterol": [45, "mg/dL"], "Systolic Blood Pressure": [160, "mm Hg"],
                        "Blood pressure being treated with medicines": True, "Diabetes history": True,
                        "estimated glomerular filtration rate": [90, "mL/min/1.73 m²"],
                        "Body Mass Index (BMI)": [35, "kg/m^2"]},
}
NON_FINITE = (float("nan"), float("inf"), float("-inf"))


def _works(slug: str, ents: dict[str, Any]) -> bool:
    try:
        for variant in ("benchmark", "published"):
            compute(slug, ents, variant=variant)
    except CalculatorError:
        return False
    return True


@lru_cache(maxsize=1)
def bases() -> dict[str, dict[str, Any]]:
    """One input block per calculator that both variants compute."""
    reg = get_registry()
    cases = read_cases(REFERENCE_CASES)
    out = dict(SUCCESSOR_BASES)
    for slug, calc in reg.calculators.items():
        if slug in out:
            continue
        names = {i.name for i in calc.inputs}
        own = [c for c in cases if c.calculator_id == calc.medcalc_id] or cases
        for case in own:
            ents = {k: v for k, v in case.entities.items() if k in names}
            if ents and _works(slug, ents):
                out[slug] = ents
                break
    return out


def test_every_calculator_has_a_base():
    assert set(bases()) == set(get_registry().calculators)


def _numeric_slots(ents: dict[str, Any]):
    """(input, replace) for every number in the block: a bare number, or the value of [value, unit] pairs."""
    for k, v in ents.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            yield k, lambda x, k=k: {**ents, k: x}
        elif isinstance(v, list) and v and isinstance(v[0], (int, float)) and not isinstance(v[0], bool):
            yield k, lambda x, k=k, v=v: {**ents, k: [x, *v[1:]]}


def test_non_finite_numbers_are_refused_as_not_finite_by_every_calculator():
    reg = get_registry()
    wrong, checked = [], 0
    for slug, ents in sorted(bases().items()):
        unused = {i.name for i in reg.calculators[slug].inputs if i.used is False}
        for name, replace in _numeric_slots(copy.deepcopy(ents)):
            if name in unused:
                continue  # declared but never read (RCRI's age): nothing to refuse
            for x in NON_FINITE:
                for variant in ("benchmark", "published"):
                    checked += 1
                    try:
                        compute(slug, replace(x), variant=variant)
                        wrong.append((slug, name, x, variant, "computed"))
                    except BadValue as e:
                        if "expected a finite number" not in e.message or e.variable != name:
                            wrong.append((slug, name, x, variant, str(e)))
                    except CalculatorError as e:
                        wrong.append((slug, name, x, variant, f"{type(e).__name__}: {e}"))
    assert checked > 500
    assert not wrong, wrong[:5]


def test_bmi_nan_says_finite_not_a_python_conversion_error():
    ents = {"weight": [float("nan"), "kg"], "height": [170, "cm"]}
    for variant in ("benchmark", "published"):
        with pytest.raises(BadValue, match="expected a finite number") as e:
            compute("body-mass-index", ents, variant=variant)
        assert "cannot convert" not in str(e.value)


MELD3 = SUCCESSOR_BASES["meld-3-0"]


@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_greek_mu_reads_as_the_micro_sign(variant):
    micro = compute("meld-3-0", {**MELD3, "creatinine": [123.8, "\u00b5mol/L"]}, variant=variant)
    mu = compute("meld-3-0", {**MELD3, "creatinine": [123.8, "\u03bcmol/L"]}, variant=variant)
    assert mu.value == micro.value
    assert mu.inputs["creatinine"].value == micro.inputs["creatinine"].value
    assert normalise_unit("\u03bcmol/L") == normalise_unit("\u00b5mol/L") == "\u00b5mol/L"
    assert normalise_unit("\uff4dg/dL") == "mg/dL"  # full-width m


def test_other_lookalikes_are_refused_with_a_message_naming_the_character():
    cyrillic = "\u043cmol/L"  # Cyrillic em, looks like m
    with pytest.raises(UnknownUnit, match="U\\+043C CYRILLIC SMALL LETTER EM") as e:
        compute("meld-3-0", {**MELD3, "creatinine": [123.8, cyrillic]}, variant="benchmark")
    assert e.value.variable == "creatinine"


def test_every_registry_unit_spelling_is_stable_under_normalisation():
    """Normalising a given unit can never turn a registry spelling into something the registry lacks."""
    for calc in get_registry().calculators.values():
        for inp in calc.inputs:
            for u in [*(inp.accepted_units or []), *([inp.unit] if inp.unit else [])]:
                assert normalise_unit(u) == u, (calc.slug, inp.name, u, unicodedata.normalize("NFKC", u))
