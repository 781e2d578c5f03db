"""The hazard log (formulas/safety/): its schema, the risk looked up in the matrix, and the validation rules."""
from __future__ import annotations

from pathlib import Path

from registry import codes
from registry.hazard_rules import concerned
from registry.hazards import ALL, hazard_json, read_log
from registry.loader import get_registry, load
from registry.validate import validate
from tests.helpers import SHIPPED_ROOT, copy_registry, edit

HAZARDS = Path("formulas/safety/hazards.yaml")
MATRIX = Path("formulas/safety/risk_matrix.yaml")


def _problems(root: Path, code: str | None = None) -> list[str]:
    reg = load(root)
    validate(reg)
    return [str(p) for p in reg.problems if code is None or p.code == code]


def test_the_shipped_log_is_real_and_valid():
    log = read_log(SHIPPED_ROOT)
    assert log is not None and not log.problems
    assert log.entries is not None and len(log.entries.hazards) >= 12
    assert log.matrix is not None and log.matrix.verified is False  # not checked against DCB0129 itself
    assert [x.name for x in log.matrix.severities] == ["minor", "significant", "considerable", "major", "catastrophic"]
    assert [x.name for x in log.matrix.likelihoods] == ["very low", "low", "medium", "high", "very high"]
    reg = get_registry()
    named = {s for h in log.entries.hazards if h.calculators != ALL for s in h.calculators}
    must = {slug for slug, c in reg.calculators.items() if concerned(c)}
    assert must and must <= named


def test_risk_is_looked_up_never_typed():
    log = read_log(SHIPPED_ROOT)
    assert log is not None and log.entries is not None
    h = next(h for h in log.entries.hazards if h.id == "H-006")  # major x high
    out = hazard_json(log, h)
    assert (out["risk"], out["residual_risk"]) == (4, 3)
    assert out["controls"][0]["id"] == "C-007"


def test_a_typed_risk_is_an_unknown_field(tmp_path):
    root = copy_registry(tmp_path)
    edit(root / HAZARDS, "    severity: major\n    likelihood: medium\n", "    severity: major\n    risk: 1\n"
         "    likelihood: medium\n")
    found = _problems(root, codes.SAFETY)
    assert any("hazards.yaml" in p and "hazards[0].risk: unknown field" in p for p in found), found


def test_an_unknown_calculator_names_file_hazard_and_field(tmp_path):
    root = copy_registry(tmp_path)
    edit(root / HAZARDS, "calculators: [cha2ds2-vasc]", "calculators: [cha2ds2-vasc, no-such-score]")
    found = _problems(root, codes.SAFETY)
    assert len(found) == 1
    assert found[0].startswith("formulas/safety/hazards.yaml:")
    assert "calculators[1]: hazard H-013: unknown calculator 'no-such-score'" in found[0]


def test_an_unknown_control_is_an_error(tmp_path):
    root = copy_registry(tmp_path)
    edit(root / HAZARDS, "controls: [C-001, C-002]", "controls: [C-001, C-099]")
    found = _problems(root, codes.SAFETY)
    assert len(found) == 1 and "controls[1]: hazard H-001: unknown control 'C-099'" in found[0]


def test_evidence_must_name_what_exists(tmp_path):
    root = copy_registry(tmp_path)
    edit(root / HAZARDS, "{kind: rule, ref: R-INPUT}", "{kind: rule, ref: R-NO-SUCH}")
    edit(root / HAZARDS, "mean-arterial-pressure#systolic-above-diastolic", "mean-arterial-pressure#nothing")
    found = _problems(root, codes.SAFETY)
    assert any("control C-003: unknown rule code 'R-NO-SUCH'" in p for p in found), found
    assert any("control C-004: mean-arterial-pressure has no plausibility rule 'nothing'" in p for p in found), found


def test_a_level_not_in_the_matrix_is_an_error(tmp_path):
    root = copy_registry(tmp_path)
    edit(root / HAZARDS, "    severity: significant\n", "    severity: moderate\n")
    found = _problems(root, codes.SAFETY)
    assert any("severity: hazard H-009: 'moderate' is not a level of the risk matrix" in p for p in found), found


def test_coverage_names_the_uncovered_calculator(tmp_path):
    root = copy_registry(tmp_path)
    edit(root / HAZARDS, "calculators: [cha2ds2-vasc]", "calculators: all")
    found = _problems(root, codes.SAFETY_COVERAGE)
    assert len(found) == 1
    assert "cha2ds2-vasc (literature concern jurisdiction_dependent) is named by no hazard" in found[0]


def test_a_closed_hazard_has_a_closed_date(tmp_path):
    root = copy_registry(tmp_path)
    edit(root / HAZARDS, "    status: accepted\n", "    status: closed\n")
    found = _problems(root, codes.SAFETY)
    assert any("hazard H-012: a closed hazard says when it was closed" in p for p in found), found


def test_an_incomplete_matrix_is_refused(tmp_path):
    root = copy_registry(tmp_path)
    edit(root / MATRIX, "  very high: [3, 4, 4, 5, 5]\n", "")
    found = _problems(root, codes.SAFETY)
    assert any("risk_matrix.yaml" in p and "one row per likelihood" in p for p in found), found


def test_a_registry_without_a_log_has_no_safety_problems(tmp_path):
    root = copy_registry(tmp_path)
    for p in (root / "formulas" / "safety").iterdir():
        p.unlink()
    (root / "formulas" / "safety").rmdir()
    assert read_log(root) is None
    assert not _problems(root, codes.SAFETY)


def test_show_names_the_open_hazards(capsys):
    from tests.helpers import run

    code, out, _ = run(capsys, "show", "meld-na")
    assert code == 0 and "Open hazards: 2" in out
    assert "H-008 A superseded formula is used where its successor is policy" in out
    code, out, _ = run(capsys, "show", "anion-gap")
    assert "Open hazards: 1" in out and "H-008" not in out
