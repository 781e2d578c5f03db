"""Issue 20's items one by one: policy, approvals, diff, changelog, checks, tolerant reading, constants, advice."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from registry import clock
from registry.diffing import diff
from registry.governance.changelog import ChangelogEntry, _ordered, grouped, markdown
from registry.governance.signatures import decision_views
from registry.loader import load
from registry.schema import VersionStatus
from solver.data import REFERENCE_CASES, read_cases
from tests.helpers import Committee, keys_of, maintained, set_policy
from tests.registry.helpers import NEW, OLD, SODIUM, copy_registry, fingerprint, formula, problems

TODAY = clock.today()
POLICY = Path("formulas") / "policy" / "governance.yaml"
KATZ = ["correction_per_mg_dl_glucose=0.016", "--label", "correction_per_mg_dl_glucose=Katz factor"]


@pytest.fixture()
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy with the test committee (tests.helpers.PEOPLE); the author's key is $FORMULA_SIGNING_KEY."""
    root = copy_registry(tmp_path)
    maintained(root, monkeypatch)
    return root


@pytest.fixture()
def people(root: Path) -> Committee:
    return keys_of(root)


def _draft(capsys, root: Path, *argv: str) -> None:
    code, _, err = formula(capsys, root, "fix", SODIUM, "--set", *KATZ, "--reason", "Katz", "--draft", *argv)
    assert code == 0, err


# ---------------------------------------------------------------------- four eyes and the policy file


def test_a_decision_needs_a_key(capsys, root: Path, monkeypatch) -> None:
    monkeypatch.delenv("FORMULA_SIGNING_KEY")
    before = fingerprint(root)
    code, _, err = formula(capsys, root, "fix", SODIUM, "--set", *KATZ, "--reason", "Katz", "--draft",
                           "--by", "author", "--role", "clinical informatician")
    assert code == 1 and "give --key PATH" in err and fingerprint(root) == before


def test_approval_needs_a_reason_and_records_it_signed(capsys, root: Path, people: Committee) -> None:
    _draft(capsys, root)
    code, _, err = formula(capsys, root, "approve", SODIUM, NEW, *people.args("chair"), "--reason", " ")
    assert code == 1 and "--reason" in err
    code, _, err = formula(capsys, root, "approve", SODIUM, NEW, *people.args("chair"), "--reason", "ok")
    assert code == 0, err
    v = load(root).calculators[SODIUM].active
    assert v.approved_by is None and v.approved is None  # nothing typed: the decision is the signed record
    d = v.decisions[-1]
    assert (d.decision, d.principal, d.role, d.reason, d.date) == ("approve", "chair", "chair", "ok", TODAY)
    assert [(x.decision, x.state, x.name) for x in decision_views(root, SODIUM) if x.version == NEW] == [
        ("draft", "verified", "R. Maintainer"), ("approve", "verified", "Dr A. Chair")]


def test_policy_can_allow_self_approval_and_limit_roles(capsys, root: Path, people: Committee) -> None:
    set_policy(root, four_eyes=False, approver_roles=["Chair"],
               people={**_people(root), "author": {"name": "R. Maintainer", "roles": ["pharmacist", "chair"]}})
    assert problems(root) == []
    _draft(capsys, root)
    code, _, err = formula(capsys, root, "approve", SODIUM, NEW, "--role", "pharmacist", "--reason", "x")
    assert code == 1 and "'pharmacist', which may not approve" in err and "Chair" in err
    code, _, err = formula(capsys, root, "approve", SODIUM, NEW, "--role", "nurse", "--reason", "x")
    assert code == 1 and "not one of author's roles" in err  # a role typed at the prompt is not a role held
    code, out, err = formula(capsys, root, "approve", SODIUM, NEW, "--role", "chair", "--reason", "x")
    assert code == 0 and "now active" in out, err
    assert problems(root) == []


def _people(root: Path) -> dict:
    import yaml

    return yaml.safe_load((root / POLICY).read_text(encoding="utf-8"))["people"]


