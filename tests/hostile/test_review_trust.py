"""Issue 49, item 2: trust is judged by the base. A change that loosens who may decide (a role granted, four eyes
off, a count lowered, a key's window reopened, signatures no longer required) and uses the loosening in the same
change validates on its own terms; `formula review-pr` must block it (exit 1), naming the decision.

Each loosening is generated with the decision that uses it; a change that loosens nothing passes.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.audit.test_review_pr import CALCIUM, git, key, make_repo
from tests.helpers import make_key, run, set_policy, signer_line

OPEN = {"four_eyes": False, "approver_roles": []}  # a signed maintainer releases at once


def _grant_chair(repo: Path) -> None:
    path = repo / "formulas" / "policy" / "governance.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["people"]["author"]["roles"].append("chair")
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def _author_line(repo: Path, **window: str) -> None:
    path = repo / "formulas" / "policy" / "allowed_signers"
    lines = [line for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
             if not line.startswith("author ")]
    path.write_text("".join(lines) + signer_line("author", make_key("author"), **window), encoding="utf-8")


# name: (the base's policy, what the change loosens, how the change's decision is made, what the warning says)
LOOSENINGS: dict[str, tuple[dict, Callable[[Path], None], list[str], str]] = {
    "four eyes switched off": ({"four_eyes": True, "approver_roles": []},
                               lambda r: set_policy(r, four_eyes=False), key(), "too few approvers: 0 of 1"),
    "count lowered": ({**OPEN, "approvals_required": 2}, lambda r: set_policy(r, approvals_required=1), key(),
                      "too few approvers: 1 of 2"),
    "count for one calculator lowered": ({**OPEN, "approvals_required_for": {CALCIUM: 3}},
                                         lambda r: set_policy(r, approvals_required_for={}), key(),
                                         "too few approvers: 1 of 3"),
    "approver roles opened": ({"four_eyes": False, "approver_roles": ["chair"]},
                              lambda r: set_policy(r, approver_roles=[]), key(), "too few approvers: 0 of 1"),
    "role granted": ({"four_eyes": False, "approver_roles": ["chair"]}, _grant_chair, [*key(), "--role", "chair"],
                     "role 'chair' is not one of author's roles"),
    "signatures no longer required": (OPEN, lambda r: set_policy(r, require_signatures=False),
                                      ["--by", "R. Maintainer", "--role", "clinical informatician"],
                                      "a typed released_by is not a decision"),
    "key window reopened": (OPEN, _author_line, key(), "is not valid on"),
}


def _base(tmp_path: Path, policy: dict, name: str) -> Path:
    repo = make_repo(tmp_path / "repo", **policy)
    if name == "key window reopened":  # the base's key of the author expired long ago
        _author_line(repo, valid_before="20200101")
        git(repo, "commit", "-qam", "the author's key expired")
        git(repo, "branch", "-f", "main")
    return repo


@pytest.mark.parametrize("name", sorted(LOOSENINGS))
def test_a_decision_that_counts_only_under_the_changes_own_rules_blocks(name: str, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    policy, loosen, how, said = LOOSENINGS[name]
    repo = _base(tmp_path, policy, name)
    loosen(repo)
    code, _, err = run(capsys, "fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "uses the loosening",
                       "--root", str(repo), *how)
    assert code == 0, err
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", name)
    code, out, _ = run(capsys, "review-pr", "--base", "main", "--root", str(repo), "--format", "json")
    report = json.loads(out)
    assert report["problems"] == [], report["problems"]  # the head validates on its own terms
    assert code == 1 and any(CALCIUM in w and said in w for w in report["blocking"]), report["blocking"]


def test_the_same_decision_under_unchanged_rules_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo", **OPEN)
    assert run(capsys, "fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "r", "--root", str(repo),
               *key())[0] == 0
    code, out, _ = run(capsys, "review-pr", "--base", "main", "--root", str(repo), "--format", "json")
    report = json.loads(out)
    assert (code, report["blocking"], report["problems"]) == (0, [], [])


# (the base's policy, what the change loosens): the chair's one approval counts only under the change's own rules
DRAFT_LOOSENINGS = {"count lowered": ({"approvals_required": 2, "approver_roles": []}, {"approvals_required": 1}),
                    "roles opened": ({"approver_roles": ["renal pharmacist"]}, {"approver_roles": []})}


@pytest.mark.parametrize("name", sorted(DRAFT_LOOSENINGS))
def test_a_waiting_draft_approved_only_under_the_changes_rules_blocks(name: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import datetime as dt

    from registry import clock

    base, loosen = DRAFT_LOOSENINGS[name]
    repo = make_repo(tmp_path / "repo", four_eyes=True, **base)
    set_policy(repo, **loosen)
    later = (clock.today() + dt.timedelta(days=7)).isoformat()
    assert run(capsys, "fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "r", "--date", later,
               "--root", str(repo), *key())[0] == 0
    code, _, err = run(capsys, "approve", CALCIUM, "1.1.0", "--reason", "ok", "--root", str(repo), *key("chair"))
    assert code == 0, err
    code, out, _ = run(capsys, "review-pr", "--base", "main", "--root", str(repo), "--format", "json")
    report = json.loads(out)
    assert code == 1 and any("its draft is approved only under this change's own rules" in w
                             for w in report["blocking"]), (report["blocking"], report["calculators"][0]["head_state"])
