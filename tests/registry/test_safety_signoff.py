"""The clinical safety officer's signed sign-off (registry.trust.safety_signoff, safety_signing): who may
sign, that it verifies, and that a signed scoring change makes it stale for that calculator (case, verify,
review-pr)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import GIT_ID, PEOPLE, committee
from tests.registry.helpers import SODIUM, copy_registry, fingerprint, formula

KATZ = ["correction_per_mg_dl_glucose=0.016", "--label", "correction_per_mg_dl_glucose=Katz factor"]
OFFICER = {**PEOPLE, "officer": ("Dr S. Officer", ["clinical safety officer"])}
SIGNOFFS = Path("formulas/safety/signoffs.yaml")


@pytest.fixture()
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy with the committee and a clinical safety officer; the author releases at once (four eyes off)."""
    root = copy_registry(tmp_path / "repo")
    c = committee(root, OFFICER, four_eyes=False, approver_roles=[])
    monkeypatch.setenv("FORMULA_SIGNING_KEY", str(c.keys["author"]))
    return root


def _keys(root: Path) -> dict[str, list[str]]:
    from tests.helpers import keys_of

    k = keys_of(root, OFFICER)
    return {p: k.args(p) for p in OFFICER}


def _case(capsys, root: Path) -> dict:
    code, out, err = formula(capsys, root, "safety", "case", "--format", "json")
    assert code == 0, err
    return json.loads(out)["sign_off"]


def test_only_the_safety_officer_signs_and_a_refusal_writes_nothing(capsys, root: Path) -> None:
    keys, before = _keys(root), fingerprint(root)
    code, _, err = formula(capsys, root, "safety", "sign-off", *keys["chair"], "--reason", "reviewed")
    assert code == 1 and "'chair', which may not sign the clinical safety case" in err
    assert "clinical safety officer" in err and fingerprint(root) == before
    code, _, err = formula(capsys, root, "safety", "sign-off", *keys["officer"], "--reason", " ")
    assert code == 1 and "--reason" in err and fingerprint(root) == before
    code, out, err = formula(capsys, root, "safety", "sign-off", *keys["officer"], "--reason", "log reviewed")
    assert code == 0, err
    assert "safety case signed by Dr S. Officer (clinical safety officer)" in out and "62 active versions" in out
    s = _case(capsys, root)
    assert (s["state"], s["verified"], s["by"], s["covers"], s["stale_for"]) == (
        "signed", True, "officer", 62, [])
    code, out, _ = formula(capsys, root, "verify", "--format", "json")
    assert json.loads(out)["safety"]["state"] == "signed"
    assert formula(capsys, root, "validate")[0] == 0  # a sign-off that verifies is no problem


def test_a_forged_sign_off_fails_verification(capsys, root: Path) -> None:
    keys = _keys(root)
    assert formula(capsys, root, "safety", "sign-off", *keys["officer"], "--reason", "log reviewed")[0] == 0
    path = root / SIGNOFFS
    path.write_text(path.read_text(encoding="utf-8").replace("reason: log reviewed", "reason: all fine"),
                    encoding="utf-8")
    code, out, err = formula(capsys, root, "validate")  # checked as every other signed decision is
    assert code == 1 and "sign-off does not verify" in out + err and "[R-SAFETY]" in out + err
    code, out, err = formula(capsys, root, "safety", "case")  # no case is made from a registry that fails
    assert code == 1 and "sign-off does not verify" in err
    code, out, err = formula(capsys, root, "verify")
    assert code == 1 and "sign-off does not verify" in out + err


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *GIT_ID, *args], cwd=root, check=True, capture_output=True, timeout=60)


def test_a_signed_scoring_change_makes_it_stale_for_that_calculator(capsys, root: Path) -> None:
    keys = _keys(root)
    assert formula(capsys, root, "safety", "sign-off", *keys["officer"], "--reason", "log reviewed")[0] == 0
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "signed"]):
        _git(root, *args)
    code, out, err = formula(capsys, root, "fix", SODIUM, "--set", *KATZ, "--reason", "Katz")
    assert code == 0, err
    s = _case(capsys, root)
    assert (s["state"], s["stale_for"], s["hazards_changed"]) == ("stale", [SODIUM], [])
    code, out, _ = formula(capsys, root, "verify")
    assert f"STALE for {SODIUM}" in out
    code, out, err = formula(capsys, root, "review-pr", "--base", "main", "--format", "json")
    safety = json.loads(out)["safety"]
    assert safety["invalidated"]["by_this_change"] == [SODIUM] and safety["sign_off_base"] == "signed", err
    code, out, _ = formula(capsys, root, "review-pr", "--base", "main")
    assert "### Clinical safety" in out and f"stale for {SODIUM}" in out


def test_a_changed_hazard_is_named_and_stales_its_calculators(capsys, root: Path) -> None:
    keys = _keys(root)
    assert formula(capsys, root, "safety", "sign-off", *keys["officer"], "--reason", "log reviewed")[0] == 0
    path = root / "formulas" / "safety" / "hazards.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("    status: accepted\n", "    status: open\n", 1),
                    encoding="utf-8")
    s = _case(capsys, root)
    assert s["state"] == "stale" and s["hazards_changed"] == ["H-012"]
    assert "ideal-body-weight" in s["stale_for"] and SODIUM in s["stale_for"]