def test_the_policy_file_has_a_schema(capsys, root: Path) -> None:
    code, out, _ = formula(capsys, root, "schema", "--kind", "policy")
    assert code == 0 and set(json.loads(out)["properties"]) == {
        "require_signatures", "four_eyes", "approver_roles", "approvals_required", "approvals_required_for",
        "safety_officer_roles", "people"}


def test_a_future_dated_fix_is_not_approved_by_nobody(capsys, root: Path) -> None:
    later = (TODAY + dt.timedelta(days=7)).isoformat()
    code, out, err = formula(capsys, root, "fix", SODIUM, "--set", *KATZ, "--reason", "Katz", "--date", later)
    assert code == 0 and "someone other than R. Maintainer (author)" in out and "approved by" not in out, err
    draft = (root / "formulas" / "drafts" / f"{SODIUM}.yaml").read_text(encoding="utf-8")
    assert "approved_by" not in draft and "decision: approve" not in draft
    # with a policy that allows it, the author's signed release is their approval, recorded as such
    (root / "formulas" / "drafts" / f"{SODIUM}.yaml").unlink()
    set_policy(root, four_eyes=False, approver_roles=[])
    code, out, err = formula(capsys, root, "fix", SODIUM, "--set", *KATZ, "--reason", "Katz", "--date", later)
    assert code == 0 and f"approved, effective {later}" in out, err
    assert "decision: release" in (root / "formulas" / "drafts" / f"{SODIUM}.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize("content, message", [
    ("four_eyes: maybe\n", "four_eyes"),
    ("approvers: [chair]\n", "unknown field"),
    ("four_eyes: [\n", "malformed YAML"),
    ("people:\n  '*': {name: anyone, roles: [chair]}\n", "literal identity"),
])
def test_a_broken_policy_file_is_a_validation_error_and_refuses_approvals(capsys, root: Path, people: Committee,
                                                                          content: str, message: str) -> None:
    _draft(capsys, root)
    (root / POLICY).write_text(content, encoding="utf-8")
    found = problems(root)
    assert any("R-POLICY" in p and message in p for p in found), found
    before = fingerprint(root)
    code, _, err = formula(capsys, root, "approve", SODIUM, NEW, *people.args("chair"), "--reason", "x")
    assert code == 1 and "governance.yaml" in err and fingerprint(root) == before


def test_a_review_never_approves_and_history_shows_only_given_approvals(capsys, root: Path,
                                                                         people: Committee) -> None:
    assert load(root).calculators[SODIUM].active.approved is None
    code, _, err = formula(capsys, root, "review", SODIUM, *people.args("pharmacist"))
    assert code == 0, err
    v = load(root).calculators[SODIUM].active
    assert v.approved is None and v.approved_by is None and v.last_review == TODAY
    assert [d.decision for d in v.decisions] == ["review"]
    code, out, _ = formula(capsys, root, "history", SODIUM, "--format", "json")
    assert all(r["approved"] == "" for r in json.loads(out))
    assert problems(root) == []


def test_show_names_the_pending_version(capsys, root: Path) -> None:
    _draft(capsys, root)
    code, out, _ = formula(capsys, root, "show", SODIUM)
    assert code == 0 and (f"pending version {NEW} by R. Maintainer (clinical informatician) since {TODAY}: "
                          "awaiting approval (0 of 1)") in out


# ---------------------------------------------------------------------- diff


