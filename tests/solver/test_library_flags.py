"""Criteria read many at a time (`Context.flags`) and summed from a points table (`Context.points`).

Wells DVT's value is checked against a sum worked out here from the registry's own points table (the one source of
its numbers), for any mix of criteria given as booleans, as the strings 'True'/'False', as None or left out; every
criterion read is recorded; a value that is not a flag is refused naming it, the first in reading order.
"""
from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from registry.loader import get_registry
from solver.library import compute
from solver.library.errors import BadValue

SLUG = "wells-dvt"
CALC = get_registry().calculators[SLUG]
POINTS: dict[str, Any] = CALC.tables["points"].points or {}
NAMES = [i.name for i in CALC.inputs]
COMBINED = ("Bedridden recently >3 days", "Major surgery within 12 weeks")  # one criterion, counted once
FORMS = {True: [True, "True"], False: [False, "False", None, "absent"]}


def _expected(met: dict[str, bool]) -> int:
    total = sum(POINTS[n] for n, yes in met.items() if yes and n not in COMBINED)
    return total + (POINTS["bedridden or recent major surgery"] if any(met[n] for n in COMBINED) else 0)


@settings(max_examples=150, deadline=None)
@given(st.fixed_dictionaries({n: st.tuples(st.booleans(), st.integers(0, 3)) for n in NAMES}))
def test_wells_dvt_is_the_sum_of_the_registry_points_of_the_criteria_met(draw: dict[str, tuple[bool, int]]) -> None:
    entities: dict[str, Any] = {}
    for name, (met, k) in draw.items():
        form = FORMS[met][k % len(FORMS[met])]
        if form != "absent":
            entities[name] = form
    met = {n: m for n, (m, _) in draw.items()}
    for variant in ("benchmark", "published"):
        r = compute(SLUG, entities, variant=variant)
        assert r.value == _expected(met)
        assert {n: rec.value for n, rec in r.inputs.items()} == met  # every criterion read, absent ones as False
        for n, rec in r.inputs.items():
            assert rec.given == (entities[n] if entities.get(n) is not None else False)


@pytest.mark.parametrize("bad", [2, -1, "maybe", "oui", [True], 1.0])  # yes/no codes are read (test_spelling)
def test_a_value_that_is_not_a_flag_is_refused_naming_the_first_in_reading_order(bad: Any) -> None:
    entities = {NAMES[3]: bad, NAMES[7]: "perhaps", NAMES[0]: True}
    with pytest.raises(BadValue) as e:
        compute(SLUG, entities, variant="benchmark")
    assert e.value.variable == NAMES[3]  # Wells DVT reads it before NAMES[7]
    assert "expected true/false" in e.value.message


def test_points_of_a_criterion_the_table_lacks_are_the_lookup_default_or_refused() -> None:
    from solver.library.context import Context
    from solver.library.core import _compute

    ctx = Context(CALC, {}, "benchmark", get_registry(), _compute)
    assert ctx.points({"Active cancer": True, "Entire Leg Swollen": False}) == POINTS["Active cancer"]
    with pytest.raises(BadValue, match="not one of"):
        ctx.points({"no such criterion": True})
    assert ctx.points({"no such criterion": False}) == 0  # not met: never looked up
