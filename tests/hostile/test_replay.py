"""Replay recomputes the whole record: any forged field (inputs, constants, sub-results, cross-check,
warnings, executor outcome, lock digest, ...) is reported by its path; the timestamp and the executor's
timings are the only things left out."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from cli.main import main
from solver.records import AnswerRecord
from solver.router.core import solve
from solver.router.replay import replay

CG = {"sex": "Male", "age": [53, "years"], "weight": [87.0, "kg"], "height": [175, "cm"], "creatinine": [1.39, "mg/dL"]}
BMI = {"weight": [70, "kg"], "height": [175, "cm"]}
PROGRAM = "def solve():\n    return 70 / 1.75 ** 2\n"


def _set(path: str, value: Any) -> Callable[[dict], None]:
    def edit(d: dict) -> None:
        *head, last = path.split(".")
        for k in head:
            d = d[k] if not isinstance(d, list) else d[int(k)]
        if isinstance(d, list):
            d[int(last)] = value
        else:
            d[last] = value
    return edit


@pytest.fixture(scope="module")
def records() -> dict[str, dict]:
    lib = solve("creatinine-clearance-cockcroft-gault", CG, variant="benchmark")
    checked = solve("body-mass-index", BMI, program=PROGRAM, variant="benchmark")
    prog = solve("body-mass-index", BMI, route="program", program=PROGRAM, variant="benchmark")
    return {k: json.loads(r.model_dump_json()) for k, r in
            {"library": lib, "checked": checked, "program": prog}.items()}


FORGERIES = [
    ("library", "inputs.weight.value", 60.0),
    ("library", "inputs.creatinine.unit", "µmol/L"),
    ("library", "constants", {"forged": 1}),
    ("library", "sub_results.0.value", 99.0),
    ("library", "registry_lock_digest", "sha256:" + "0" * 64),
    ("library", "warnings", []),
    ("library", "medcalc_id", 999),
    ("library", "reason", "verified by a clinician"),
    ("checked", "cross_check.program_value", 99.0),
    ("checked", "cross_check.agree", False),
    ("program", "executor_outcome.kind", "rejected"),
    ("program", "executor_outcome.policy", "paper"),
    ("program", "executor_policy", "paper"),
    ("program", "inputs", {"weight": {"given": [70, "kg"], "value": 70, "unit": "kg"}}),
]


@pytest.mark.parametrize("which,path,value", FORGERIES, ids=[f"{w}:{p}" for w, p, _ in FORGERIES])
def test_a_forged_field_is_reported(records: dict[str, dict], which: str, path: str, value: Any) -> None:
    data = json.loads(json.dumps(records[which]))
    _set(path, value)(data)
    _, diffs = replay(AnswerRecord.model_validate(data))
    top = path.split(".")[0]
    assert any(d.startswith(top) for d in diffs), diffs
    assert all(not d.startswith(("timestamp", "executor_outcome.cpu_s", "executor_outcome.wall_s")) for d in diffs)


def test_every_difference_is_listed(records: dict[str, dict]) -> None:
    data = json.loads(json.dumps(records["library"]))
    for _, path, value in FORGERIES[:5]:
        _set(path, value)(data)
    _, diffs = replay(AnswerRecord.model_validate(data))
    paths = [d.split(":")[0] for d in diffs]
    assert {"registry_lock_digest", "inputs.weight.value", "inputs.creatinine.unit", "constants.forged",
            "constants.age_offset", "sub_results"} <= set(paths), paths
    assert all(p.startswith(("registry_lock_digest", "inputs.", "constants.", "sub_results")) for p in paths), paths


def test_honest_records_reproduce_through_json(records: dict[str, dict]) -> None:
    for which, data in records.items():
        data = json.loads(json.dumps(data))
        data["timestamp"] = "1999-01-01T00:00:00+00:00"  # never compared
        if data.get("executor_outcome"):
            data["executor_outcome"]["wall_s"] = 123.0  # measured, so never compared
        assert replay(AnswerRecord.model_validate(data))[1] == [], which


def test_cli_names_each_forged_field(records: dict[str, dict], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(json.dumps(records["checked"]))
    data["cross_check"]["program_value"] = 1.0
    data["registry_lock_digest"] = "sha256:forged"
    f = tmp_path / "rec.json"
    f.write_text(json.dumps(data), encoding="utf-8")
    code = main(["replay", str(f)])
    out = capsys.readouterr().out
    assert code == 3 and "DIFFERS" in out
    assert "cross_check.program_value" in out and "registry_lock_digest" in out