def test_diff_gives_old_and_new_values_item_by_item() -> None:
    band = {"ge": 45, "lt": 65, "value": 1, "label": "moderate"}
    a = {"constants": {"k": {"value": 1, "unit": "mg", "description": "d"}},
         "inputs": [{"name": "age", "unit": "years", "range": [0, 120], "options": []},
                    {"name": "sex", "options": ["Male", "Female"]}],
         "tables": {"age_points": {"bands": [{"lt": 45, "value": 0}, band], "source": "x"},
                    "w": {"points": {"smoker": 1}}},
         "depends_on": ["x"], "dependencies": {"x": "sha256:1"}, "text": "t"}
    b = json.loads(json.dumps(a))
    b["constants"]["k"]["value"] = 2
    b["inputs"][0]["range"] = [18, 120]
    b["inputs"][1]["options"] = ["Male", "Female", "Other"]
    b["tables"]["age_points"]["bands"][1] = {"gt": 45, "lt": 65, "value": 2, "label": "raised"}
    b["tables"]["w"]["points"]["smoker"] = 2
    b["dependencies"]["x"] = "sha256:2"
    lines = [c.line() for c in diff(a, b)]
    assert lines == ["constant k: 1 -> 2 mg", "input age range: [0, 120] -> [18, 120]",
                     'input sex options: ["Male", "Female"] -> ["Male", "Female", "Other"]',
                     "table age_points band 2 bounds: ≥ 45 and < 65 -> > 45 and < 65",
                     "table age_points band 2 points: 1 -> 2", "table age_points band 2 label: moderate -> raised",
                     "table w[smoker] points: 1 -> 2", "dependency x: its content changed (released with it)"]
    c = json.loads(json.dumps(a))
    c["tables"]["age_points"]["source"] = "a better note"
    c["tables"]["age_points"]["bands"][1]["label"] = "middle"
    assert not [x for x in diff(a, c) if x.scoring]  # a note and a label change no score


