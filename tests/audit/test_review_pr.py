"""`formula review-pr` on a real git repository: the shipped registry committed on main, a change on a branch.

The expected numbers come from the Devine formula itself, not from the report: IBW is 50 (or 45.5) kg
plus 2.3 kg per inch above the base height, so moving the base from 60 to 61 inches lowers every
patient's IBW by exactly 2.3 kg.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from registry.loader import PROJECT_ROOT
from tests.helpers import PEOPLE, committee, copy_registry, make_key, run

IBW = "ideal-body-weight"
DEPENDANTS = ["adjusted-body-weight", "creatinine-clearance-cockcroft-gault"]
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
CALCIUM = "calcium-correction"  # no calculator depends on it
CALCIUM_OPENING = "Total serum calcium corrected for a low albumin"


def git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def key(who: str = "author") -> list[str]:
    """`--key PATH` of a person of the test committee (tests.helpers.PEOPLE; one key per name and run)."""
    return ["--key", str(make_key(who))]


def make_repo(dest: Path, **policy: object) -> Path:
    """The shipped registry with a signing committee (by default one whose signed maintainer releases at once)
    and one stored run, committed on `main`; then a branch `change` checked out."""
    copy_registry(dest)
    committee(dest, **{"four_eyes": False, "approver_roles": [], **policy})
    shutil.copytree(PROJECT_ROOT / "results" / "embedded" / "gold-solve", dest / "results" / "gold-solve")
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "registry")
    git(dest, "checkout", "-qb", "change")
    return dest


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def review(capsys: pytest.CaptureFixture[str], repo: Path, *extra: str) -> tuple[int, dict, str]:
    code, out, err = run(capsys, "review-pr", "--base", "main", "--root", str(repo), "--format", "json", *extra)
    return code, (json.loads(out) if out.strip() else {}), err


def by_slug(report: dict) -> dict[str, dict]:
    return {c["slug"]: c for c in report["calculators"]}


def edit_active_text(repo: Path, slug: str, old: str, new: str) -> None:
    """Change the active (last) version's text of a calculator by hand."""
    path = repo / "formulas" / f"{slug}.yaml"
    text = path.read_text(encoding="utf-8")
    head, sep, tail = text.rpartition(old)
    assert sep, f"{old!r} not in {path.name}"
    path.write_text(head + new + tail, encoding="utf-8")


