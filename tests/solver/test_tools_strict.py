"""`formula schema --format openai [--strict]` (issue 29): exactly OpenAI's function-tool shape; strict mode with
every field required (optional ones nullable), additionalProperties false, no prefixItems/if; and a call made to
the strict schema comes back through the gates and the library. MCP type errors suggest the shape wanted."""
from __future__ import annotations

import json
from collections import defaultdict

import pytest
from jsonschema import Draft202012Validator

from registry.loader import get_registry
from solver.data import REFERENCE_CASES, read_cases
from solver.tools.gates import GateError, check
from solver.tools.schema import strict_arguments, strict_tool
from solver.tools.service import call
from tests.helpers import run

REG = get_registry()
FORBIDDEN = {"prefixItems", "if", "then", "else", "allOf", "default"}


def _walk(node, path="$"):
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, f"{path}[{i}]")


def _cases():
    first = defaultdict(list)
    for c in read_cases(REFERENCE_CASES):
        if len(first[c.calculator_id]) < 2:
            first[c.calculator_id].append(c)
    return first


CASES = _cases()
CALCS = sorted((c for c in REG.calculators.values() if c.medcalc_id in CASES), key=lambda c: c.medcalc_id)


@pytest.mark.parametrize("calc", CALCS, ids=lambda c: c.slug)
def test_strict_schema_has_openais_shape_and_takes_the_reference_cases(calc):
    tool = strict_tool(calc, REG)
    assert set(tool) == {"type", "function"} and tool["type"] == "function"
    fn = tool["function"]
    assert set(fn) == {"name", "description", "strict", "parameters"} and fn["strict"] is True
    params = fn["parameters"]
    for where, node in _walk(params):
        assert not (FORBIDDEN & set(node)), f"{calc.slug} {where}: {FORBIDDEN & set(node)}"
        assert not any(k.startswith("x-") for k in node), where
        if node.get("type") == "object":
            assert node.get("additionalProperties") is False, where
            assert sorted(node.get("required", [])) == sorted(node.get("properties", {})), where
        if node.get("type") == "array":
            assert "items" in node, where
    optional = {i.name for i in calc.inputs if not i.required and i.name in params["properties"]}
    for name in optional:
        assert {"type": "null"} in params["properties"][name]["anyOf"], name
    Draft202012Validator.check_schema(params)
    validator = Draft202012Validator(params)
    checked = 0
    for case in CASES[calc.medcalc_id]:
        # what a strict-mode model sends: every field, null for the optional ones the case does not give
        sent = {name: case.entities.get(name) for name in params["properties"]}
        sent = {k: (True if v == "True" else False if v == "False" else v) for k, v in sent.items()}
        if any(sent[k] is None for k in params["properties"] if k not in optional):
            continue  # this case lacks a required input: not a call a strict-mode model can make
        assert not [e.message for e in validator.iter_errors(sent)], calc.slug
        back = strict_arguments(calc, sent)
        assert None not in back.values()
        check(REG, calc.slug, back)  # the gates accept it back, and the library computes it
        assert call(REG, calc.slug, back, variant="benchmark").value is not None
        checked += 1
    assert checked, f"{calc.slug}: no reference case was tried"


def test_a_strict_call_with_nulls_is_computed():
    calc = REG.get("body-mass-index")
    assert call(REG, calc.slug, {"weight": [70, "kg"], "height": [175, "cm"]}, variant="benchmark").value is not None
    optional = [i.name for i in REG.get("cha2ds2-vasc").inputs if not i.required]
    assert optional
    args = {"age": [63, "years"], "sex": "Male", **{k: None for k in optional}}
    assert call(REG, "cha2ds2-vasc", args, variant="published").value is not None


def test_openai_format_cli(capsys):
    code, out, _ = run(capsys, "schema", "--calculator", "body-mass-index", "--format", "openai")
    assert code == 0 and set(json.loads(out)) == {"type", "function"}
    code, out, _ = run(capsys, "schema", "--calculator", "body-mass-index", "--format", "openai", "--strict")
    assert code == 0 and json.loads(out)["function"]["strict"] is True
    code, _, err = run(capsys, "schema", "--calculator", "body-mass-index", "--strict")
    assert code == 2 and "--strict" in err


def test_a_bare_number_gets_the_shape_it_should_have():
    with pytest.raises(GateError) as e:
        check(REG, "cha2ds2-vasc", {"age": 63, "sex": "Male"})
    assert e.value.gate == "type" and 'give it as [63, "years"]' in str(e.value)
    with pytest.raises(GateError) as e:
        check(REG, "body-mass-index", {"weight": 70, "height": [175, "cm"]})
    assert 'give it as [70, "kg"]' in str(e.value)


def test_solve_names_every_missing_input(capsys):
    code, _, err = run(capsys, "solve", "--calculator", "meld-na", "--entities", "{}")
    assert code == 1
    for name in ("'Bilirubin'", "'Sodium'", "'creatinine'", "'international normalized ratio'"):
        assert name in err, name
    assert "4 required inputs are missing" in err