def test_diff_says_no_change_to_scoring(capsys, root: Path) -> None:
    set_policy(root, four_eyes=False, approver_roles=[])  # the maintainer's fix is active at once
    path = root / "formulas" / f"{SODIUM}.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("(Hillier's 2.4 mEq/L per", "(Hillier, 1999, 2.4 mEq/L per"), encoding="utf-8")
    code, _, err = formula(capsys, root, "release", SODIUM, "--reason", "wording", "--part", "patch")
    assert code == 0, err
    patch = load(root).calculators[SODIUM].active.version
    code, out, _ = formula(capsys, root, "diff", SODIUM, OLD, patch)
    assert code == 0 and "constant correction_per_mg_dl_glucose description:" in out
    assert "no change to scoring" in out
    code, out, _ = formula(capsys, root, "diff", SODIUM, OLD, patch, "--format", "json")
    assert json.loads(out)["scoring_changed"] is False


# ---------------------------------------------------------------------- changelog


def _entry(slug: str, day: str, reason: str, **kw) -> ChangelogEntry:
    return ChangelogEntry(slug=slug, name=slug, version="1.1.0", status="active", effective=dt.date.fromisoformat(day),
                          reason=reason, changes=kw.pop("changes", ["shared unit data changed"]), signoffs=[], **kw)


def test_changelog_newest_first_substance_before_bulk_grouped() -> None:
    bulk = [_entry(s, "2026-02-01", "unit factors from units.yaml") for s in ("zeta", "alpha", "mid")]
    real = _entry("yak", "2026-02-01", "Katz factor", changes=["constant k: 1 -> 2"], released_by="A", role="r",
                  approved_by="B", approved_role="chair", approved=dt.date(2026, 2, 1), approval_reason="agreed")
    old = _entry("bee", "2026-01-01", "older")
    entries = _ordered([*bulk, old, real])
    assert [e.slug for e in entries] == ["yak", "alpha", "mid", "zeta", "bee"]
    groups = grouped(entries)
    assert [len(g.entries) for g in groups] == [1, 3, 1]
    text = markdown(entries)
    assert "Released by A (r)." in text and "Approved by B (chair) on 2026-02-01: agreed." in text
    assert "3 calculators, effective 2026-02-01" in text and "not recorded" not in text
    assert text.index("yak") < text.index("alpha 1.1.0") < text.index("bee")


def test_shipped_changelog_puts_real_changes_before_the_bulk_migration(capsys, root: Path) -> None:
    code, out, _ = formula(capsys, root, "changelog", "--format", "json")
    entries = json.loads(out)
    days = [e["effective"] for e in entries]
    assert days == sorted(days, reverse=True)
    for day in set(days):
        flags = [e["bulk"] for e in entries if e["effective"] == day]
        assert flags == sorted(flags)  # False (substantive) before True (bulk)


# ---------------------------------------------------------------------- pipeline checks and stale


def test_stale_reads_a_run_folder_and_names_each_bad_line(capsys, root: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    good = {"slug": SODIUM, "text_version": OLD}
    (run / "results.jsonl").write_text(json.dumps(good) + "\n\n" + '{"slug": "x"\n' + json.dumps({"slug": "nope",
                                       "text_version": "1"}) + "\n", encoding="utf-8")
    code, out, err = formula(capsys, root, "stale", str(run))
    assert code == 1 and "results.jsonl: line 3: not JSON" in err and "line 4: unknown calculator 'nope'" in err
    assert "0 of 1 case stale" in out and "2 lines could not be checked" in out
    (run / "results.jsonl").write_text(json.dumps(good) + "\n", encoding="utf-8")
    assert formula(capsys, root, "stale", str(run), "--check")[0] == 0
    code, _, err = formula(capsys, root, "stale", str(tmp_path))
    assert code == 1 and "without results.jsonl" in err


# ---------------------------------------------------------------------- one broken file


def test_a_broken_file_leaves_the_others_readable(capsys, root: Path) -> None:
    path = root / "formulas" / "meld-na.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("\nname: ", "\nname: [unclosed ", 1), encoding="utf-8")
    for argv in (["show", "body-mass-index"], ["list"], ["history", SODIUM]):
        code, out, err = formula(capsys, root, *argv)
        assert code == 0 and "formulas/meld-na.yaml" in err and "warning:" in err, (argv, err)
    code, out, err = formula(capsys, root, "solve", "--calculator", "body-mass-index", "--entities",
                             json.dumps({"weight": [70, "kg"], "height": [175, "cm"]}))
    assert code == 0 and "22.85714" in out, err
    code, _, err = formula(capsys, root, "solve", "--calculator", "meld-na", "--entities", "{}")
    assert code == 1 and "formulas/meld-na.yaml" in err and "does not load" in err
    code, _, err = formula(capsys, root, "texts", "render", "--preview", "meld-na")
    assert code == 1 and "formulas/meld-na.yaml:" in err and "malformed YAML" in err
    assert formula(capsys, root, "texts", "render")[0] == 1  # writing stays refused
    assert formula(capsys, root, "validate")[0] == 1


def test_preview_renders_a_hand_edit_without_writing(capsys, root: Path) -> None:
    path = root / "formulas" / "meld-na.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("value: 0.957", "value: 0.958"), encoding="utf-8")
    before = fingerprint(root)
    code, out, err = formula(capsys, root, "texts", "render", "--preview", "meld-na")
    assert code == 0 and "0.958 x ln(creatinine)" in out, err
    assert fingerprint(root) == before
    code, _, err = formula(capsys, root, "show", "anion-gap")  # another calculator: shown, with the warning
    assert code == 0 and "meld-na.yaml" in err


# ---------------------------------------------------------------------- typed constants and reference cases


@pytest.mark.parametrize("assignment, message", [
    ("meld_decimals=-3", "below the allowed minimum 0"),
    ("score_cap=40.5", "not a whole number"),
])
def test_nonsense_constants_are_refused_before_writing(capsys, root: Path, assignment: str, message: str) -> None:
    before = fingerprint(root)
    code, _, err = formula(capsys, root, "fix", "meld-na", "--set", assignment, "--reason", "x")
    assert code == 1 and message in err and "constants." + assignment.split("=")[0] in err
    assert fingerprint(root) == before


def test_a_hand_edited_fractional_cap_fails_validation(root: Path) -> None:
    path = root / "formulas" / "meld-na.yaml"
    text = path.read_text(encoding="utf-8")
    head, tail = text.split("  score_cap:\n    value: 40", 1)
    path.write_text(head + "  score_cap:\n    value: 40.5" + tail, encoding="utf-8")
    assert any("score_cap" in p and "whole number" in p for p in problems(root))


def test_every_release_reports_its_reference_cases(capsys, root: Path) -> None:
    calc_id = load(root).calculators["meld-na"].medcalc_id
    cases = [c for c in read_cases(REFERENCE_CASES) if c.calculator_id == calc_id]
    # a cap of 30 turns an answer above 30 into 30: still right only where 30 lies inside the case's window
    above = sum(1 for c in cases if float(c.answer) > 30 and not float(c.lower) <= 30 <= float(c.upper))
    assert 0 < above < len(cases)
    code, out, err = formula(capsys, root, "fix", "meld-na", "--set", "score_cap=30", "--reason", "test")
    assert code == 0, err
    assert (f"reference cases meld-na: {len(cases) - above} of {len(cases)} match the benchmark's answers "
            f"(was {len(cases)}: this release changes answers)") in out


# ---------------------------------------------------------------------- advice and interruption


def test_a_malformed_dependency_is_the_one_fix_advised(capsys, root: Path) -> None:
    path = root / "formulas" / "anion-gap.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "name: [unclosed\n", encoding="utf-8")
    code, out, err = formula(capsys, root, "validate")
    assert code == 1 and "anion-gap.yaml" in out
    assert "release" not in out and "R-LOCK-DEPENDENCY" not in out and "R-REFERENCE" not in out


def test_an_interrupted_write_advises_recover_first(capsys, root: Path) -> None:
    from registry.atomic import JOURNAL_NAME

    path = root / "formulas" / f"{SODIUM}.yaml"
    released = path.read_text(encoding="utf-8")
    (root / "formulas" / JOURNAL_NAME).write_text(json.dumps({"format": 1, "files": {
        f"formulas/{SODIUM}.yaml": released}}), encoding="utf-8")
    path.write_text(released.replace("value: 0.024", "value: 0.016"), encoding="utf-8")  # half-written
    code, out, err = formula(capsys, root, "validate")
    assert code == 1 and out.splitlines()[0] == f"registry: {root} (given by --root)"
    assert out.splitlines()[1].endswith("[R-JOURNAL]")
    assert "first run `formula recover`" in err
    assert formula(capsys, root, "recover")[0] == 0 and problems(root) == []


def test_ctrl_c_during_a_write_rolls_back_in_process(capsys, root: Path, monkeypatch) -> None:
    set_policy(root, four_eyes=False, approver_roles=[])  # the maintainer's fix is active at once
    import registry.atomic as atomic

    before = fingerprint(root)
    real, calls = atomic.atomic_write, []

    def interrupted(path: Path, data) -> None:
        calls.append(path)
        if len(calls) == 3:  # the journal and one file are written: Ctrl-C
            raise KeyboardInterrupt
        real(path, data)

    monkeypatch.setattr(atomic, "atomic_write", interrupted)
    code, _, err = formula(capsys, root, "fix", SODIUM, "--set", *KATZ, "--reason", "x")
    monkeypatch.setattr(atomic, "atomic_write", real)
    assert code == 130 and "rolled back" in err and "as it was before" in err
    assert not (root / "formulas" / atomic.JOURNAL_NAME).exists()
    assert fingerprint(root) == before and problems(root) == []
    assert load(root).calculators[SODIUM].active.status == VersionStatus.active


# ---------------------------------------------------------------------- names beside numbers


def test_a_label_written_out_in_prose_is_flagged(root: Path) -> None:
    from audit.completeness import static_findings

    reg = load(root)
    c = reg.calculators[SODIUM]
    name = "correction_per_mg_dl_glucose"
    labelled = c.model_copy(update={"constants": {**c.constants, name: c.constants[name].model_copy(
        update={"label": "Hillier factor"})}})
    by_hand = "Sodium corrected (Hillier factor): sodium + {{ c.correction_per_mg_dl_glucose }} x glucose"
    found = static_findings(labelled, by_hand, calcs=reg.calculators)
    assert any("states the label 'Hillier factor'" in f and f"label.{name}" in f for f in found), found
    from_registry = by_hand.replace("Hillier factor", "{{ label.correction_per_mg_dl_glucose }}")
    assert not [f for f in static_findings(labelled, from_registry, calcs=reg.calculators) if "label" in f]
    assert any("names unknown label 'nope'" in f for f in static_findings(labelled, "{{ label.nope }}",
                                                                          calcs=reg.calculators))


def test_a_fix_updates_the_name_beside_the_number(capsys, root: Path) -> None:
    set_policy(root, four_eyes=False, approver_roles=[])  # the maintainer's fix is active at once
    from audit.completeness import static_findings

    reg = load(root)
    c = reg.calculators[SODIUM]
    assert c.constants["correction_per_mg_dl_glucose"].label == "Hillier factor"
    assert "{{ label.correction_per_mg_dl_glucose }}" in c.active.text  # shipped: the text reads the name
    assert not [f for f in static_findings(c, calcs=reg.calculators, units=reg.units) if "label" in f]
    before = fingerprint(root)
    code, _, err = formula(capsys, root, "fix", SODIUM, "--set", KATZ[0], "--reason", "Katz")
    assert code == 1 and "'Hillier factor'" in err and "--label correction_per_mg_dl_glucose=NAME" in err
    assert fingerprint(root) == before
    code, _, err = formula(capsys, root, "fix", SODIUM, "--set", *KATZ, "--reason", "Katz")
    assert code == 0, err
    rendered = (root / "formulas" / "texts" / f"{SODIUM}.md").read_text(encoding="utf-8")
    assert "(Katz factor)" in rendered and "Hillier factor" not in rendered and "+ 0.016 x" in rendered
    assert problems(root) == []


def test_diff_covers_every_shown_field_but_not_what_an_older_snapshot_lacks() -> None:
    a = {"formula": {"name": "Hillier", "expression": "x"}, "plausibility": [{"min": 1}],
         "guidelines": {"g": "sha256:1"}, "text": "t"}
    b = {"formula": {"name": "Katz", "expression": "x"}, "plausibility": [{"min": 2}],
         "guidelines": {"g": "sha256:2"}, "literature_audit": {"concern": "none"}, "text": "t"}
    changes = diff(a, b)
    assert [c.line() for c in changes] == ["formula.name: Hillier -> Katz", "cited guideline g: its file changed",
                                           'plausibility: entry 1: min 1 -> 2']
    assert [c.scoring for c in changes] == [False, False, True]


def test_ctrl_c_before_the_write_says_nothing_was_written(capsys, root: Path, monkeypatch) -> None:
    import registry.governance.release as release

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    before = fingerprint(root)
    monkeypatch.setattr(release, "dependants", interrupted)  # Ctrl-C while the release is being prepared
    code, _, err = formula(capsys, root, "release", SODIUM, "--reason", "x", "--with-dependants")
    assert code == 130 and "before anything was written; the registry is unchanged" in err
    assert fingerprint(root) == before


def test_diff_of_records_with_ids_names_the_entries_never_a_cut_dump() -> None:
    """Deviations (records with ids, long prose) changed: each entry named, added, removed or its fields, and
    nothing shown as JSON cut short (issue 39: the published changelog)."""
    prose = "A long paragraph about a benchmark's departure from the publication. " * 5
    a = {"deviations": [{"id": "x", "benchmark": prose, "verified": True}, {"id": "y", "benchmark": "short"}],
         "text": "t"}
    b = {"deviations": [{"id": "z", "benchmark": "new"}, {"id": "x", "benchmark": prose + "!", "verified": False}],
         "text": "t"}
    assert [c.line() for c in diff(a, b)] == ["deviations: added z; removed y; x: benchmark changed, verified yes -> no"]
