"""`accepted_units` holds for every input kind: a unit the converter knows but the registry does not list is refused."""
from __future__ import annotations

import pytest

from registry.loader import get_registry
from registry.schema import InputKind
from solver.library import UnknownUnit, compute
from tests.solver.conftest import reference_cases
from tests.solver.helpers import raises_calc_error

CG = "creatinine-clearance-cockcroft-gault"
MAN = {"sex": "Male", "age": [60, "years"], "weight": [90, "kg"], "height": [70, "in"], "creatinine": [1.0, "mg/dL"]}


def test_cockcroft_gault_refuses_an_age_in_days() -> None:
    # the registry lists years, months and weeks only; the benchmark would read 20000 days as 0 years
    err = raises_calc_error(UnknownUnit, CG, dict(MAN, age=[20000, "days"]), "age")
    assert "'days'" in str(err) and "years, months, weeks" in str(err)
    assert compute(CG, dict(MAN, age=[720, "months"]), variant="benchmark").value == \
        compute(CG, MAN, variant="benchmark").value  # listed: still read


def _convertible(kind: InputKind) -> list[str]:
    """Units the library's converter reads for an input kind (from the registry's unit data)."""
    u = get_registry().units
    assert u is not None
    return {
        InputKind.age: ["years", "months", "weeks", "days"],
        InputKind.weight: list(u.weight),
        InputKind.height: list(u.height),
        InputKind.temperature: ["degrees celsius", "degrees fahrenheit", "°C", "°F"],
        InputKind.count_per_volume: list(u.volume),
    }.get(kind, [])


def _cases() -> list[tuple[str, str, str, dict]]:
    """(slug, input, unit outside accepted_units, entities of a reference case with that input)."""
    reg = get_registry()
    first: dict[int, dict] = {}
    for case in reference_cases():
        first.setdefault(case["calculator_id"], case["entities"])
    out = []
    for cid, ents in sorted(first.items()):
        calc = reg.by_id(cid)
        for inp in calc.inputs:
            given = ents.get(inp.name)
            if not inp.used or not inp.accepted_units or not isinstance(given, list) or len(given) != 2:
                continue
            outside = [u for u in _convertible(inp.kind) if u not in inp.accepted_units]
            if outside:
                out.append((calc.slug, inp.name, outside[0], dict(ents, **{inp.name: [given[0], outside[0]]})))
    return out


CASES = _cases()


def test_every_unit_kind_is_covered() -> None:
    kinds = {get_registry().calculators[s].input(n).kind for s, n, _, _ in CASES}
    assert {InputKind.age, InputKind.temperature, InputKind.count_per_volume} <= kinds, kinds


@pytest.mark.parametrize(("slug", "name", "unit", "ents"), CASES, ids=[f"{c[0]}:{c[1]}:{c[2]}" for c in CASES])
def test_a_unit_outside_accepted_units_is_refused(slug: str, name: str, unit: str, ents: dict) -> None:
    err = raises_calc_error(UnknownUnit, slug, ents, name)
    assert repr(unit) in str(err)