def gold_solve_rows(repo: Path, slugs: set[str]) -> int:
    lines = (repo / "results" / "gold-solve" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return sum(json.loads(line)["text_slug"] in slugs for line in lines if line.strip())


def test_a_constant_fix_is_reported_with_its_values_answers_dependants_and_stale_runs(repo, capsys) -> None:
    code, _, err = run(capsys, "fix", IBW, "--set", "base_height=61", "--reason", "base height of 61 inches",
                       "--with-dependants", "--root", str(repo), *key())
    assert code == 0, err
    git(repo, "add", "-A")  # the new snapshots under formulas/history/ too (without them the head is invalid)
    git(repo, "commit", "-qm", "fix")

    code, report, err = review(capsys, repo)
    assert code == 0, err
    assert report["exit"] == 0 and report["problems"] == [] and report["kind"] == "clinical change"
    calcs = by_slug(report)
    assert set(calcs) == {IBW, *DEPENDANTS}
    ibw = calcs[IBW]
    assert (ibw["base_version"], ibw["head_version"], ibw["kind"]) == ("1.0.1", "1.1.0", "clinical change")
    [change] = ibw["changes"]
    assert (change["what"], change["name"], change["old"], change["new"], change["unit"]) == (
        "constant", "base_height", 60, 61, "in")
    effect = ibw["effect"]
    assert effect["computed"] and effect["cases"] == 40 and effect["changed"] == 40  # every IBW moves
    assert effect["largest_abs"] == 2.3  # one inch of the Devine formula
    assert len(effect["examples"]) == 3
    assert all(round(x["before"] - x["after"], 6) == 2.3 for x in effect["examples"])
    assert ibw["dependants"] == DEPENDANTS
    assert any("+" in line and "61 inches" in line for line in ibw["text_diff"])
    [decision] = ibw["decisions"]  # the signed release; the versions before it were recorded before signing
    assert (decision["decision"], decision["principal"], decision["name"], decision["state"]) == (
        "release", "author", PEOPLE["author"][0], "verified")
    assert decision["fingerprint"].startswith("SHA256:")
    # the dependants are computed too, and the stored run's cases of all three become stale
    assert calcs["adjusted-body-weight"]["effect"]["changed"] == 40
    [stale] = report["stale_runs"]
    assert stale["run"] == "results/gold-solve/results.jsonl"
    assert stale["calculators"] == sorted({IBW, *DEPENDANTS})
    assert stale["stale"] == gold_solve_rows(repo, {IBW, *DEPENDANTS})

    # the committed head names the same review; the markdown is the same bytes each time
    code, by_rev, _ = review(capsys, repo, "--head", "change")
    assert code == 0 and by_rev["calculators"] == report["calculators"] and by_rev["head"]["commit"] == git(
        repo, "rev-parse", "change")
    first = run(capsys, "review-pr", "--base", "main", "--root", str(repo))
    assert first == run(capsys, "review-pr", "--base", "main", "--root", str(repo))
    assert first[0] == 0 and first[1].startswith("## Registry review: main (")


def test_a_hand_edit_without_a_release_exits_1_and_names_the_problem(repo, capsys) -> None:
    from tests.helpers import edit

    edit(repo / "formulas" / f"{IBW}.yaml", "value: 60", "value: 61")
    code, report, _ = review(capsys, repo)
    assert code == 1 and report["exit"] == 1
    assert any(IBW in p and "R-LOCK-CHANGED" in p for p in report["problems"]), report["problems"]
    ibw = by_slug(report)[IBW]
    assert ibw["head_version"] == ibw["base_version"]  # no release: the version did not move
    assert ibw["effect"]["from_invalid_head"] and ibw["effect"]["changed"] == 40
    code, out, _ = run(capsys, "review-pr", "--base", "main", "--root", str(repo))
    assert code == 1 and "does not validate" in out and "R-LOCK-CHANGED" in out


def test_an_unknown_base_or_a_shallow_clone_is_a_tool_error_saying_how_to_fetch(repo, tmp_path, capsys) -> None:
    code, out, err = run(capsys, "review-pr", "--base", "no-such-branch", "--root", str(repo))
    assert code == 2 and out == ""
    assert "unknown revision 'no-such-branch'" in err and "git fetch origin no-such-branch" in err
    code, _, err = run(capsys, "review-pr", "--base=--output=/tmp/x", "--root", str(repo))
    assert code == 2 and "is not a revision" in err

    (repo / "note").write_text("x", encoding="utf-8")
    git(repo, "add", "note")
    git(repo, "commit", "-qm", "second")
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "change", f"file://{repo}", str(shallow)],
                   check=True, capture_output=True)
    base = git(repo, "rev-parse", "main")
    code, _, err = run(capsys, "review-pr", "--base", base, "--root", str(shallow))
    assert code == 2 and "shallow" in err and "git fetch --unshallow" in err

    plain = copy_registry(tmp_path / "plain")
    code, _, err = run(capsys, "review-pr", "--base", "main", "--root", str(plain))
    assert code == 2 and "not inside a git repository" in err


