"""A review committee's week, walked on a copy of the registry (issue 20's done-when test).

Monday A drafts a change effective later in the week; it is visible in `formula pending`, in
`history` and on the site. A may not approve it; B approves it with a role and a reason. On its
day it becomes active. The changelog and the diff show old and new values. A second draft is
rejected. A pipeline's `stale --check` and `texts changed --check` then fail, as they must.
"""
from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

from formula_site.pending_pages import calculator_section, overview_section
from registry import clock
from registry.loader import load
from solver.library import compute
from tests.helpers import PEOPLE, committee
from tests.registry.helpers import NEW, NEWER, OLD, SODIUM, copy_registry, fingerprint, formula, problems

TODAY = clock.today()
ENTS = {"Sodium": [130, "mEq/L"], "Glucose": [400, "mg/dL"]}
A = (PEOPLE["author"][0], PEOPLE["author"][1][0])  # (name, role) as governance.yaml people: has them
B = (PEOPLE["chair"][0], PEOPLE["chair"][1][0])


def test_a_committee_week(capsys, tmp_path: Path, monkeypatch) -> None:  # noqa: PLR0915  one scripted week, step by step
    root = copy_registry(tmp_path / "reg")
    people = committee(root)

    def _as(who: tuple[str, str]) -> list[str]:  # each person signs with their own key
        return people.args("author" if who == A else "chair")
    index_before = tmp_path / "index-before.json"
    shutil.copy(root / "formulas" / "texts" / "index.json", index_before)
    results = tmp_path / "run" / "results.jsonl"  # a stored run, made with the current text
    results.parent.mkdir()
    entry = {e["slug"]: e for e in json.loads(index_before.read_text(encoding="utf-8"))["texts"]}[SODIUM]
    results.write_text(json.dumps({"row_number": 1, "slug": SODIUM, "seed": 0, "text_version": entry["version"],
                                   "text_sha256": entry["sha256"]}) + "\n", encoding="utf-8")
    assert formula(capsys, root, "stale", str(results.parent), "--check")[0] == 0
    later = (TODAY + dt.timedelta(days=3)).isoformat()

    # Monday: A drafts Katz's factor, effective later in the week
    code, out, err = formula(capsys, root, "fix", SODIUM, "--set", "correction_per_mg_dl_glucose=0.016",
                             "--label", "correction_per_mg_dl_glucose=Katz factor",
                             "--reason", "Katz 1973 factor", "--draft", "--date", later, *_as(A))
    assert code == 0 and f"drafted {NEW}" in out and f"someone other than {A[0]} (author)" in out, err
    assert "reference cases sodium-correction-hyperglycemia:" in out  # the draft's effect on the cases, before approval
    code, out, _ = formula(capsys, root, "pending", "--format", "json")
    [p] = json.loads(out)
    assert (p["slug"], p["version"], p["base"], p["state"]) == (SODIUM, NEW, OLD, "awaiting approval (0 of 1)")
    assert p["signing"] == "verified"
    assert (p["drafted_by"], p["since"], p["effective"]) == (f"{A[0]} ({A[1]})", TODAY.isoformat(), later)
    assert p["changes"] == ["constant correction_per_mg_dl_glucose: 0.024 -> 0.016 mEq/L per mg/dL",
                            "constant correction_per_mg_dl_glucose label: Hillier factor -> Katz factor"]
    code, out, _ = formula(capsys, root, "history", SODIUM)
    assert NEW in out and "draft, awaiting approval" in out
    code, out, _ = formula(capsys, root, "validate")
    assert code == 0 and f"1 version pending approval or their effective date: {SODIUM} {NEW}" in out
    reg = load(root)
    assert "Awaiting approval" in overview_section(reg) and SODIUM in overview_section(reg)
    assert any(f"Version {NEW}" in line for line in calculator_section(reg, reg.calculators[SODIUM]))

    # A may not approve A's own change, whatever --by says; nothing is written
    before = fingerprint(root)
    code, _, err = formula(capsys, root, "approve", SODIUM, NEW, *_as(A), "--reason", "mine")
    assert code == 1 and "author cannot approve" in err and "four eyes" in err
    code, _, err = formula(capsys, root, "approve", SODIUM, NEW, *_as(A), "--by", "chair", "--reason", "mine")
    assert code == 1 and "is not who this key is: it is author's key" in err
    assert fingerprint(root) == before

    # B approves, with a role and a reason: it waits for its date
    code, out, err = formula(capsys, root, "approve", SODIUM, NEW, *_as(B), "--reason", "agreed at committee")
    assert code == 0 and f"stays active until {later}" in out, err
    assert compute(SODIUM, ENTS, registry=load(root), variant="benchmark").version == OLD
    code, out, _ = formula(capsys, root, "pending", "--format", "json")
    [p] = json.loads(out)
    assert p["state"] == "approved, awaiting its effective date" and p["approved_by"] == f"{B[0]} ({B[1]})"

    # Thursday: its day comes (the registry's clock reads the day from $FORMULA_TODAY), activate
    draft = root / "formulas" / "drafts" / f"{SODIUM}.yaml"
    monkeypatch.setenv(clock.ENV, later)
    code, out, err = formula(capsys, root, "activate")
    assert code == 0 and f"activated {SODIUM} {NEW}" in out, err
    assert "reference cases sodium-correction-hyperglycemia:" in out and "this release changes answers" in out
    assert compute(SODIUM, ENTS, registry=load(root), variant="benchmark").value == 134.8  # 130 + 0.016 x (400 - 100)
    assert formula(capsys, root, "pending")[1].startswith("nothing pending")
    assert problems(root) == []

    # the changelog names author, approver and reason; the change comes before the day's migrations
    code, out, _ = formula(capsys, root, "changelog", "--since", later, "--format", "json")
    entries = json.loads(out)
    at = next(n for n, e in enumerate(entries) if (e["slug"], e["version"]) == (SODIUM, NEW))
    first = entries[at]
    assert (first["released_by"], first["approved_by"], first["approval_reason"]) == (A[0], B[0], "agreed at committee")
    assert not first["bulk"] and all(not e["bulk"] for e in entries[:at])  # before the day's bulk migrations
    code, out, _ = formula(capsys, root, "changelog", "--since", later)
    assert f"Approved {TODAY} ({B[0]}, {B[1]}), verified: agreed at committee." in out and "not recorded" not in out
    code, out, _ = formula(capsys, root, "diff", SODIUM, OLD, NEW, "--format", "json")
    d = json.loads(out)
    assert d["scoring_changed"] is True
    assert {"what": "constant", "name": "correction_per_mg_dl_glucose", "field": "value", "old": 0.024, "new": 0.016,
            "unit": "mEq/L per mg/dL", "scoring": True} in d["changes"]
    assert "-Corrected sodium = sodium + 0.024 x (glucose in mg/dL - 100)" in d["text_diff"]

    # a second draft is rejected: the record is kept, the active version stays
    code, out, err = formula(capsys, root, "fix", SODIUM, "--set", "reference_glucose=90", "--reason", "why not",
                             "--draft", *_as(A))
    assert code == 0, err
    code, out, err = formula(capsys, root, "reject", SODIUM, NEWER, *_as(B), "--reason", "no evidence for 90 mg/dL")
    assert code == 0 and f"rejected by {B[0]}" in out, err
    assert not draft.exists() and load(root).calculators[SODIUM].active.version == NEW
    log = (root / "formulas" / "drafts" / "rejected" / f"{SODIUM}.yaml").read_text(encoding="utf-8")
    assert "no evidence for 90 mg/dL" in log and "principal: author" in log and "principal: chair" in log
    assert "decision: reject" in log
    assert formula(capsys, root, "pending")[1].startswith("nothing pending") and problems(root) == []

    # the pipeline: the stored run and the catalogue are now out of date, and the checks say so
    code, out, _ = formula(capsys, root, "stale", str(results.parent), "--check")
    assert code == 1 and "1 of 1 case stale" in out
    code, out, _ = formula(capsys, root, "texts", "changed", "--since", str(index_before), "--check")
    assert code == 1 and SODIUM in out
    fresh = tmp_path / "index-now.json"
    shutil.copy(root / "formulas" / "texts" / "index.json", fresh)
    assert formula(capsys, root, "texts", "changed", "--since", str(fresh), "--check")[0] == 0
