"""Calculator input schemas: every reference case validates; broken entities fail at the right gate."""
from __future__ import annotations

import copy
import json

import pytest
from jsonschema import Draft202012Validator

from cli.main import main
from registry.loader import get_registry
from solver.records import version_hash
from solver.tools.gates import GateError, check
from solver.tools.schema import calculator_schema, tool_definition
from tests.solver.conftest import reference_cases

REG = get_registry()
CASES = reference_cases()
CG_OK = {"sex": "Male", "age": [53, "years"], "weight": [87.0, "kg"], "height": [175, "cm"],
         "creatinine": [1.39, "mg/dL"]}


def test_every_schema_is_a_valid_draft_2020_12_schema():
    for calc in REG.calculators.values():
        Draft202012Validator.check_schema(calculator_schema(calc, REG))


def test_every_reference_case_validates():
    validators = {}
    for case in CASES:
        cid = case["calculator_id"]
        if cid not in validators:
            validators[cid] = Draft202012Validator(calculator_schema(cid, REG))
        errors = list(validators[cid].iter_errors(case["entities"]))
        assert not errors, (cid, case["entities"], [e.message for e in errors])


@pytest.mark.parametrize("mutate, gate, variable", [
    (lambda e: e.pop("sex"), "completeness", "sex"),
    (lambda e: e.update({"Blood pressure": [120, "mm Hg"]}), "completeness", "Blood pressure"),
    (lambda e: e.update({"creatinine": "1.39 mg/dL"}), "type", "creatinine"),
    (lambda e: e.update({"age": [53]}), "type", "age"),
    (lambda e: e.update({"weight": [True, "kg"]}), "type", "weight"),
    (lambda e: e.update({"sex": "male"}), "enum", "sex"),
    (lambda e: e.update({"creatinine": [1.39, "mg/dl"]}), "unit", "creatinine"),
    (lambda e: e.update({"weight": [190, "lb"]}), "unit", "weight"),
    (lambda e: e.update({"height": [5, "ft", 9, "cm"]}), "unit", "height"),
    (lambda e: e.update({"creatinine": [140, "mg/dL"]}), "range", "creatinine"),
    (lambda e: e.update({"creatinine": [20000, "µmol/L"]}), "range", "creatinine"),
    (lambda e: e.update({"age": [200, "years"]}), "range", "age"),
])
def test_broken_entities_fail_at_the_right_gate(mutate, gate, variable):
    ents = copy.deepcopy(CG_OK)
    mutate(ents)
    assert list(Draft202012Validator(calculator_schema(2, REG)).iter_errors(ents))  # the schema itself rejects it
    with pytest.raises(GateError) as info:
        check(REG, 2, ents)
    assert info.value.gate == gate, str(info.value)
    assert [f.variable for f in info.value.findings][0] == variable, str(info.value)


def test_gates_report_the_first_failing_gate_only():
    ents = dict(CG_OK, sex="male", creatinine=[1.3, "mg/dl"])
    ents.pop("age")
    with pytest.raises(GateError) as info:
        check(REG, 2, ents)
    assert info.value.gate == "completeness" and "'age'" in str(info.value)


def test_choice_boolean_and_special_inputs():
    s = calculator_schema("has-bled", REG)
    labile = s["properties"]["Labile international normalized ratio"]
    assert labile["enum"] == [True, False, "True", "False"]
    assert "therapeutic range below 60%" in labile["description"]
    assert labile["x-definition"]["verified"] is False and "Pisters" in labile["x-definition"]["source"]
    steroid = calculator_schema("steroid-conversion", REG)["properties"]["input steroid"]
    assert "PredniSONE PO" in steroid["prefixItems"][0]["enum"]
    with pytest.raises(GateError) as info:
        check(REG, "steroid-conversion", {"input steroid": ["Prednisone", 10, "mg"], "target steroid": "Cortisone PO"})
    assert info.value.gate == "enum"


def test_ranges_in_other_units_are_converted_from_the_registry():
    s = calculator_schema(2, REG)["properties"]["creatinine"]
    clauses = {c["if"]["prefixItems"][1]["const"]: c["then"]["prefixItems"][0] for c in s["allOf"]}
    mm = REG.units.analytes["creatinine"].molar_mass
    lo, hi = REG.calculators["creatinine-clearance-cockcroft-gault"].input("creatinine").range
    assert clauses["mg/dL"] == {"minimum": lo, "maximum": hi}
    assert clauses["µmol/L"]["maximum"] == pytest.approx(hi * 10 / mm * 1000, rel=1e-9)


def test_tool_definitions_name_the_version_and_content_hash():
    calc = REG.get(2)
    h = version_hash(REG, calc)
    oa = tool_definition(calc, "openai", REG)
    assert oa["function"]["name"] == calc.slug and h in oa["function"]["description"]
    assert set(oa) == {"type", "function"} and oa["function"]["parameters"]["required"]  # OpenAI's shape exactly
    assert set(oa["function"]) == {"name", "description", "parameters"}
    m = tool_definition(calc, "mcp", REG)
    assert m["_meta"]["formula-registry"]["version"] == calc.active.version
    Draft202012Validator.check_schema(m["inputSchema"])
    mdrd = tool_definition("mdrd-gfr", "mcp", REG)
    assert "replaced by" in mdrd["description"]


def test_cli_schema_calculator(capsys):
    assert main(["schema", "--calculator", "2", "--format", "mcp"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["name"] == "creatinine-clearance-cockcroft-gault"
    assert main(["schema", "--kind", "units"]) == 0  # the registry's own schema command still works
    assert "properties" in json.loads(capsys.readouterr().out)
    assert main(["schema", "--calculator", "no-such"]) == 1
    assert "unknown calculator" in capsys.readouterr().err
    assert main(["schema", "--format", "openai"]) == 2