def test_a_change_of_wording_only_is_reported_as_such(repo, capsys) -> None:
    edit_active_text(repo, CALCIUM, CALCIUM_OPENING, "Total serum calcium, corrected for a low albumin")
    code, _, err = run(capsys, "release", CALCIUM, "--reason", "wording", "--part", "patch", "--root", str(repo),
                       *key())
    assert code == 0, err
    code, report, _ = review(capsys, repo)
    assert code == 0 and report["kind"] == "wording only"
    [calcium] = report["calculators"]
    assert calcium["kind"] == "wording only" and calcium["effect"]["changed"] == 0
    assert calcium["effect"]["cases"] == calcium["effect"]["agree_after"] > 0
    assert [c["what"] for c in calcium["changes"]] == []  # the text is the only change
    assert any(line.startswith("+Total serum calcium, corrected") for line in calcium["text_diff"])
    # a review sign-off is bookkeeping: no content moves
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "wording")
    code, _, err = run(capsys, "review", CALCIUM, "--root", str(repo), *key("chair"))
    assert code == 0, err
    code, report, _ = run_head(capsys, repo)
    assert code == 0 and report["kind"] == "bookkeeping only"
    [calcium] = report["calculators"]
    assert calcium["effect"] is None and [(d["decision"], d["name"], d["state"]) for d in calcium["decisions"]] == [
        ("review", PEOPLE["chair"][0], "verified")]


def test_a_tampered_signature_fails_and_exits_1(repo, capsys) -> None:
    assert run(capsys, "fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "signed reason",
               "--root", str(repo), *key())[0] == 0
    path = repo / "formulas" / f"{CALCIUM}.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.count("reason: signed reason") == 1
    path.write_text(text.replace("reason: signed reason", "reason: a reason nobody signed"), encoding="utf-8")
    code, report, _ = review(capsys, repo)
    assert code == 1 and any("R-SIGNATURE" in p for p in report["problems"]), report["problems"]
    [decision] = by_slug(report)[CALCIUM]["decisions"]
    assert decision["state"] == "invalid" and decision["principal"] is None and "does not match" in decision["why"]
    code, out, _ = run(capsys, "review-pr", "--base", "main", "--root", str(repo))
    assert code == 1 and "FAILS to verify" in out


def test_where_signatures_are_not_required_the_typed_names_are_unsigned(tmp_path, capsys) -> None:
    repo = make_repo(tmp_path / "repo", require_signatures=False)
    assert run(capsys, "fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "r", "--by", "A. Typist",
               "--role", "pharmacist", "--root", str(repo))[0] == 0
    code, report, _ = review(capsys, repo)
    assert code == 0, report["problems"]
    [calcium] = report["calculators"]
    assert [(d["decision"], d["name"], d["state"]) for d in calcium["decisions"]] == [
        ("release", "A. Typist", "unsigned")]


def run_head(capsys: pytest.CaptureFixture[str], repo: Path) -> tuple[int, dict, str]:
    code, out, err = run(capsys, "review-pr", "--base", "change", "--root", str(repo), "--format", "json")
    return code, json.loads(out), err


