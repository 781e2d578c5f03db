"""JSON from outside refused in words, whichever way json.loads refuses it (registry.jsontext)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from registry.jsontext import JsonError, loads


@pytest.mark.parametrize(("text", "why"), [
    ('{"a": 1,}', "Expecting property name enclosed in double quotes at line 1 column 9"),
    ("[" * 100_000, "nested too deeply"),
    ('{"row_number": ' + "9" * 5000 + "}", "an integer of more than 4,300 digits"),
])
def test_every_refusal_is_a_json_error_with_its_reason(text: str, why: str) -> None:
    with pytest.raises(JsonError) as e:
        loads(text)
    assert str(e.value) == why
    assert isinstance(e.value, ValueError)  # callers that catch ValueError keep working


def test_json_is_read_as_json_loads_reads_it() -> None:
    text = '{"a": [1, 2.5, "µ", null, true], "b": {"c": -0}}'
    assert loads(text) == json.loads(text)


def test_a_run_row_with_a_5000_digit_number_is_a_run_error(tmp_path: Path) -> None:
    """Found by the fuzz suite: the integer escaped `read_run` as a ValueError (a traceback in `formula score`)."""
    from audit.runs import RunError, read_run

    gold = Path(__file__).resolve().parents[2] / "results" / "embedded" / "gold-solve"
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text((gold / "manifest.json").read_text(encoding="utf-8"), encoding="utf-8")
    (run / "results.jsonl").write_text('{"row_number": ' + "9" * 5000 + "}\n", encoding="utf-8")
    with pytest.raises(RunError, match=r"results.jsonl:1: not valid JSON \(an integer of more than 4,300 digits\)"):
        read_run(run)
