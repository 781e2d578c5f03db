"""Where the policy does not require signatures, the review lists the typed decisions too (issue 49, item 11): each
with who, role, reason, date and "not signed", the release, a waiting draft's author and its approval alike."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.audit.test_review_pr import CALCIUM, make_repo
from tests.helpers import run

TYPED = ["--by", "A. Typist", "--role", "pharmacist"]


def _review(capsys: pytest.CaptureFixture[str], repo: Path) -> tuple[int, dict, str]:
    code, out, _ = run(capsys, "review-pr", "--base", "main", "--root", str(repo), "--format", "json")
    _, md, _ = run(capsys, "review-pr", "--base", "main", "--root", str(repo))
    return code, json.loads(out), md


@pytest.mark.parametrize("steps", ["release", "draft", "draft approved"])
def test_typed_decisions_are_listed_with_who_role_reason_date_and_not_signed(tmp_path: Path, steps: str,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo", require_signatures=False, four_eyes=True)
    draft = [] if steps == "release" else ["--draft"]
    code, _, err = run(capsys, "fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "typed reason",
                       *draft, *TYPED, "--root", str(repo))
    assert code == 0, err
    if steps == "draft approved":
        code, _, err = run(capsys, "approve", CALCIUM, "1.1.0", "--by", "Dr A. Chair", "--role", "chair", "--reason", "agreed",
                           "--root", str(repo))
        assert code == 0, err
    code, report, md = _review(capsys, repo)
    [calcium] = report["calculators"]
    shown = [(d["decision"], d["name"], d["role"], d["reason"], d["state"]) for d in calcium["decisions"]]
    made = "draft" if steps == "draft" else "release"  # approved, the draft is the version released
    first = (made, "A. Typist", "pharmacist", "typed reason", "unsigned")
    assert shown[0] == first, shown
    if steps == "draft approved":
        assert ("approve", "Dr A. Chair", "chair", "agreed", "unsigned") in shown, shown
    assert all(d["date"] for d in calcium["decisions"])
    line = next(x for x in md.splitlines() if "A. Typist (pharmacist)" in x)
    assert "reason: typed reason" in line and "(not signed: a typed name" in line and " on 20" in line
