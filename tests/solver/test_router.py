"""The router: routes, cross-check abstention, flagged-formula warnings, --version and replay."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli.main import main
from registry.governance.release import ReleaseRequest, release
from registry.loader import clear_cache, load
from registry.versions import read_lock
from solver.library import MissingInput
from solver.records import AnswerRecord
from solver.router import ROUTES
from solver.router.core import solve
from solver.router.replay import replay
from solver.router.versions import VersionError
from tests.helpers import SHIPPED_ROOT, committee
from tests.registry.helpers import NEW, OLD

BMI = {"weight": [70, "kg"], "height": [175, "cm"]}
BMI_VALUE = 70 / 1.75**2  # 22.857...
NA = {"Sodium": [130, "mEq/L"], "Glucose": [400, "mg/dL"]}  # Hillier: 130 + 0.024 x 300 = 137.2


def prog(expr: str) -> str:
    return f"def solve():\n    return {expr}\n"


def test_routes_are_registered_plugins() -> None:
    assert {"library", "program", "abstain"} <= set(ROUTES.names())


def test_auto_uses_the_library_and_records_provenance() -> None:
    rec = solve("body-mass-index", BMI, variant="benchmark")
    assert rec.route == "library" and rec.requested_route == "auto" and not rec.abstained
    assert rec.value == pytest.approx(BMI_VALUE, abs=1e-3)
    assert rec.content_hash == read_lock(SHIPPED_ROOT / "formulas" / "REGISTRY.lock")["body-mass-index"][rec.version]
    assert rec.registry_lock_digest and rec.registry_lock_digest.startswith("sha256:")
    assert rec.inputs["height"].given == [175, "cm"] and rec.timestamp


def test_program_route_runs_the_executor() -> None:
    rec = solve("body-mass-index", BMI, route="program", program=prog("70 / 1.75 ** 2"), variant="benchmark")
    assert rec.route == "program" and rec.value == pytest.approx(BMI_VALUE)
    assert rec.executor_outcome["kind"] == "value" and "def solve" in rec.program


def test_program_route_abstains_when_the_program_fails() -> None:
    rec = solve("body-mass-index", BMI, route="program", program="def solve():\n    return 1 / 0\n", variant="benchmark")
    assert rec.abstained and rec.route == "abstain" and "raised" in rec.reason
    rec = solve("body-mass-index", BMI, route="program", variant="benchmark")
    assert rec.abstained and "needs a program" in rec.reason


def test_cross_check_agreeing_program_keeps_the_library_answer() -> None:
    rec = solve("body-mass-index", BMI, program=prog(BMI_VALUE * 1.049), variant="benchmark")  # inside +-5 %
    assert rec.route == "library" and rec.cross_check.agree and rec.value == pytest.approx(BMI_VALUE, abs=1e-3)


def test_cross_check_mismatch_abstains_with_both_values() -> None:
    rec = solve("body-mass-index", BMI, program=prog(BMI_VALUE * 1.051), variant="benchmark")  # just outside +-5 %
    assert rec.abstained and rec.value is None and not rec.cross_check.agree
    assert rec.cross_check.library_value == pytest.approx(BMI_VALUE, abs=1e-3)
    assert "disagree" in rec.reason


def test_cross_check_integer_scores_must_match_exactly() -> None:
    ents = {"age": [70, "years"], "sex": "Female"}
    assert solve("cha2ds2-vasc", ents, variant="benchmark").value == 2
    assert solve("cha2ds2-vasc", ents, program=prog(2), variant="benchmark").cross_check.agree
    assert solve("cha2ds2-vasc", ents, program=prog(3), variant="benchmark").abstained  # 1 point off is 50 %, never "close"


def test_failing_program_does_not_replace_the_library_answer() -> None:
    rec = solve("body-mass-index", BMI, program="x = 1", variant="benchmark")
    assert rec.route == "library" and not rec.abstained
    assert any("program was not used" in w for w in rec.warnings)


def test_abstains_without_library_function_or_program(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("solver.router.core.has_function", lambda slug: False)
    rec = solve("body-mass-index", BMI, variant="benchmark")
    assert rec.abstained and "no verified library function" in rec.reason
    rec = solve("body-mass-index", BMI, program=prog(22.9), variant="benchmark")
    assert rec.route == "program" and rec.value == 22.9


def test_bad_input_is_an_error_not_an_abstention() -> None:
    with pytest.raises(MissingInput):
        solve("body-mass-index", {"weight": [70, "kg"]}, variant="benchmark")


def test_replaced_formula_warns_naming_successor_and_jurisdiction() -> None:
    rec = solve("mdrd-gfr", {"age": [60, "years"], "creatinine": [1.2, "mg/dL"], "sex": "Female"}, variant="benchmark")
    w = " ".join(rec.warnings)
    assert "ckd-epi-2021" in w and "US" in w and "NKF" in w
    assert not solve("body-mass-index", BMI, variant="benchmark").warnings


@pytest.fixture()
def released(tmp_path: Path) -> Path:
    """A registry copy where sodium correction OLD (Hillier 0.024) is superseded by NEW (0.016)."""
    for d in ("formulas", "guidelines"):
        shutil.copytree(SHIPPED_ROOT / d, tmp_path / d)
    people = committee(tmp_path, four_eyes=False, approver_roles=[])  # a signed maintainer who may release at once
    release(tmp_path, ReleaseRequest(calculator="sodium-correction-hyperglycemia", reason="test release",
                                     sets=["correction_per_mg_dl_glucose=0.016"],
                                     labels=["correction_per_mg_dl_glucose=Katz factor"], key=str(people.keys["author"])))
    clear_cache()
    return tmp_path


def test_version_computes_with_the_superseded_content(released: Path) -> None:
    reg = load(released)
    new = solve("sodium-correction-hyperglycemia", NA, registry=reg, variant="published")
    old = solve("sodium-correction-hyperglycemia", NA, registry=reg, variant="published", version=OLD)
    assert new.version == NEW and new.value == pytest.approx(134.8)
    assert old.version == OLD and old.value == pytest.approx(137.2)
    assert old.constants["correction_per_mg_dl_glucose"] == 0.024
    lock = read_lock(released / "formulas" / "REGISTRY.lock")["sodium-correction-hyperglycemia"]
    assert old.content_hash == lock[OLD] and new.content_hash == lock[NEW]
    assert any(f"not the active version {NEW}" in w for w in old.warnings)
    with pytest.raises(VersionError, match="no version 9.9.9"):
        solve("sodium-correction-hyperglycemia", NA, registry=reg, version="9.9.9", variant="benchmark")


def test_damaged_history_is_refused(released: Path) -> None:
    snap = released / "formulas" / "history" / "sodium-correction-hyperglycemia" / f"{OLD}.yaml"
    snap.write_text(snap.read_text(encoding="utf-8").replace("0.024", "0.02"), encoding="utf-8")
    with pytest.raises(VersionError, match="does not hash"):
        solve("sodium-correction-hyperglycemia", NA, registry=load(released), version=OLD, variant="benchmark")


def test_replay_reproduces_a_record_after_a_newer_release(released: Path) -> None:
    rec = solve("sodium-correction-hyperglycemia", NA, variant="published")  # made at 1.0.0 active
    new, diffs = replay(rec, registry=load(released))
    assert new.version == OLD and new.value == rec.value and new.content_hash == rec.content_hash
    # the registry moved on since the record: replay says so (lock digest, the version note), nothing else
    assert [d.split(":")[0] for d in diffs] == ["registry_lock_digest", "warnings"], diffs
    assert f"not the active version {NEW}" in diffs[1]


def test_replay_reproduces_program_and_mismatch_records() -> None:
    for rec in (solve("body-mass-index", BMI, route="program", program=prog(21.5), variant="benchmark"),
                solve("body-mass-index", BMI, program=prog(40), variant="benchmark")):
        assert replay(AnswerRecord.model_validate_json(rec.model_dump_json()))[1] == []


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_solve_record_and_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "solve", "--calculator", "mdrd-gfr", "--entities",
                        json.dumps({"age": [60, "years"], "creatinine": [1.2, "mg/dL"], "sex": "Female"}),
                        "--format", "json")
    assert code == 0
    rec = json.loads(out)
    assert rec["route"] == "library" and rec["warnings"]
    f = tmp_path / "rec.json"
    f.write_text(out, encoding="utf-8")
    code, out, _ = _cli(capsys, "replay", str(f))
    assert code == 0 and "reproduced" in out
    rec["value"] = rec["value"] + 1
    f.write_text(json.dumps(rec), encoding="utf-8")
    code, out, _ = _cli(capsys, "replay", str(f))
    assert code == 3 and "DIFFERS" in out and "value" in out


def test_cli_program_mismatch_abstains(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "p.py"
    p.write_text(prog(99), encoding="utf-8")
    code, out, _ = _cli(capsys, "solve", "--calculator", "6", "--entities", json.dumps(BMI), "--program", str(p))
    assert code == 3 and "abstained" in out and "disagree" in out
    code, _, err = _cli(capsys, "solve", "--calculator", "6", "--entities", json.dumps(BMI), "--program", "/no/file")
    assert code == 1 and "cannot read --program" in err
    code, _, err = _cli(capsys, "solve", "--calculator", "6", "--entities", json.dumps(BMI), "--version", "7.0.0")
    assert code == 1 and "no version 7.0.0" in err


def test_cli_replay_bad_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "r.json"
    f.write_text('{"calculator": "body-mass-index"}', encoding="utf-8")
    code, _, err = _cli(capsys, "replay", str(f))
    assert code == 1 and "not an answer record" in err and "Traceback" not in err


def test_version_of_a_real_release_recomputes_the_old_rule() -> None:
    """meld-3-0 1.0.0 had no allocation cap; 1.1.0 caps at 40 (formulas/history holds both)."""
    sick = {"creatinine": [3.0, "mg/dL"], "Bilirubin": [10.0, "mg/dL"], "international normalized ratio": 2.5,
            "Sodium": [125, "mEq/L"], "Albumin": [1.5, "g/dL"], "sex": "Female"}  # 41.285 by hand
    assert solve("meld-3-0", sick, variant="benchmark").value == 40
    old = solve("meld-3-0", sick, version="1.0.0", variant="benchmark")
    assert old.value == 41 and old.version == "1.0.0" and "score_cap" not in old.constants
    assert replay(old)[1] == []
    tg = {"Total cholesterol": [200, "mg/dL"], "high-density lipoprotein cholesterol": [50, "mg/dL"],
          "Triglycerides": [2.0, "mmol/L"]}
    assert solve("ldl-friedewald", tg, variant="published").value == pytest.approx(114.572)  # 88.57 factor
    before = solve("ldl-friedewald", tg, variant="published", version="1.0.0").value  # molar mass 861.338
    assert before == pytest.approx(200 - 50 - 2.0 * 861.338 / 10 / 5, abs=1e-4)


def test_replay_flags_a_record_whose_content_hash_is_not_the_registry_s() -> None:
    rec = solve("body-mass-index", BMI, variant="benchmark")
    forged = rec.model_copy(update={"content_hash": "sha256:" + "0" * 64})
    diffs = replay(forged)[1]
    assert len(diffs) == 1 and diffs[0].startswith("content_hash")
