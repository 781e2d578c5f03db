"""Answers of the wrong kind: `--route program` abstains when the program's value does not fit the
calculator's output kind, and replay never certifies a record that says otherwise."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.main import main
from solver.records import AnswerRecord
from solver.router.core import solve
from solver.router.replay import replay

DATE = "datetime.date(2020, 1, 1)"
# calculator -> (values that fit, values that must abstain), as Python expressions a program returns
CASES = {
    "body-mass-index": (["22.5", "22"], [DATE, "(3, -5)", "(3, 2)"]),  # decimal
    "centor-mcisaac": (["3", "3.0"], ["2.5", DATE, "(1, 2)"]),  # integer
    "estimated-due-date": ([DATE], ["280", "(40, 0)", "2020.5"]),  # date
    "estimated-gestational-age": (["(12, 3)", "(0, 6)"], ["(3, -5)", "(3, 7)", "(-1, 2)", "21.5", DATE]),  # (weeks, days)
}


def prog(expr: str) -> str:
    return f"import datetime\ndef solve():\n    return {expr}\n"


@pytest.mark.parametrize("slug", list(CASES))
def test_program_route_takes_only_values_of_the_output_kind(slug: str) -> None:
    fits, misfits = CASES[slug]
    for expr in fits:
        rec = solve(slug, {}, route="program", program=prog(expr), variant="benchmark")
        assert not rec.abstained and rec.route == "program", (slug, expr, rec.reason)
    for expr in misfits:
        rec = solve(slug, {}, route="program", program=prog(expr), variant="benchmark")
        assert rec.abstained and rec.value is None and rec.route == "abstain", (slug, expr, rec.value)
        assert "does not fit" in (rec.reason or "") and rec.executor_outcome["kind"] == "value"


def test_cli_abstains_with_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for expr in (DATE, "(3, -5)"):
        p = tmp_path / "p.py"
        p.write_text(prog(expr), encoding="utf-8")
        code = main(["solve", "--calculator", "6", "--entities", "{}", "--program", str(p), "--route", "program"])
        out = capsys.readouterr().out
        assert code == 3 and "abstained" in out and "not a number" in out, out


@pytest.mark.parametrize("value", ["2020-01-01", [3, -5]])
def test_replay_does_not_certify_a_wrong_kind_record(value) -> None:
    """A record as main wrote it: a date (or a pair) answered for BMI by the program route."""
    expr = DATE if isinstance(value, str) else "(3, -5)"
    good = solve("body-mass-index", {}, route="program", program=prog("22.5"), variant="benchmark")
    forged = AnswerRecord.model_validate({**json.loads(good.model_dump_json()), "value": value,
                                          "program": prog(expr)})
    new, diffs = replay(forged)
    assert new.abstained and diffs and any(d.startswith("value:") for d in diffs)
