"""Every number the library converts with comes from formulas/units.yaml: perturb each factor, the answer moves.

The library reads units from the registry object it is given, so each factor is changed in memory
on a freshly validated registry (a changed units.yaml on disk would, rightly, make the library
refuse until the change is released). For each factor the probes are the reference cases whose
inputs use it, in both variants; at least one answer must move.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest

from registry.loader import load
from registry.model import Registry
from registry.schema import UnitsFile
from registry.validate import validate
from solver.data import REFERENCE_CASES, Case, read_cases
from solver.library import CalculatorError, compute
from tests.helpers import SHIPPED_ROOT

CASES = read_cases(REFERENCE_CASES)


def _fresh() -> Registry:
    reg = load(SHIPPED_ROOT)
    validate(reg)
    assert not reg.problems, reg.problems[:3]
    return reg


BASE = _fresh()
assert BASE.units is not None
UNITS: dict[str, Any] = BASE.units.model_dump(mode="json", exclude={"deviations"})


def factors(data: dict[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for k, v in data.items():
        if isinstance(v, dict):
            yield from factors(v, prefix + (k,))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            yield prefix + (k,)


def _perturbed(path: tuple[str, ...]) -> UnitsFile:
    data = json.loads(json.dumps(UNITS))
    node = data
    for k in path[:-1]:
        node = node[k]
    v = node[path[-1]]
    # whole numbers halve (fewer digits show where more may not), small ones grow; other factors move by 37 %
    node[path[-1]] = (v // 2 if v > 2 else v + 1) if isinstance(v, int) else v * 1.37
    data["deviations"] = []
    return UnitsFile.model_validate(data)


def _mentions(case: Case, words: tuple[str, ...]) -> bool:
    text = json.dumps(case.entities, ensure_ascii=False)
    return any(w in text for w in words)


def _probes(path: tuple[str, ...]) -> list[Case]:
    """The reference cases that exercise a factor (a generous filter; the check itself is the answer moving)."""
    section, key = path[0], path[1]
    words: tuple[str, ...]
    if section == "rounding":  # small intermediates (µmol, mmol) meet the significant-digit rule
        return [c for c in CASES if _mentions(c, ("µmol", "mmol"))] + CASES[::40]
    if section == "analytes":
        slugs = {c.slug for c in BASE.calculators.values() if any(i.analyte == key for i in c.inputs)}
        return [c for c in CASES if BASE.by_id(c.calculator_id).slug in slugs]
    if section == "age":
        words = {"months_per_year": ("months",), "weeks_per_year": ("weeks", "days"), "days_per_week": ("days",)}[key]
    elif section == "temperature":
        words = ("fahrenheit", "°F")
    elif section == "length":
        words = ('"ft"', '"in"', '"m"', '"cm"')
    else:
        words = (f'"{key}"', f'{key}/', f'/{key}"')
    return [c for c in CASES if _mentions(c, words)]


# Probes built from a reference case with one input replaced, for factors the reference cases reach
# only at magnitudes where the change cannot show: (calculator id, inputs to replace).
SYNTHETIC: dict[tuple[str, ...], tuple[int, dict[str, Any]]] = {
    # 88.123 µmol/L is 8.8123e-5 mol/L: below `small_below`, so rounded to significant digits
    ("rounding", "significant_digits"): (2, {"creatinine": [88.123, "µmol/L"]}),
    # 5000 days is 13.7 years at 52 x 7 days a year (Centor's 3-14 band), 32.1 at 52 x 3 (15-44)
    ("age", "days_per_week"): (20, {"age": [5000, "days"]}),
}


def _synthetic(path: tuple[str, ...]) -> list[Case]:
    if path not in SYNTHETIC:
        return []
    cid, change = SYNTHETIC[path]
    case = next(c for c in CASES if c.calculator_id == cid)
    return [dataclasses.replace(case, entities=dict(case.entities, **change))]


def _answer(reg: Registry, case: Case, variant: str) -> Any:
    try:
        return compute(case.calculator_id, case.entities, variant=variant, registry=reg).value
    except CalculatorError as e:
        return type(e).__name__


def _moves(base: Registry, changed: Registry, probes: list[Case]) -> bool:
    """Whether any probe's answer differs (stops at the first that does)."""
    return any(_answer(base, case, v) != _answer(changed, case, v) for case in probes
               for v in ("benchmark", "published"))


# Factors the library provably never converts with today: no input lists a unit that needs them
# (see `accepted_units` in formulas/*.yaml). They are kept because they are the benchmark reference's
# own data, ready for an input that accepts such a unit; the test fails as soon as one is used, so
# the entry then moves to the checked list.
UNUSED: dict[tuple[str, ...], str] = {
    ("mass", "kg"): "no concentration input accepts kg per volume",
    ("amount", "pmol"): "insulin in pmol/L is converted by HOMA-IR's own constant, not by molar mass",
    ("volume", "mL"): "no concentration or count input accepts a per-mL unit (insulin per mL is a measurement)",
    ("volume", "cm^3"): "no count input accepts per cm^3",
    ("volume", "m^3"): "no count input accepts per m^3",
    ("analytes", "sodium", "molar_mass"): "sodium is accepted in mEq/L and mmol/L only (valence, not mass)",
    ("analytes", "potassium", "molar_mass"): "potassium is accepted in mEq/L and mmol/L only",
    ("analytes", "chloride", "molar_mass"): "chloride is accepted in mEq/L and mmol/L only",
    ("analytes", "bicarbonate", "molar_mass"): "bicarbonate is accepted in mEq/L and mmol/L only",
    ("analytes", "hemoglobin", "molar_mass"): "hemoglobin is accepted in g/dL and g/L only",
}

PATHS = list(factors(UNITS))


@pytest.mark.parametrize("path", PATHS, ids=[".".join(p) for p in PATHS])
def test_perturbing_a_factor_moves_an_answer(path: tuple[str, ...]) -> None:
    probes = _synthetic(path) + _probes(path)
    changed = dataclasses.replace(BASE, units=_perturbed(path), hashes={})  # validated, with other unit data
    moved = _moves(BASE, changed, probes)
    if path in UNUSED:
        assert not moved, f"{'.'.join(path)} is now used: remove it from UNUSED"
        return
    assert probes, f"no reference case uses {'.'.join(path)}"
    assert moved, f"changing {'.'.join(path)} in units.yaml moves no answer of {len(probes)} cases"
