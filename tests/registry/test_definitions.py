"""Input definitions are shown (tool descriptions, the MCP server): they are part of a version's content."""
from __future__ import annotations

from registry.loader import get_registry
from registry.schema import InputDefinition
from registry.versions import content, content_hash


def _hash(calc, units):
    return content_hash(content(calc, calc.active, units))


def _with_definition(calc, name, definition):
    """A copy of the entry whose input `name` has this definition (the models are frozen: edits are copies)."""
    target = calc.input(name)
    return calc.model_copy(update={"inputs": [i.model_copy(update={"definition": definition}) if i is target else i
                                              for i in calc.inputs]})


def test_definitions_are_inside_the_content_hash():
    reg = get_registry()
    calc = reg.calculators["has-bled"]
    labile = calc.input("Labile international normalized ratio")
    assert labile.definition is not None and "60%" in labile.definition.text
    before = _hash(calc, reg.units)
    edited = _with_definition(calc, "Labile international normalized ratio", InputDefinition(
        text="something else", source="nowhere", verified=False))
    assert _hash(edited, reg.units) != before
    edited = _with_definition(calc, "Labile international normalized ratio", None)
    assert _hash(edited, reg.units) != before
    assert _hash(calc, reg.units) == before  # the entry in hand is unchanged


def test_definitions_name_a_source_and_stay_unverified_until_checked():
    reg = get_registry()
    found = [(c.slug, i) for c in reg.calculators.values() for i in c.inputs if i.definition is not None]
    assert {s for s, _ in found} >= {"has-bled", "caprini-2005"}
    for slug, i in found:
        assert i.definition.source and i.definition.seen_in.startswith("https://"), (slug, i.name)
        assert i.definition.verified is False, (slug, i.name)  # read in secondary sources only