def test_no_change_is_a_clean_review_of_the_repository_one_stands_in(repo, capsys, monkeypatch) -> None:
    monkeypatch.delenv("FORMULA_REGISTRY_ROOT", raising=False)
    monkeypatch.chdir(repo)  # like git: no --root needed inside a registry repository
    code, out, _ = run(capsys, "review-pr", "--base", "main", "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["calculators"] == [] and report["kind"] is None and report["stale_runs"] == []
    code, out, _ = run(capsys, "review-pr", "--base", "main")
    assert code == 0 and "No calculator changed." in out and "The head validates: no problem." in out


def test_a_file_that_no_longer_loads_is_a_clinical_change_and_out_writes_the_report(repo, tmp_path, capsys) -> None:
    from tests.helpers import edit

    edit(repo / "formulas" / "anion-gap.yaml", "name: ", "name: [unclosed ")
    code, report, _ = review(capsys, repo)
    assert code == 1 and any("anion-gap.yaml" in p and "R-YAML" in p for p in report["problems"])
    gap = by_slug(report)["anion-gap"]
    assert (gap["change"], gap["kind"], gap["head_version"]) == ("unreadable", "clinical change", None)
    assert by_slug(report)["delta-gap"]["kind"] == "clinical change"  # a dependant of what no longer loads
    out = tmp_path / "review.md"
    code, stdout, _ = run(capsys, "review-pr", "--base", "main", "--root", str(repo), "--out", str(out))
    assert code == 1 and f"wrote {out}" in stdout
    assert out.read_text(encoding="utf-8").startswith("## Registry review: main (")


def _g_stage(egfr: float) -> str:
    """KDIGO GFR categories as commonly reproduced (G1 >= 90, G2 60-89, G3a 45-59, G3b 30-44, G4 15-29, G5 < 15)."""
    for edge, stage in ((90, "G1"), (60, "G2"), (45, "G3a"), (30, "G3b"), (15, "G4")):
        if egfr >= edge:
            return stage
    return "G5"


def test_reclassification_counts_the_cases_that_change_g_stage(repo, capsys) -> None:
    from registry.loader import load
    from registry.validate import validate
    from solver.data import REFERENCE_CASES, read_cases
    from solver.library import compute

    base_reg = load(repo)
    validate(base_reg)  # read every file now, before the fix changes them
    assert run(capsys, "fix", "ckd-epi-2021", "--set", "base=130", "--reason", "r", "--root", str(repo), *key())[0] == 0
    code, report, _ = review(capsys, repo)
    assert code == 0
    effect = by_slug(report)["ckd-epi-2021"]["effect"]
    head_reg = load(repo)
    cases = [c for c in read_cases(REFERENCE_CASES) if c.calculator_id == 3]
    moved = [c for c in cases if _g_stage(compute("ckd-epi-2021", c.entities, registry=base_reg, variant="benchmark").value)
             != _g_stage(compute("ckd-epi-2021", c.entities, registry=head_reg, variant="benchmark").value)]
    assert effect["cases"] == len(cases) == effect["changed"]  # every eGFR scales with the coefficient
    assert effect["largest_rel"] == pytest.approx(12 / 142, abs=1e-4)
    reclass = effect["reclassified"]
    assert reclass["table"] == "ckd-epi-2021:gfr_categories" and reclass["moved"] == len(moved) > 0
    assert all(x["before"] != x["after"] for x in reclass["examples"])


def test_a_draft_under_four_eyes_is_reviewed_as_proposed(tmp_path, capsys) -> None:
    repo = make_repo(tmp_path / "repo", four_eyes=True, approver_roles=["chair"])
    code, _, err = run(capsys, "fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "proposed",
                       "--root", str(repo), *key())
    assert code == 0, err
    assert (repo / "formulas" / "drafts" / f"{CALCIUM}.yaml").is_file()  # four eyes: a draft awaits approval
    code, report, _ = review(capsys, repo)
    assert code == 0, report["problems"]
    [calcium] = report["calculators"]
    assert calcium["kind"] == "clinical change"
    assert (calcium["base_version"], calcium["head_version"]) == ("1.0.1", "1.1.0")  # the draft's version
    state = calcium["head_state"]
    assert (state["state"], state["version"], state["approvals"], state["required"]) == ("draft", "1.1.0", 0, 1)
    assert state["words"] == f"draft, awaiting approval, 0 of 1, effective {state['effective']}"
    assert calcium["base_state"]["state"] == "active"
    assert [(c["name"], c["old"], c["new"]) for c in calcium["changes"]] == [("albumin_coefficient", 0.8, 0.7)]
    assert calcium["effect"]["changed"] > 0  # the draft's constant is what is computed
    assert [(d["decision"], d["state"]) for d in calcium["decisions"]] == [("draft", "verified")]


def test_a_guideline_edit_is_listed_with_its_field_and_the_calculators_citing_it(repo, capsys) -> None:
    from tests.helpers import edit

    guideline = "acc-aha-2013-cardiovascular-risk"
    edit(repo / "guidelines" / f"{guideline}.yaml", "title: ", "title: Revised ")
    code, report, _ = review(capsys, repo)
    assert code == 1 and any("R-LOCK-DEPENDENCY" in p for p in report["problems"])  # citing versions not released
    [g] = report["guidelines"]
    [title] = g["changes"]
    assert g["slug"] == guideline and title["field"] == "title" and title["new"] == "Revised " + title["old"]
    calcs = by_slug(report)
    assert {"framingham-hard-chd", "pooled-cohort-equations"} <= set(calcs)
    assert {c["kind"] for c in calcs.values()} == {"wording only"}  # a citation moves no answer


def test_a_change_of_who_may_decide_is_shown(repo, capsys) -> None:
    from tests.helpers import set_policy

    set_policy(repo, approvals_required=2)
    code, report, _ = review(capsys, repo)
    [policy] = report["policy"]
    assert policy["path"] == "formulas/policy/governance.yaml" and policy["change"] == "changed"
    assert any(line.startswith("+") and "approvals_required: 2" in line for line in policy["diff"])
    code, out, _ = run(capsys, "review-pr", "--base", "main", "--root", str(repo))
    assert "who decides changed: 1 file under formulas/policy/" in out and "\n+approvals_required: 2\n" in out
    assert out.index("### Who decides changed") < out.index("### Validation")  # at the top, before the rest


def test_a_revision_with_a_link_out_of_the_registry_is_refused(repo, capsys) -> None:
    (repo / "formulas" / "evil.yaml").symlink_to("/etc/passwd")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a link out")
    code, out, err = run(capsys, "review-pr", "--base", "main", "--head", "change", "--root", str(repo))
    assert code == 2 and out == "" and "cannot be unpacked safely" in err


def test_the_same_change_gives_the_same_bytes_wherever_it_is_reviewed(tmp_path, capsys, monkeypatch) -> None:
    from tests.helpers import edit

    for var in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(var, "2026-12-01T12:00:00+00:00")  # the same commits, so the same commit ids
    outputs = []
    for where in ("one", "two"):
        repo = make_repo(tmp_path / where / "repo")
        edit(repo / "formulas" / f"{CALCIUM}.yaml", "value: 0.8", "value: 0.85")
        outputs.append(run(capsys, "review-pr", "--base", "main", "--root", str(repo)))
    assert outputs[0] == outputs[1] and outputs[0][0] == 1
    assert str(tmp_path) not in outputs[0][1]  # no folder of this machine in the report


def test_an_approved_draft_waiting_for_its_date_and_a_rejection_say_what_the_decisions_say(tmp_path, capsys) -> None:
    """Issue 36: an approved draft waiting for its date was shown `1.0.2 (active) -> 1.1.0 (active; draft 1.1.0
    awaiting approval)`, both halves false, without the decisions' reasons; the committed head was "working tree"."""
    import datetime as dt

    from registry import clock

    repo = make_repo(tmp_path / "repo", four_eyes=True, approver_roles=["chair"])
    later = (clock.today() + dt.timedelta(days=6)).isoformat()
    assert run(capsys, "fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "proposed", "--date", later,
               "--root", str(repo), *key())[0] == 0
    code, _, err = run(capsys, "approve", CALCIUM, "1.1.0", "--reason", "agreed at the meeting", "--root", str(repo),
                       *key("chair"))
    assert code == 0, err
    assert run(capsys, "fix", IBW, "--set", "base_height=61", "--reason", "try 61 inches", "--with-dependants",
               "--root", str(repo), *key())[0] == 0
    code, _, err = run(capsys, "reject", IBW, "1.1.0", "--reason", "not supported", "--root", str(repo), *key("chair"))
    assert code == 0, err
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Albumin 0.7, approved")
    code, report, _ = review(capsys, repo)
    assert code == 0, report["problems"]
    assert report["head"]["commit"] == git(repo, "rev-parse", "HEAD") and not report["head"]["working_tree"]
    assert (report["head"]["revision"], report["head"]["subject"]) == ("change", "Albumin 0.7, approved")
    calcs = by_slug(report)
    state = calcs[CALCIUM]["head_state"]
    assert (state["state"], state["approvals"], state["required"], state["effective"]) == ("approved", 1, 1, later)
    assert state["words"] == f"approved, 1 of 1, effective {later}"
    assert [(d["decision"], d["name"], d["role"], d["reason"], d["state"]) for d in calcs[CALCIUM]["decisions"]] == [
        ("draft", PEOPLE["author"][0], "clinical informatician", "proposed", "verified"),
        ("approve", PEOPLE["chair"][0], "chair", "agreed at the meeting", "verified")]
    ibw = calcs[IBW]["head_state"]
    assert (ibw["state"], ibw["version"], ibw["words"]) == ("rejected", "1.1.0", "draft 1.1.0 rejected")
    assert [(d["decision"], d["reason"], d["state"]) for d in calcs[IBW]["decisions"]] == [
        ("draft", "try 61 inches", "verified"), ("reject", "not supported", "verified")]

    code, out, _ = run(capsys, "review-pr", "--base", "main", "--root", str(repo))
    short = git(repo, "rev-parse", "HEAD")[:12]
    assert f"→ change ({short} “Albumin 0.7, approved”)" in out.splitlines()[0] and "working tree" not in out
    assert "1.0.1 (active since " in out and f"→ 1.1.0 (approved, 1 of 1, effective {later})" in out
    assert f"approve 1.1.0 by {PEOPLE['chair'][0]} (chair) on {clock.today()}; reason: agreed at the meeting (verified" \
        in out
    assert "(s)" not in out
    assert "| reference case | inputs | base (mg/dL) | head (mg/dL) |" in out
    assert out.count("a reference answer agrees when") == 1


def test_a_key_added_and_used_in_the_same_change_is_a_warning_and_exits_1(repo, capsys) -> None:
    """Issue 37, item 2: a new decider and their first decision never arrive together unremarked."""
    from tests.helpers import add_person

    add_person(repo, "newcomer", "N. Newcomer", ["clinical informatician"], make_key("newcomer"))
    assert run(capsys, "fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "by a new key",
               "--root", str(repo), *key("newcomer"))[0] == 0
    code, report, _ = review(capsys, repo)
    assert code == 1 and report["problems"] == []  # it validates: the warning alone fails the review
    [warning] = report["key_warnings"]
    assert CALCIUM in warning and "newcomer" in warning and "which this change adds" in warning
    assert report["blocking"] == []  # the new key's decision is said once, as a key warning
    assert {p["path"] for p in report["policy"]} == {"formulas/policy/allowed_signers",
                                                     "formulas/policy/governance.yaml"}
    code, out, _ = run(capsys, "review-pr", "--base", "main", "--root", str(repo))
    assert code == 1 and out.index("### Who decides changed") < out.index("**Warning: ") < out.index("| file |")


def test_a_key_added_alone_is_shown_and_passes(repo, capsys) -> None:
    from tests.helpers import add_person

    add_person(repo, "newcomer", "N. Newcomer", ["clinical informatician"], make_key("newcomer"))
    code, report, _ = review(capsys, repo)
    assert code == 0 and report["key_warnings"] == [] and len(report["policy"]) == 2


def test_a_change_to_the_seal_and_the_lock_that_fixes_it_is_shown(repo, capsys) -> None:
    """Moving the seal's digest in the lock with the seal is no silent change: both are listed."""
    lock = repo / "formulas" / "REGISTRY.lock"
    data = json.loads(lock.read_text(encoding="utf-8"))
    data["sealed_before_signing"]["date"] = "2026-12-02"
    lock.write_text(json.dumps(data, indent=2), encoding="utf-8")
    code, report, _ = review(capsys, repo)
    [change] = report["policy"]
    assert change["path"] == "formulas/REGISTRY.lock (sealed_before_signing)" and "2026-12-02" in change["diff"][1]


def test_a_working_tree_link_is_named_without_a_traceback(repo, capsys, tmp_path) -> None:
    (tmp_path / "outside.yaml").write_text("slug: outside-secret\n", encoding="utf-8")
    target = repo / "formulas" / f"{CALCIUM}.yaml"
    target.unlink()
    target.symlink_to(tmp_path / "outside.yaml")
    code, report, err = review(capsys, repo)
    assert code == 1 and any(f"formulas/{CALCIUM}.yaml" in p and "symbolic link" in p for p in report["problems"])
    assert "outside-secret" not in json.dumps(report) and "Traceback" not in err
