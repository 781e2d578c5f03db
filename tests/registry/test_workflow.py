"""The user guide's governance workflow (docs/guide/committee.md), walked end to end on a copy of the registry."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from registry import clock
from registry.loader import load
from solver.library import compute
from tests.helpers import committee
from tests.registry.helpers import NEW, OLD, SODIUM, copy_registry, formula, problems

ENTS = {"Sodium": [130, "mEq/L"], "Glucose": [400, "mg/dL"]}


def test_fix_as_draft_diff_approve_changelog_review_due(capsys, tmp_path: Path) -> None:
    root = copy_registry(tmp_path)
    people = committee(root)  # each person signs with their own key (docs/guide/committee.md, "People, keys and the policy")
    today = clock.today().isoformat()
    # 1. a maintainer proposes Katz's factor as a draft: nothing changes for users yet
    code, out, err = formula(capsys, root, "fix", SODIUM, "--set", "correction_per_mg_dl_glucose=0.016",
                             "--label", "correction_per_mg_dl_glucose=Katz factor",
                             "--reason", "Katz 1973 factor, for comparison", "--draft",
                             *people.args("author"))
    assert code == 0 and f"drafted {NEW}" in out, err
    assert compute(SODIUM, ENTS, registry=load(root), variant="benchmark").value == 137.2  # 130 + 0.024 x 300, still the old version
    assert problems(root) == []
    # 2. the reviewer reads what a clinician will read: the text first, then the numbers
    code, out, _ = formula(capsys, root, "diff", SODIUM, OLD, NEW)
    assert code == 0
    text_part, numbers = out.split("\n\n- ", 1)
    assert "-Corrected sodium = sodium + 0.024 x" in text_part and "+Corrected sodium = sodium + 0.016 x" in text_part
    assert "version" not in text_part.replace("(supplied text)", "").split("@@", 1)[1]
    assert "constant correction_per_mg_dl_glucose: 0.024 -> 0.016" in numbers
    # 3. approval makes it active, re-renders the catalogue, records who approved
    code, out, err = formula(capsys, root, "approve", SODIUM, NEW, *people.args("chair"),
                             "--reason", "Katz factor agreed for comparison")
    assert code == 0 and "now active" in out, err
    assert compute(SODIUM, ENTS, registry=load(root), variant="benchmark").value == 134.8  # 130 + 0.016 x 300
    index = json.loads((root / "formulas" / "texts" / "index.json").read_text(encoding="utf-8"))
    assert next(e for e in index["texts"] if e["slug"] == SODIUM)["version"] == NEW
    # 4. the changelog says who, why and what
    code, out, _ = formula(capsys, root, "changelog", "--since", today, "--format", "json")
    [entry] = [e for e in json.loads(out) if (e["slug"], e["version"]) == (SODIUM, NEW)]  # others may be released today
    assert (entry["version"], entry["released_by"], entry["approved_by"]) == (NEW, "R. Maintainer", "Dr A. Chair")
    assert entry["changes"] == ["constant correction_per_mg_dl_glucose: 0.024 -> 0.016 mEq/L per mg/dL",
                                "constant correction_per_mg_dl_glucose label: Hillier factor -> Katz factor"]
    # 5. a review signs the active version off and sets the next due date
    code, out, err = formula(capsys, root, "review", SODIUM, *people.args("pharmacist"))
    assert code == 0, err
    code, out, _ = formula(capsys, root, "due", "--format", "json")
    assert SODIUM not in {r["slug"] for r in json.loads(out)}
    next_year = (clock.today() + dt.timedelta(days=366)).isoformat()
    code, out, _ = formula(capsys, root, "due", "--on", next_year, "--overdue", "--format", "json")
    assert [r["slug"] for r in json.loads(out)] == [SODIUM]
    assert problems(root) == []
