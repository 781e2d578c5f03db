"""Signed decisions (issue 27's done-when): keys made here with ssh-keygen, every forgery named by validate and verify.

A registry copy gets two signed versions of the sodium correction (each drafted by the author, approved
by someone else); each test then tampers with one thing and expects `formula validate` and
`formula verify` to fail with an R-SIGNATURE problem naming the file, version, decision and why.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from registry.governance.signatures import BEFORE_SIGNING, INVALID, DecisionView, decision_views
from registry.loader import load
from registry.yamlio import rt_dump, rt_load
from tests.helpers import Committee, add_person, committee, make_key, set_policy, signer_line
from tests.registry.helpers import NEW, NEWER, OLD, SODIUM, copy_registry, fingerprint, formula, problems

FILE = f"formulas/{SODIUM}.yaml"
KATZ = ["correction_per_mg_dl_glucose=0.016", "--label", "correction_per_mg_dl_glucose=Katz factor"]


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry whose sodium correction went OLD -> NEW (approved by chair) -> NEWER (approved by pharmacist)."""
    import _pytest.capture  # noqa: F401 - the module builds with the CLI in-process, outside a test's capsys

    from cli.main import main
    from registry.loader import clear_cache

    root = copy_registry(tmp_path_factory.mktemp("signed"))
    people = committee(root)

    def run(*argv: str) -> None:
        clear_cache()
        assert main([*argv, "--root", str(root)]) == 0, argv

    run("fix", SODIUM, "--set", *KATZ, "--reason", "Katz", *people.args("author"))
    run("approve", SODIUM, NEW, "--reason", "agreed", *people.args("chair"))
    run("fix", SODIUM, "--set", "reference_glucose=90", "--reason", "reference 90", *people.args("author"))
    run("approve", SODIUM, NEWER, "--reason", "agreed again", *people.args("pharmacist"))
    clear_cache()
    return root


@pytest.fixture()
def root(signed: Path, tmp_path: Path) -> Path:
    for d in ("formulas", "guidelines"):
        shutil.copytree(signed / d, tmp_path / d)
    return tmp_path


def _edit(root: Path, change: Any) -> None:
    """Change the sodium file's round-trip data in place (a hand edit, as a pull request would make it)."""
    path = root / FILE
    original = path.read_text(encoding="utf-8")
    data = rt_load(path)
    change({v["version"]: v for v in data["versions"]})
    path.write_text(rt_dump(data, original), encoding="utf-8")


def _fails(capsys, root: Path, *needles: str) -> list[str]:
    """validate and verify both fail, with an R-SIGNATURE problem holding every needle."""
    found = [p for p in problems(root) if "[R-SIGNATURE]" in p]
    assert any(all(n in p for n in needles) for p in found), found
    code, out, _ = formula(capsys, root, "validate")
    assert code == 1 and any(all(n in line for n in needles) for line in out.splitlines()), out
    code, out, _ = formula(capsys, root, "verify", "--format", "json")
    report = json.loads(out)
    assert code == INVALID and not report["ok"] and any(all(n in p for n in needles) for p in report["problems"])
    code, out, err = formula(capsys, root, "verify")  # the verdict on stdout, each problem behind it on stderr
    assert code == INVALID and out.splitlines() == [f"registry: {root} (given by --root)", out.splitlines()[1]]
    assert out.splitlines()[1].startswith("verify: FAILED: ") and any(all(n in line for n in needles)
                                                                      for line in err.splitlines()), err
    return found


# ---------------------------------------------------------------------- what holds


def test_the_signed_history_verifies(capsys, root: Path) -> None:
    assert problems(root) == []
    views = [v for v in decision_views(root, SODIUM) if v.version in (NEW, NEWER)]
    assert [(v.version, v.decision, v.principal, v.name, v.state) for v in views] == [
        (NEW, "draft", "author", "R. Maintainer", "verified"), (NEW, "approve", "chair", "Dr A. Chair", "verified"),
        (NEWER, "draft", "author", "R. Maintainer", "verified"),
        (NEWER, "approve", "pharmacist", "B. Pharmacist", "verified")]
    assert all(v.fingerprint and v.fingerprint.startswith("SHA256:") for v in views)
    assert isinstance(views[0], DecisionView) and views[0].date == load(root).calculators[SODIUM].active.effective.isoformat()
    before = [v for v in decision_views(root, SODIUM) if v.version == OLD]
    assert [(v.state, v.principal) for v in before] == [("recorded_before_signing", None)]
    code, out, _ = formula(capsys, root, "verify", "--format", "json")
    report = json.loads(out)  # the other calculators still rest on history recorded before signing
    assert code == BEFORE_SIGNING and report["verified"] == 1 and report["invalid"] == 0
    assert {r["slug"]: r["approved_by"] for r in report["versions"]}[SODIUM] == ["pharmacist"]
    code, out, err = formula(capsys, root, "verify")  # the verdict on stdout (issue 36), nothing on stderr
    assert code == BEFORE_SIGNING and err == "" and out.splitlines()[-1] == (
        f"verify: not verified: {report['active_versions'] - 1} of {report['active_versions']} active versions rest "
        "on decisions recorded before signing (no signature proves who approved them); 1 verified")


