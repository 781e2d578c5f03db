"""The registry's models are frozen (registry.schema.Strict): a loaded entry cannot be edited in place, so neither the
plan `compute` keeps per entry (solver.library.calculator_plan) nor a content hash worked out from it can come to describe other
content. An edit is a copy (`model_copy(update=...)`): a new entry, with a plan and a content hash of its own."""
from __future__ import annotations

import dataclasses

import pytest
from pydantic import ValidationError

from registry.loader import get_registry
from registry.versions import active_hash, content, content_hash, released_content
from solver.library import compute
from solver.library.calculator_plan import plan

SLUG = "cha2ds2-vasc"
CHA2DS2 = {"age": [70, "years"], "sex": "Male", "Congestive Heart Failure": False, "Hypertension history": True,
           "Stroke": False, "Transient Ischemic Attacks History": False, "Thromboembolism history": False,
           "Vascular disease history": False, "Diabetes history": False}


def _frozen(e: pytest.ExceptionInfo[ValidationError]) -> bool:
    return [err["type"] for err in e.value.errors()] == ["frozen_instance"]


def test_assigning_a_field_of_a_loaded_entry_raises_and_changes_nothing():
    reg = get_registry()
    calc = reg.calculators[SLUG]
    name, text, before = calc.name, calc.active.text, content_hash(released_content(reg, calc, calc.active))
    with pytest.raises(ValidationError) as e:
        calc.name = "something else"  # type: ignore[misc]
    assert _frozen(e)
    with pytest.raises(ValidationError) as e:
        calc.active.text = "something else"  # type: ignore[misc]  # a nested model: frozen too
    assert _frozen(e)
    band = calc.tables["age_points"].bands[0]  # type: ignore[index]
    with pytest.raises(ValidationError) as e:
        band.value = 99  # type: ignore[misc]
    assert _frozen(e)
    assert reg.units is not None
    with pytest.raises(ValidationError) as e:
        reg.units.rounding.decimals = 9  # type: ignore[misc]
    assert _frozen(e)
    assert (calc.name, calc.active.text) == (name, text)
    assert content_hash(released_content(reg, calc, calc.active)) == before == active_hash(reg, SLUG)


def test_an_edited_copy_has_its_own_plan_and_content_hash():
    reg = get_registry()
    calc = reg.calculators[SLUG]
    table = calc.tables["points"]
    assert table.points is not None and table.points["Hypertension history"] != 7
    edited = calc.model_copy(update={"tables": {**calc.tables, "points": table.model_copy(
        update={"points": {**table.points, "Hypertension history": 7}})}})

    old_plan, new_plan = plan(calc), plan(edited)
    assert new_plan is not old_plan and new_plan.calc is edited and old_plan.calc is calc
    assert plan(calc) is old_plan  # the entry in hand keeps its plan, which still reads its own numbers
    assert old_plan.maps["points"]["Hypertension history"] == table.points["Hypertension history"]
    assert new_plan.maps["points"]["Hypertension history"] == 7

    assert content_hash(content(edited, edited.active, reg.units)) != content_hash(content(calc, calc.active, reg.units))
    other = dataclasses.replace(reg, calculators={**reg.calculators, SLUG: edited}, hashes={})
    old, new = compute(SLUG, CHA2DS2, registry=reg, variant="benchmark"), compute(SLUG, CHA2DS2, registry=other, variant="benchmark")
    assert old.content_hash == active_hash(reg, SLUG) == content_hash(released_content(reg, calc, calc.active))
    assert new.content_hash == content_hash(released_content(other, edited, edited.active)) != old.content_hash
    assert new.value == old.value - table.points["Hypertension history"] + 7


def test_freezing_leaves_equality_by_value():
    """Frozen pydantic models gain a `__hash__`; equality is still field by field, as before."""
    calc = get_registry().calculators[SLUG]
    assert calc.model_copy(deep=True) == calc and calc.model_copy(deep=True) is not calc
    assert calc.model_copy(update={"name": "other"}) != calc
    band = calc.tables["age_points"].bands[0]  # type: ignore[index]
    assert band == band.model_copy() and hash(band) == hash(band.model_copy())  # a model of plain values hashes
    with pytest.raises(TypeError):
        hash(calc)  # one that holds a list does not (pydantic hashes the field values)
