"""`formula safety hazards | case | trace`: the case computed from the registry (audit.safety_case, safety_report)."""
from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import committee_registry, run

FIELDS = {"id", "title", "cause", "effect", "harm", "calculators", "severity", "likelihood", "risk", "controls",
          "residual_severity", "residual_likelihood", "residual_risk", "status", "raised"}


def _json(capsys, *argv: str):
    code, out, err = run(capsys, *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_hazards_json_has_the_issue_field_names(capsys):
    rows = _json(capsys, "safety", "hazards")
    assert len(rows) >= 12 and all(FIELDS <= set(r) for r in rows)
    assert all(c["evidence"] for r in rows for c in r["controls"])


def test_hazards_for_one_calculator_include_the_registry_wide_ones(capsys):
    rows = _json(capsys, "safety", "hazards", "--calculator", "cha2ds2-vasc")
    ids = [r["id"] for r in rows]
    assert "H-013" in ids and "H-001" in ids and "H-008" not in ids


def test_case_scope_is_formula_list_and_evidence_is_complete(capsys):
    case = _json(capsys, "safety", "case")
    listed = _json(capsys, "list")
    assert [(r["slug"], r["version"]) for r in case["scope"]] == [(r["slug"], r["active_version"]) for r in listed]
    assert all(r["content_hash"].startswith("sha256:") for r in case["scope"])
    benchmark = {r["slug"] for r in listed if r["medcalc_id"] is not None}
    ev = {e["slug"]: e for e in case["evidence"]}
    assert len(benchmark) == 55
    for slug in benchmark:  # the benchmark variant reproduces every shipped reference answer
        rc = ev[slug]["reference_cases"]
        assert rc["total"] > 0 and rc["passed"] == rc["total"], slug
    assert case["sign_off"]["state"] == "none"
    assert case["document"]["risk_matrix"]["verified"] is False
    assert "H-006" in case["residual_risk"]["above_acceptable"]


def test_case_markdown_to_a_file(capsys, tmp_path):
    out = tmp_path / "case.md"
    code, said, err = run(capsys, "safety", "case", "--out", str(out))
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    for heading in ("## Document control", "## Intended purpose", "## Scope", "## Hazard log",
                    "## Evidence per calculator", "## Residual risk", "## Sign-off"):
        assert heading in text
    assert "| meld-na | 40 of 40 |" in text


def test_trace_walks_requirement_hazards_controls_evidence(capsys):
    t = _json(capsys, "safety", "trace", "meld-na")
    assert t["requirement"]["slug"] == "meld-na" and "MELD" in t["requirement"]["text"]
    h = next(h for h in t["hazards"] if h["id"] == "H-011")
    shows = [e["shows"] for c in h["controls"] for e in c["evidence"]]
    assert any(s.startswith("supplied text found incomplete") for s in shows), shows
    code, out, _ = run(capsys, "safety", "trace", "meld-na")
    assert code == 0 and "H-008 A superseded formula" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_trace_of_an_unknown_calculator_is_a_clear_error(capsys):
    code, _, err = run(capsys, "safety", "trace", "no-such-score")
    assert code == 1 and err.startswith("error:") and "Traceback" not in err


def test_a_committee_registry_carries_its_own_log(capsys, tmp_path: Path):
    root = committee_registry(tmp_path)
    assert (root / "formulas" / "safety" / "hazards.yaml").is_file()
    rows = _json(capsys, "safety", "hazards", "--root", str(root))
    assert len(rows) >= 12