def test_a_fix_under_four_eyes_is_a_draft_and_only_another_approver_makes_it_active(capsys, tmp_path: Path) -> None:
    root = copy_registry(tmp_path)
    people = committee(root)
    code, out, err = formula(capsys, root, "fix", SODIUM, "--set", *KATZ, "--reason", "Katz", *people.args("author"))
    assert code == 0 and f"drafted {NEW}, not active: under four eyes" in out, err
    assert load(root).calculators[SODIUM].active.version == OLD
    before = fingerprint(root)
    for who, extra, why in [("author", ["--by", "chair", "--role", "chair"], "not who this key is"),
                            ("author", [], "four eyes"), ("nurse", [], "may not approve")]:
        code, _, err = formula(capsys, root, "approve", SODIUM, NEW, "--reason", "x", *people.args(who), *extra)
        assert code == 1 and why in err, (who, err)
    assert fingerprint(root) == before
    code, out, err = formula(capsys, root, "approve", SODIUM, NEW, "--reason", "ok", *people.args("chair"))
    assert code == 0 and "now active" in out, err
    assert problems(root) == []


def test_k_of_n_and_a_per_calculator_override(capsys, tmp_path: Path) -> None:
    root = copy_registry(tmp_path)
    people = committee(root, approvals_required=1, approvals_required_for={SODIUM: 2})
    formula(capsys, root, "fix", SODIUM, "--set", *KATZ, "--reason", "Katz", *people.args("author"))
    code, out, err = formula(capsys, root, "approve", SODIUM, NEW, "--reason", "ok", *people.args("chair"))
    assert code == 0 and "1 of 2 approvals" in out and load(root).calculators[SODIUM].active.version == OLD, err
    code, out, _ = formula(capsys, root, "pending", "--format", "json")
    assert json.loads(out)[0]["state"] == "awaiting approval (1 of 2)"
    code, out, err = formula(capsys, root, "approve", SODIUM, NEW, "--reason", "ok", *people.args("pharmacist"))
    assert code == 0 and "now active" in out, err
    assert problems(root) == []
    set_policy(root, approvals_required_for={SODIUM: 3})  # a stricter policy later: the active version falls short
    _fails(capsys, root, FILE, NEW, "too few approvers: 2 of 3")
    extra = committee(root, {"deputy": ("D. Deputy Chair", ["chair"])}, approvals_required_for={SODIUM: 3})
    code, out, err = formula(capsys, root, "approve", SODIUM, NEW, "--reason", "agreed", *extra.args("deputy"))
    assert code == 0 and "3 of 3 approvals" in out, err  # a further approval of the active version meets it
    assert problems(root) == []


