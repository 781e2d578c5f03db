"""What a refused input says, on `formula solve` and on a tool call (MCP, OpenAI) alike: names matched without
case, every unknown and missing input in one message with did-you-mean, the registry's aliases and codes read
('lb', 'umol/L', 'F'), unit hints for the spellings it does not read, an out-of-range value in the unit typed,
and `--format json` errors as a JSON object on stdout.

Converted numbers are checked against the unit definitions themselves (1 lb = 0.45359237 kg, 1 in = 2.54 cm,
1 ft = 0.3048 m, creatinine 1 mg/dL = 88.4 umol/L), never against this code's own output."""
from __future__ import annotations

import json
import sys

import anyio
import pytest

from cli.main import main
from registry.loader import PROJECT_ROOT, get_registry
from solver.tools.gates import GateError
from solver.tools.service import call

REG = get_registry()
CG = {"sex": "Male", "age": [53, "years"], "weight": [87.0, "kg"], "height": [175, "cm"],
      "creatinine": [1.39, "mg/dL"]}
CG_PUBLISHED = (140 - 53) * 87.0 / (72 * 1.39)  # Cockcroft & Gault 1976, actual body weight
BMI = {"weight": [70, "kg"], "height": [175, "cm"]}


def _solve(capsys: pytest.CaptureFixture[str], calc: str, ents: dict, *extra: str) -> tuple[int, str, str]:
    code = main(["solve", "--calculator", calc, "--entities", json.dumps(ents), *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def _tool_error(calc: str, ents: dict) -> str:
    with pytest.raises(GateError) as info:
        call(REG, calc, ents, variant="published")
    return str(info.value)


# ---------------------------------------------------------------------- names


def test_names_differing_only_in_case_are_the_inputs(capsys):
    shouted = {"SEX": "Male", "Age": [53, "years"], "WEIGHT": [87.0, "kg"], "Height": [175, "cm"],
               "Creatinine": [1.39, "mg/dL"]}
    code, out, _ = _solve(capsys, "2", shouted, "--format", "json")
    record = json.loads(out)
    assert code == 0 and record["value"] == pytest.approx(CG_PUBLISHED, abs=1e-4)
    assert "input 'SEX' read as 'sex' (names are matched without case)" in record["warnings"]
    assert set(record["entities"]) == set(CG)  # the record holds the inputs as the registry names them
    tooled = call(REG, 2, shouted, variant="published")
    assert tooled.value == pytest.approx(CG_PUBLISHED, abs=1e-4) \
        and "input 'Age' read as 'age' (names are matched without case)" in tooled.warnings


def test_a_name_given_in_both_cases_is_not_guessed(capsys):
    code, _, err = _solve(capsys, "6", dict(BMI, Weight=[80, "kg"]))
    assert code == 1 and "'Weight': unknown input (did you mean 'weight' or 'height'?)" in err


def test_every_unknown_and_missing_input_in_one_message(capsys):
    ents = {"sex": "Male", "agee": [53, "years"], "wieght": [87, "kg"], "height": [175, "cm"], "shoe": 9}
    code, _, err = _solve(capsys, "2", ents)
    assert code == 1
    assert ("3 unknown inputs: 'agee' (did you mean 'age'?), 'wieght' (did you mean 'weight' or 'height'?), "
            "'shoe' (not an input of this calculator); 3 required inputs are missing: 'age', 'creatinine', "
            "'weight'") in err
    tool = _tool_error("creatinine-clearance-cockcroft-gault", ents)
    for part in ("'agee': unknown input (did you mean 'age'?)", "'wieght': unknown input (did you mean 'weight'",
                 "'shoe': unknown input (not an input", "'age': required input is missing",
                 "'creatinine': required input is missing", "'weight': required input is missing"):
        assert part in tool, part


# ---------------------------------------------------------------------- units

# (calculator, entities, what the refusal must say): every spelling the issue names, on both paths
REFUSED = [
    ("6", dict(BMI, weight=[154, "lbs."]), "'weight': unknown unit 'lbs.'", "did you mean 'lbs'?"),
    ("6", dict(BMI, height=[69, '"']), "'height': unit '\"' is not accepted", "did you mean 'in'?"),
    ("6", dict(BMI, height=[69, "in."]), "'height': unit 'in.' is not accepted", "did you mean 'in'?"),
    ("6", dict(BMI, weight=[70, "ft"]), "'weight': unknown unit 'ft'; accepted: kg, lbs, g", None),
    ("2", dict(CG, creatinine=[123, "mmol"]), "'creatinine': unknown unit 'mmol'",
     "'mmol' is an amount, not a concentration: did you mean 'mmol/L'?"),
    ("calcium-correction", {"Calcium": [2.4, "µmol/L"], "Albumin": [4, "g/dL"]},
     "'Calcium': unknown unit 'µmol/L'; accepted: mg/dL, mmol/L, mEq/L", None),  # never 'mmol/L': 1000 times more
]


@pytest.mark.parametrize("calc,ents,refusal,hint", REFUSED)
def test_a_unit_people_type_is_refused_with_a_hint(capsys, calc, ents, refusal, hint):
    code, out, err = _solve(capsys, calc, ents)
    assert code == 1 and out == "" and refusal in err
    assert (hint in err) if hint else ("did you mean" not in err)
    tool = _tool_error(REG.get(calc).slug, ents)
    assert "unit check failed" in tool
    assert (hint in tool) if hint else ("did you mean" not in tool)


@pytest.mark.parametrize("calc,ents,expected", [
    ("6", dict(BMI, weight=[154, "lbs"]), 154 * 0.45359237 / 1.75 ** 2),  # 'lbs' is the registry's pound
    ("6", dict(BMI, height=[69, "in"]), 70 / (69 * 0.0254) ** 2),
    ("6", dict(BMI, height=[5.75, "ft"]), 70 / (5.75 * 0.3048) ** 2),
    ("2", dict(CG, creatinine=[123, "µmol/L"]), (140 - 53) * 87.0 / (72 * 123 / 88.4)),  # micro sign
    ("2", dict(CG, creatinine=[123, "\u03bcmol/L"]), (140 - 53) * 87.0 / (72 * 123 / 88.4)),  # Greek mu
    # the spellings real exports use, read through the registry's aliases (formulas/units.yaml `spellings:`)
    ("6", dict(BMI, weight=[154, "lb"]), 154 * 0.45359237 / 1.75 ** 2),
    ("6", dict(BMI, weight=[154, "pounds"]), 154 * 0.45359237 / 1.75 ** 2),
    ("6", dict(BMI, weight=[154, "LBS"]), 154 * 0.45359237 / 1.75 ** 2),
    ("6", dict(BMI, height=[69, "inches"]), 70 / (69 * 0.0254) ** 2),
    ("6", dict(BMI, height=[5.75, "feet"]), 70 / (5.75 * 0.3048) ** 2),
    ("6", dict(BMI, height=[1.75, "metres"]), 70 / 1.75 ** 2),
    ("2", dict(CG, creatinine=[123, "umol/L"]), (140 - 53) * 87.0 / (72 * 123 / 88.4)),  # ASCII u for micro
    ("2", dict(CG, creatinine=[123, "umol/l"]), (140 - 53) * 87.0 / (72 * 123 / 88.4)),
    ("2", dict(CG, creatinine=[1.39, "MG/DL"]), CG_PUBLISHED),
    ("2", dict(CG, sex="M"), CG_PUBLISHED),
    ("2", dict(CG, sex="male"), CG_PUBLISHED),
    ("2", dict(CG, sex="F"), CG_PUBLISHED * 0.85),  # Cockcroft & Gault 1976: x 0.85 for women
    ("2", dict(CG, sex="female"), CG_PUBLISHED * 0.85),
    ("2", dict(CG, age=[53, "yrs"]), CG_PUBLISHED),
])
def test_accepted_spellings_convert_to_the_independent_value(capsys, calc, ents, expected):
    code, out, _ = _solve(capsys, calc, ents, "--format", "json")
    assert code == 0 and json.loads(out)["value"] == pytest.approx(expected, rel=1e-3)
    assert call(REG, calc, ents, variant="published").value == pytest.approx(expected, rel=1e-3)


def test_out_of_range_is_said_in_the_unit_typed(capsys):
    _, _, err = _solve(capsys, "6", dict(BMI, weight=[1500, "lbs"]))
    # 650 kg, the registry's upper bound, is 1433.0 lb (650 / 0.45359237); 1500 lb is 680.4 kg
    assert "'weight': 1500 lbs (680.388 kg) is outside the plausible range 0.3 to 650.0 kg (0.661387 to 1433.01 lbs)" \
        in err
    _, _, err = _solve(capsys, "2", dict(CG, creatinine=[5000, "µmol/L"]))
    assert "'creatinine': 5000 µmol/L (56.56 mg/dL) is outside the plausible range" in err  # 5000 / 88.4 = 56.56
    _, _, err = _solve(capsys, "2", dict(CG, age=[2000, "months"]))  # 2000 / 12 = 166.667 years
    assert "'age': 2000 months (166.667 years) is outside the plausible range 0.0 to 130.0 years\n" in err
    tool = _tool_error("body-mass-index", dict(BMI, weight=[1500, "lbs"]))
    assert "'weight': value[0] 1500 lbs is outside the plausible range (at most 1433.01 lbs)" in tool
    _, _, err = _solve(capsys, "6", dict(BMI, weight=[800, "kg"]))  # typed in the canonical unit: said once
    assert "'weight': 800.0 kg is outside the plausible range 0.3 to 650.0 kg\n" in err


# ---------------------------------------------------------------------- --format json


@pytest.mark.parametrize("ents,kind", [
    (dict(BMI, weight=[154, "oz"]), "unknown_unit"),
    (dict(BMI, weight=[1500, "lbs"]), "out_of_range"),
    ({"wieght": [70, "kg"]}, "unknown_input"),
    ({"weight": [70, "kg"]}, "missing_input"),
])
def test_format_json_prints_an_error_object_with_the_same_exit_code(capsys, ents, kind):
    plain, out, err = _solve(capsys, "6", ents)
    assert plain == 1 and out == ""
    code, out, err_json = _solve(capsys, "6", ents, "--format", "json")
    assert code == plain
    error = json.loads(out)["error"]
    assert (error["kind"], error["calculator"], error["exit_code"]) == (kind, "body-mass-index", 1)
    assert error["message"] in err and error["message"] in err_json


def test_format_json_names_every_finding_and_covers_bad_json(capsys):
    code, out, _ = _solve(capsys, "6", {"wieght": [70, "kg"]}, "--format", "json")
    assert code == 1 and json.loads(out)["error"]["findings"] == [
        {"variable": "wieght", "problem": "unknown input (did you mean 'weight' or 'height'?)"},
        {"variable": "height", "problem": "required input is missing"},
        {"variable": "weight", "problem": "required input is missing"}]
    assert main(["solve", "--calculator", "6", "--entities", "{bad", "--format", "json"]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["kind"] == "value_error" and "--entities is not valid JSON" in error["message"]


# ---------------------------------------------------------------------- over MCP's own transport


async def _mcp_calls() -> dict:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "cli", "serve", "--mcp"], cwd=str(PROJECT_ROOT))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return {"cased": await session.call_tool("body-mass-index", {"Weight": [70, "kg"], "HEIGHT": [175, "cm"]}),
                    "lb": await session.call_tool("body-mass-index", dict(BMI, weight=[154, "lbs."])),
                    "alias": await session.call_tool("body-mass-index", dict(BMI, weight=[154, "lb"]))}


def test_mcp_calls_get_the_same_matching_and_hints():
    got = anyio.run(_mcp_calls)
    assert not got["cased"].is_error and got["cased"].structured_content["value"] == pytest.approx(70 / 1.75 ** 2,
                                                                                                    abs=1e-4)
    assert got["lb"].is_error and "did you mean 'lbs'?" in got["lb"].content[0].text
    alias = got["alias"].structured_content
    assert not got["alias"].is_error and alias["value"] == pytest.approx(154 * 0.45359237 / 1.75 ** 2, rel=1e-4)
    assert alias["read_as"] == [{"input": "weight", "given": [154, "lb"], "read": [154, "lbs"], "what": "unit"}]
