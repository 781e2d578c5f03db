"""The working wherever an answer goes: the answer record, `solve --explain`, replay, the tools, compute_many and
the site's worked examples."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from cli.main import main
from registry.loader import get_registry
from solver.library import compute, compute_many

CURB = {"age": [67, "years"], "Confusion": True, "Blood Urea Nitrogen (BUN)": [6.8, "mmol/L"],
        "respiratory rate": [39, "breaths per minute"], "Systolic Blood Pressure": [90, "mm Hg"],
        "Diastolic Blood Pressure": [59, "mm Hg"]}
CG = {"sex": "Male", "age": [53, "years"], "weight": [87.0, "kg"], "height": [175, "cm"],
      "creatinine": [1.39, "mg/dL"]}


def _solve(capsys, *extra: str, ents: dict = CURB) -> tuple[int, str]:
    code = main(["solve", "--calculator", "curb-65", "--variant", "benchmark", "--entities", json.dumps(ents),
                 *extra])
    return code, capsys.readouterr().out


def test_the_answer_record_carries_the_working(capsys):
    code, out = _solve(capsys, "--format", "json")
    rec = json.loads(out)
    assert code == 0 and rec["working"][-1]["value"] == rec["value"] == 5
    step = rec["working"][9]
    assert step == {"step": "Confusion: yes, +1 point", "value": 1, "unit": "points", "from": ["table points"],
                    "kind": "points", "total": 2}


def test_explain_prints_numbered_lines_within_80_columns(capsys):
    code, out = _solve(capsys, "--explain")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "curb-65 1.0.2 (benchmark): 5 points"
    assert lines[1] == "  1. age: 67 years" and lines[-1] == " 14. CURB-65 Score for Pneumonia Severity = 5 points"
    assert all(len(line) <= 80 for line in lines)


def test_replay_names_the_first_step_that_differs(tmp_path, capsys):
    _, out = _solve(capsys, "--format", "json")
    path = tmp_path / "answer.json"
    path.write_text(out)
    assert main(["replay", str(path)]) == 0
    capsys.readouterr()
    rec = json.loads(out)
    rec["working"][7]["value"] = 19.5
    path.write_text(json.dumps(rec))
    assert main(["replay", str(path)]) == 3
    assert "working step 8 (Blood Urea Nitrogen (BUN): 6.8 mmol/L = 19.054 mg/dL): value recorded 19.5, now 19.054" \
        in capsys.readouterr().out


def test_a_record_from_before_the_working_still_replays(tmp_path, capsys):
    _, out = _solve(capsys, "--format", "json")
    rec = json.loads(out)
    del rec["working"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(rec))
    assert main(["replay", str(path)]) == 0


def test_bad_input_is_the_same_error(capsys):
    ents = {k: v for k, v in CURB.items() if k != "age"}
    code, _ = _solve(capsys, "--explain", ents=ents)
    assert code == 1


def test_an_abstention_says_why():
    from solver.router.core import solve

    rec = solve("curb-65", CURB, route="program", variant="benchmark")
    assert rec.abstained and rec.working == [{"step": f"no answer: {rec.reason}", "value": None, "unit": None,
                                              "from": [], "kind": "note"}]


def test_the_tools_answer_with_the_working():
    from solver.tools.mcp_server import handle
    from solver.tools.service import call

    reg = get_registry()
    mcp = handle(reg, "creatinine-clearance-cockcroft-gault", CG, "benchmark").structured_content
    assert mcp["working"][-1]["value"] == mcp["value"]
    assert {"calculator body-mass-index"} <= {src for s in mcp["working"] for src in s["from"]}
    record = call(reg, "curb-65", CURB, variant="benchmark")  # what an OpenAI tool call is answered with
    assert record.working[-1]["value"] == 5


def test_compute_many_details_gives_the_working_per_distinct_combination():
    frame = pd.DataFrame({k: [v, v, v] for k, v in CURB.items()})
    frame.loc[2, "Confusion"] = False
    out = compute_many("curb-65", frame, variant="benchmark", details=True)
    w = out["working"]
    assert w.iloc[0] is w.iloc[1]  # one recording for the two equal rows
    assert w.iloc[0] == compute("curb-65", CURB, working=True, variant="benchmark").working
    assert w.iloc[2][-1].value == 4


@pytest.mark.parametrize("slug", ["curb-65", "cha2ds2-va", "estimated-due-date"])
def test_a_calculator_page_shows_a_worked_example(slug):
    from formula_site.worked_example import worked_example

    reg = get_registry()
    lines = worked_example(reg, reg.get(slug))
    assert lines[1] == "## Worked example"
    assert "  1. " in lines[-1]