def test_the_shipped_registry_validates_and_verify_says_it_predates_signing(capsys) -> None:
    from cli.main import main

    assert main(["validate"]) == 0
    capsys.readouterr()
    code = main(["verify", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == BEFORE_SIGNING and report["verified"] == 0 and report["invalid"] == 0
    assert report["recorded_before_signing"] == report["active_versions"] == len(load().calculators)


# ---------------------------------------------------------------------- what fails, named


def test_an_unknown_key(capsys, root: Path) -> None:
    signers = root / "formulas" / "policy" / "allowed_signers"
    signers.write_text("".join(line for line in signers.read_text(encoding="utf-8").splitlines(keepends=True)
                               if not line.startswith("chair ")), encoding="utf-8")
    _fails(capsys, root, FILE, f"versions {NEW} approve decision", "unknown key")


def test_an_expired_key(capsys, root: Path, signed: Path) -> None:
    signers = root / "formulas" / "policy" / "allowed_signers"
    key = make_key("chair")
    lines = [signer_line("chair", key, valid_before="20261130") if line.startswith("chair ") else line
             for line in signers.read_text(encoding="utf-8").splitlines(keepends=True)]
    signers.write_text("".join(lines), encoding="utf-8")
    _fails(capsys, root, FILE, f"versions {NEW} approve decision", "is not valid on", "valid-before 20261130")


def test_a_principal_without_the_role(capsys, root: Path) -> None:
    import yaml

    policy = root / "formulas" / "policy" / "governance.yaml"
    data = yaml.safe_load(policy.read_text(encoding="utf-8"))
    data["people"]["pharmacist"]["roles"] = ["nurse"]
    policy.write_text(yaml.safe_dump(data), encoding="utf-8")
    _fails(capsys, root, FILE, f"versions {NEWER} approve decision", "role 'renal pharmacist' is not one of")


def test_a_role_that_may_not_approve(capsys, root: Path) -> None:
    set_policy(root, approver_roles=["chair"])
    _fails(capsys, root, FILE, f"versions {NEWER} approve decision", "may not approve")
    _fails(capsys, root, FILE, f"versions {NEWER}", "too few approvers: 0 of 1")


def test_a_hand_edited_approved_by(capsys, root: Path) -> None:
    import datetime as dt

    _edit(root, lambda v: v[NEWER].__setitem__("approved_by", {"who": "chair", "role": "chair",
                                                              "date": dt.date(2026, 12, 1)}))
    _fails(capsys, root, FILE, f"versions {NEWER} approved_by", "not a decision")


def test_a_typed_approval_on_history_before_signing(capsys, root: Path) -> None:
    _edit(root, lambda v: v[OLD].__setitem__("changelog", "approved by the chair"))
    _fails(capsys, root, FILE, f"versions {OLD}", "sealed before signing")


def test_an_edited_signed_field(capsys, root: Path) -> None:
    _edit(root, lambda v: v[NEWER]["decisions"][1].__setitem__("reason", "agreed, and more"))
    _fails(capsys, root, FILE, f"versions {NEWER} approve decision", "does not match the statement")


def test_no_decision_joins_a_log_that_does_not_verify(capsys, root: Path) -> None:
    _edit(root, lambda v: v[NEWER]["decisions"][0].__setitem__("reason", "reference 95"))
    people = Committee(root, {"author": make_key("author"), "chair": make_key("chair")})
    before = fingerprint(root)
    for argv in (["fix", SODIUM, "--set", "reference_glucose=95", "--reason", "x", *people.args("author")],
                 ["review", SODIUM, *people.args("chair")]):
        code, _, err = formula(capsys, root, *argv)
        assert code == 1 and "must verify before a new one joins them" in err and "[R-SIGNATURE]" in err, err
    assert fingerprint(root) == before


def test_a_signature_moved_to_another_version(capsys, root: Path) -> None:
    def move(v: dict) -> None:
        approval = v[NEW]["decisions"][1]
        v[NEWER]["decisions"][1]["principal"] = approval["principal"]
        v[NEWER]["decisions"][1]["role"] = approval["role"]
        v[NEWER]["decisions"][1]["reason"] = approval["reason"]
        v[NEWER]["decisions"][1]["signature"] = approval["signature"]

    _edit(root, move)
    _fails(capsys, root, FILE, f"versions {NEWER} approve decision (chair", "does not match the statement")


def test_a_deleted_middle_decision(capsys, root: Path) -> None:
    _edit(root, lambda v: v[NEW]["decisions"].pop(1))
    _fails(capsys, root, FILE, f"versions {NEWER} draft decision", "chain is broken")


def test_reordered_decisions(capsys, root: Path) -> None:
    _edit(root, lambda v: v[NEWER]["decisions"].reverse())
    _fails(capsys, root, FILE, f"versions {NEWER}", "chain is broken")


def test_a_second_principal_with_the_same_key(capsys, root: Path) -> None:
    add_person(root, "chair-deputy", "D. Deputy", ["chair"], make_key("author"))
    found = _fails(capsys, root, FILE, f"versions {NEW} draft decision", "listed for several principals")
    assert any("(signers)" not in p for p in found)
    assert any("allowed_signers" in p and "one key is one person" in p for p in problems(root))


def test_a_principal_pattern_in_allowed_signers_is_refused(capsys, root: Path) -> None:
    signers = root / "formulas" / "policy" / "allowed_signers"
    text = signers.read_text(encoding="utf-8")
    signers.write_text(text.replace("chair ", "* ", 1), encoding="utf-8")
    assert any("allowed_signers" in p and "literal identity" in p for p in problems(root))


def test_a_new_version_without_a_signed_decision(capsys, root: Path) -> None:
    _edit(root, lambda v: v[NEWER].__setitem__("decisions", []))
    _fails(capsys, root, FILE, f"versions {NEWER}", "no signed release or draft decision")


def test_review_dates_come_from_the_signed_review(capsys, root: Path, signed: Path) -> None:
    people = Committee(root, {"pharmacist": make_key("pharmacist")})
    code, _, err = formula(capsys, root, "review", SODIUM, *people.args("pharmacist"))
    assert code == 0 and problems(root) == [], err
    import datetime as dt

    _edit(root, lambda v: v[NEWER].__setitem__("next_review", dt.date(2030, 1, 1)))
    _fails(capsys, root, FILE, f"versions {NEWER} last_review/next_review", "last signed review says")


def test_without_required_signatures_typed_decisions_are_never_shown_as_verified(capsys, tmp_path: Path) -> None:
    root = copy_registry(tmp_path)
    set_policy(root, require_signatures=False)
    code, _, err = formula(capsys, root, "fix", SODIUM, "--set", *KATZ, "--reason", "Katz", "--draft",
                           "--by", "A. Author", "--role", "informatician")
    assert code == 0, err
    code, _, err = formula(capsys, root, "approve", SODIUM, NEW, "--by", "A. Author", "--role", "chair",
                           "--reason", "mine")
    assert code == 1 and "cannot also approve" in err  # four eyes still compares the typed names
    code, out, err = formula(capsys, root, "approve", SODIUM, NEW, "--by", "B. Chair", "--role", "chair",
                             "--reason", "ok")
    assert code == 0 and "now active" in out, err
    assert problems(root) == []
    code, out, _ = formula(capsys, root, "history", SODIUM, "--format", "json")
    row = json.loads(out)[-1]
    assert (row["signing"], row["released_by"]) == ("not signed", "A. Author (typed)")
    code, out, _ = formula(capsys, root, "verify", "--format", "json")
    assert code == INVALID and json.loads(out)["invalid"] == 1  # a consumer is never told it is verified


def test_verifications_are_cached_so_validate_runs_ssh_keygen_once_per_decision(root: Path, cache_dir: Path,
                                                                                  monkeypatch) -> None:
    from registry.trust import sshsig
    from tests.helpers import count_calls

    calls = count_calls(monkeypatch, sshsig, "_run")
    assert problems(root) == [] and len(calls) == 5  # the four signed decisions, each verified once; the file read
    sshsig._memo.clear()  # a new process: the cache is read back from the cache folder
    assert problems(root) == [] and len(calls) == 5  # none verified again
    assert (cache_dir / "signatures-2.json").is_file()


def test_a_refused_signature_is_cached_as_well(capsys, root: Path, cache_dir: Path, monkeypatch) -> None:
    """Issue 37, attack 6: a wrong signature cost an ssh-keygen run on every validate."""
    from registry.trust import sshsig
    from tests.helpers import count_calls

    _edit(root, lambda v: v[NEWER]["decisions"][1].__setitem__("reason", "agreed, and more"))
    calls = count_calls(monkeypatch, sshsig, "_run")
    first = problems(root)
    assert any("does not match the statement" in p for p in first)
    n = len(calls)
    sshsig._memo.clear()
    assert problems(root) == first and len(calls) == n  # the refusal is remembered, not re-run


def test_more_decisions_on_a_version_than_the_cap_are_refused(capsys, root: Path) -> None:
    _edit(root, lambda v: v[NEWER]["decisions"].extend([dict(v[NEWER]["decisions"][1]) for _ in range(50)]))
    assert any(FILE in p and "decisions" in p and "50" in p for p in problems(root))


# ---------------------------------------------------------------------- allowed_signers as OpenSSH reads it


def _signers(root: Path) -> Path:
    return root / "formulas" / "policy" / "allowed_signers"


def test_an_unquoted_validity_is_named_with_its_line(capsys, root: Path) -> None:
    """Issue 37, attack 5: `valid-before=YYYYMMDD` unquoted passed here, then ssh-keygen refused every decision."""
    path = _signers(root)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    n = next(i for i, line in enumerate(lines, 1) if line.startswith("chair "))
    lines[n - 1] = lines[n - 1].replace('namespaces="formula-registry"',
                                        'namespaces="formula-registry",valid-before=20991231')
    path.write_text("".join(lines), encoding="utf-8")
    found = problems(root)
    assert any(f"allowed_signers:{n}:" in p and 'valid-before="20991231"' in p and "double quotes" in p
               for p in found), found


def test_a_line_ssh_keygen_cannot_read_is_named_with_its_line(capsys, root: Path) -> None:
    import base64

    blob = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x1f" + b"\x01" * 31  # a key 31 bytes long: not ed25519
    with open(_signers(root), "a", encoding="utf-8") as f:
        f.write(f'nurse namespaces="formula-registry" ssh-ed25519 {base64.b64encode(blob).decode()}\n')
    n = len(_signers(root).read_text(encoding="utf-8").splitlines())
    found = problems(root)
    assert any(f"allowed_signers:{n}:" in p and "ssh-keygen cannot read this line" in p for p in found), found


def test_a_new_calculator_is_locked_signed_and_approved_by_someone_else(capsys, tmp_path: Path) -> None:
    root = copy_registry(tmp_path)
    people = committee(root)
    data = rt_load(root / "formulas" / "cha2ds2-va.yaml")
    data["slug"] = "cha2ds2-va-copy"
    first = data["versions"][-1]
    first["version"] = "1.0.0"
    data["versions"] = [first]
    (root / "formulas" / "cha2ds2-va-copy.yaml").write_text(rt_dump(data), encoding="utf-8")
    code, _, err = formula(capsys, root, "lock")
    assert code == 1 and "give --key PATH" in err  # a new version's release is a decision, signed
    code, out, err = formula(capsys, root, "lock", *people.args("author"))
    assert code == 0 and "signed as released by R. Maintainer (author)" in out and "needs approval" in out, err
    assert any("cha2ds2-va-copy" in p and "too few approvers: 0 of 1" in p for p in problems(root))
    code, out, err = formula(capsys, root, "approve", "cha2ds2-va-copy", "1.0.0", "--reason", "new score",
                             *people.args("chair"))
    assert code == 0 and "1 of 1 approvals" in out, err
    code, _, err = formula(capsys, root, "texts", "render")
    assert code == 0, err
    assert problems(root) == []


# ---------------------------------------------------------------------- formula show


def _decision_lines(out: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  decisions on version"))
    return [line for line in lines[start + 1:] if line.startswith("    - ")][:10]


def test_show_names_the_active_versions_verified_decisions_with_keys(capsys, root: Path) -> None:
    mine = {v.principal: v for v in decision_views(root, SODIUM) if v.version == NEWER}
    fps, day = {p: v.fingerprint for p, v in mine.items()}, mine["author"].date
    code, out, err = formula(capsys, root, "show", SODIUM)
    assert code == 0, err
    assert f"  decisions on version {NEWER} " in out
    assert _decision_lines(out)[:2] == [
        f"    - draft by R. Maintainer (clinical informatician) on {day}, key {fps['author']}: verified",
        f"    - approve by B. Pharmacist (renal pharmacist) on {mine['pharmacist'].date}, key "
        f"{fps['pharmacist']}: verified"]
    code, out, _ = formula(capsys, root, "show", SODIUM, "--format", "json")
    shown = json.loads(out)["active_decisions"]
    assert [(d["decision"], d["principal"], d["state"]) for d in shown] == [("draft", "author", "verified"),
                                                                           ("approve", "pharmacist", "verified")]


def test_show_never_calls_an_edited_decision_verified(capsys, root: Path) -> None:
    _edit(root, lambda v: v[NEWER]["decisions"][1].__setitem__("reason", "agreed, and more"))
    code, out, err = formula(capsys, root, "show", SODIUM)  # a calculator that fails validation is left out
    assert code == 1 and f"{SODIUM} is left out" in err and "does not match the statement" in err
    assert "verified" not in out


def test_show_marks_the_shipped_history_as_recorded_before_signing(capsys) -> None:
    from cli.main import main

    assert main(["show", SODIUM]) == 0
    lines = _decision_lines(capsys.readouterr().out)
    assert lines and all("recorded before signing (not verified)" in line or "(typed, not verified)" in line
                         for line in lines)
    assert not any(line.endswith(": verified") for line in lines)


def test_show_says_typed_records_are_not_verified(capsys, tmp_path: Path) -> None:
    root = copy_registry(tmp_path)
    set_policy(root, require_signatures=False)
    formula(capsys, root, "fix", SODIUM, "--set", *KATZ, "--reason", "Katz", "--draft", "--by", "A. Author",
            "--role", "informatician")
    code, out, err = formula(capsys, root, "approve", SODIUM, NEW, "--by", "B. Chair", "--role", "chair",
                             "--reason", "ok")
    assert code == 0, err
    code, out, _ = formula(capsys, root, "show", SODIUM)
    lines = _decision_lines(out)
    assert "    - released by A. Author (informatician) (typed, not verified)" in lines
    assert any(line.startswith("    - approved by B. Chair (chair) on ") and line.endswith("(typed, not verified)")
               for line in lines)
    assert not any(line.endswith(": verified") for line in lines)


# ---------------------------------------------------------------------- rejected drafts on record

REJECTED = f"formulas/drafts/rejected/{SODIUM}.yaml"


@pytest.fixture()
def rejected(capsys, root: Path) -> Path:
    """`root` with a further draft, rejected by the chair: its record verifies."""
    from registry.versions import bump

    people = Committee(root, {"author": make_key("author"), "chair": make_key("chair")})
    code, _, err = formula(capsys, root, "fix", SODIUM, "--set", "reference_glucose=95", "--reason", "reference 95",
                           *people.args("author"))
    assert code == 0, err
    code, out, err = formula(capsys, root, "reject", SODIUM, bump(NEWER, "minor"), "--reason", "no evidence",
                             *people.args("chair"))
    assert code == 0 and "rejected by Dr A. Chair" in out, err
    assert problems(root) == []
    return root


def _edit_rejection(root: Path, change: Any) -> None:
    import yaml

    path = root / REJECTED  # a list, as `formula reject` writes it
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def test_an_edited_rejection_record(capsys, rejected: Path) -> None:
    _edit_rejection(rejected, lambda d: d[0]["decisions"][-1].__setitem__("reason", "no evidence at all"))
    _fails(capsys, rejected, REJECTED, "rejection 1", "reject decision (chair", "does not match the statement")


def test_a_rejection_forged_under_another_principal(capsys, rejected: Path) -> None:
    _edit_rejection(rejected, lambda d: d[0]["decisions"][-1].__setitem__("principal", "pharmacist"))
    _fails(capsys, rejected, REJECTED, "reject decision (pharmacist", "signed with the key of chair")


def test_a_rejection_record_with_other_content(capsys, rejected: Path) -> None:
    _edit_rejection(rejected, lambda d: d[0].__setitem__("content", "sha256:" + "0" * 64))
    _fails(capsys, rejected, REJECTED, "draft decision (author", "does not match the statement")


def test_a_rejection_record_without_its_draft_decision(capsys, rejected: Path) -> None:
    _edit_rejection(rejected, lambda d: d[0]["decisions"].pop(0))
    _fails(capsys, rejected, REJECTED, "rejection 1", "reject decision (chair", "the chain is broken")


def test_a_rejection_record_whose_rejection_is_not_last(capsys, rejected: Path) -> None:
    _edit_rejection(rejected, lambda d: d[0]["decisions"].reverse())
    _fails(capsys, rejected, REJECTED, "rejection 1", "one reject decision, last")


def test_a_rejection_record_moved_to_another_calculator(capsys, rejected: Path) -> None:
    (rejected / REJECTED).rename(rejected / "formulas" / "drafts" / "rejected" / "anion-gap.yaml")
    _fails(capsys, rejected, "formulas/drafts/rejected/anion-gap.yaml", "rejection 1", "does not match the statement")


def test_a_typed_rejection_under_required_signatures(capsys, rejected: Path) -> None:
    _edit_rejection(rejected, lambda d: d.append({"version": "9.0.0", "changelog": "x", "effective": "2026-12-01",
                                                  "rejected_by": {"who": "Dr A. Chair", "role": "chair",
                                                                  "date": "2026-12-01", "reason": "no"}}))
    _fails(capsys, rejected, REJECTED, "rejection 2 (version 9.0.0)", "a typed rejection")


def test_a_signed_rejection_of_a_typed_draft_verifies(capsys, tmp_path: Path) -> None:
    root = copy_registry(tmp_path)
    people = committee(root, require_signatures=False)
    formula(capsys, root, "fix", SODIUM, "--set", *KATZ, "--reason", "Katz", "--draft", "--by", "A. Author",
            "--role", "informatician")
    code, _, err = formula(capsys, root, "reject", SODIUM, NEW, "--reason", "no", *people.args("chair"))
    assert code == 0, err
    assert problems(root) == []
    _edit_rejection(root, lambda d: d[0]["decisions"][-1].__setitem__("reason", "no, never"))
    _fails(capsys, root, REJECTED, "reject decision (chair", "does not match the statement")


# ---------------------------------------------------------------------- dates that must be true (issue 37)


def _forge_approval(root: Path, who: str, day: str, **window: str) -> None:
    """Give `who`'s key the validity `window` and append to NEWER an approval they sign dated `day`, chained onto
    the log's head: a signature that is genuine, on a date the CLI would refuse."""
    import datetime as dt

    from registry.trust.decisionlog import decide, head, identify, trust
    from registry.trust.decisionlog import file_entries as entries_of
    from registry.versions import read_lock

    signers = root / "formulas" / "policy" / "allowed_signers"
    key = make_key(who)
    signers.write_text("".join(signer_line(who, key, **window) if line.startswith(f"{who} ") else line
                               for line in signers.read_text(encoding="utf-8").splitlines(keepends=True)),
                       encoding="utf-8")
    reg = load(root)
    c = reg.calculators[SODIUM]
    lock = read_lock(reg.lock_path)[SODIUM]
    ident, role = identify(trust(reg.formulas_dir), key, None, None, dt.date.fromisoformat(day))
    v = next(x for x in c.versions if x.version == NEWER)
    forged = decide(ident, role, slug=SODIUM, version=NEWER, content=lock[NEWER], effective=v.effective,
                    decision="approve", day=dt.date.fromisoformat(day), reason="backdated",
                    previous=head(entries_of(reg, c, lock)))
    _edit(root, lambda vs: vs[NEWER]["decisions"].append(forged))


def test_an_expired_key_cannot_sign_a_backdated_decision(capsys, root: Path) -> None:
    """Issue 37, attack 1: a key whose valid-before has passed signs an approval dated inside its window, years
    before the draft it chains onto."""
    _forge_approval(root, "chair", "2019-06-01", valid_before="20200101")
    _fails(capsys, root, FILE, f"versions {NEWER} approve decision (chair, 2019-06-01)", "dated 2019-06-01, before")


def test_a_decision_dated_before_the_one_it_follows(capsys, root: Path, monkeypatch) -> None:
    import datetime as dt

    monkeypatch.setenv("FORMULA_TODAY", "2026-12-05")
    _edit(root, lambda v: v[NEWER]["decisions"][0].__setitem__("date", dt.date(2026, 12, 3)))
    _edit(root, lambda v: v[NEWER]["decisions"][1].__setitem__("date", dt.date(2026, 12, 2)))
    _fails(capsys, root, FILE, f"versions {NEWER} approve decision (pharmacist, 2026-12-02)",
           "before the decision it follows (draft by author on 2026-12-03)")


def test_a_key_valid_only_later_cannot_sign_a_decision_dated_in_the_future(capsys, root: Path, monkeypatch) -> None:
    import datetime as dt

    from registry import clock

    monkeypatch.setattr(clock, "real_today", lambda: dt.date(2099, 12, 31))  # a forger's clock: `formula` refuses it
    _forge_approval(root, "chair", "2099-06-01", valid_after="20990101")
    monkeypatch.undo()
    _fails(capsys, root, FILE, f"versions {NEWER} approve decision (chair, 2099-06-01)", "after today")


def test_no_signed_decision_is_older_than_the_seal(capsys, root: Path) -> None:
    """A calculator whose log has no signed decision before it cannot take a backdated one either."""
    _forge_approval(root, "chair", "2026-11-15")
    _fails(capsys, root, FILE, f"versions {NEWER} approve decision (chair, 2026-11-15)", "before signing began")


# ---------------------------------------------------------------------- the seal is closed (issue 37, item 2)

SEAL = "formulas/policy/recorded_before_signing.yaml"


def _lock(root: Path) -> dict:
    return json.loads((root / "formulas" / "REGISTRY.lock").read_text(encoding="utf-8"))


def _set_lock(root: Path, data: dict) -> None:
    (root / "formulas" / "REGISTRY.lock").write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_an_entry_added_to_the_seal_is_refused(capsys, root: Path) -> None:
    """Issue 37, attack 2: one entry appended to the seal passed a typed version off as history."""
    import yaml

    path = root / SEAL
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data[SODIUM]["9.9.9"] = dict(data[SODIUM][OLD])
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    _fails(capsys, root, SEAL, "holds other entries than the seal", "fixed on 2026-12-01")


def test_a_seal_the_lock_does_not_fix_is_refused(capsys, root: Path) -> None:
    data = _lock(root)
    del data["sealed_before_signing"]
    _set_lock(root, data)
    _fails(capsys, root, SEAL, "is not fixed by formulas/REGISTRY.lock")


def test_a_sealed_version_released_after_the_seal_is_refused(capsys, root: Path) -> None:
    data = _lock(root)
    data["sealed_before_signing"]["date"] = "2020-01-01"  # as if the version had been added to the seal since
    _set_lock(root, data)
    _fails(capsys, root, FILE, f"versions {OLD}", "after the seal of history before signing (2020-01-01)")


def test_the_shipped_lock_fixes_the_shipped_seal() -> None:
    from registry.trust.decisionlog import seal_digest, trust
    from tests.helpers import SHIPPED_ROOT

    t = trust(SHIPPED_ROOT / "formulas")
    assert t.seal is not None and t.seal["digest"] == seal_digest(t.legacy) and t.seal["date"] == "2026-12-01"


# ---------------------------------------------------------------------- names and drafts (issue 37, item 7)


def test_two_principals_with_one_name_is_a_problem(capsys, root: Path) -> None:
    add_person(root, "chair-2", " Dr  A. Chair", ["chair"], make_key("chair-2"))
    assert any("governance.yaml" in p and "chair, chair-2 share the name" in p and "[R-SIGNATURE]" in p
               for p in problems(root))


def test_the_name_at_signing_is_signed_and_shown_after_people_changes(capsys, root: Path) -> None:
    import yaml

    assert "name: Dr A. Chair" in (root / FILE).read_text(encoding="utf-8")  # recorded beside the signed fields
    policy = root / "formulas" / "policy" / "governance.yaml"
    data = yaml.safe_load(policy.read_text(encoding="utf-8"))
    data["people"]["chair"]["name"] = "Prof. Renamed"  # a later edit of people: relabels nothing signed
    policy.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert problems(root) == []
    approval = next(v for v in decision_views(root, SODIUM) if v.version == NEW and v.decision == "approve")
    assert approval.name == "Dr A. Chair" and approval.state == "verified"
    _edit(root, lambda v: v[NEW]["decisions"][1].__setitem__("name", "Someone Else"))
    _fails(capsys, root, FILE, f"versions {NEW} approve decision (chair", "does not match the statement")


def test_a_statement_without_a_name_is_the_statement_signed_before_names_were_recorded() -> None:
    import datetime as dt

    from registry.schema import Decision
    from registry.trust.decisionlog import statement

    d = Decision(decision="approve", principal="chair", role="chair", date=dt.date(2026, 12, 1), signature="-")
    body = json.loads(statement(SODIUM, NEW, "sha256:" + "0" * 64, dt.date(2026, 12, 1), d))
    assert "name" not in body and sorted(body) == sorted(["format", "slug", "version", "content", "effective",
                                                          "decision", "principal", "role", "date", "reason",
                                                          "previous"])
    named = json.loads(statement(SODIUM, NEW, None, dt.date(2026, 12, 1), d.model_copy(update={"name": "A"})))
    assert named["name"] == "A"


def test_an_approval_that_does_not_count_on_a_draft_is_a_warning_in_validate(capsys, root: Path) -> None:
    from registry.trust.decisionlog import decide, draft_entries, head, identify, trust
    from registry.yamlio import rt_dump, rt_load

    people = Committee(root, {"author": make_key("author"), "nurse": make_key("nurse")})
    code, _, err = formula(capsys, root, "fix", SODIUM, "--set", "reference_glucose=95", "--reason", "95",
                           *people.args("author"))
    assert code == 0, err
    reg = load(root)
    found = draft_entries(reg, SODIUM)
    assert found is not None
    d, entries = found
    v = d.versions[-1]
    ident, role = identify(trust(reg.formulas_dir), people.keys["nurse"], None, None, v.effective)
    forged = decide(ident, role, slug=SODIUM, version=v.version, content=entries[0].content or "",
                    effective=v.effective, decision="approve", day=v.effective, reason="not mine to approve",
                    previous=head(entries))
    path = root / "formulas" / "drafts" / f"{SODIUM}.yaml"
    data = rt_load(path)
    data["versions"][-1]["decisions"].append(forged)
    path.write_text(rt_dump(data), encoding="utf-8")
    code, out, err = formula(capsys, root, "validate")
    assert code == 0, out + err
    assert f"warning: {SODIUM} {v.version} (draft): role 'nurse' may not approve" in out + err
