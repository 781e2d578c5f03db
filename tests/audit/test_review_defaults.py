"""`formula review-pr` on the right registry and base: where no registry is found it refuses (issue 49, item 10),
and without --base it reviews against the merge-base with main (issue 50, item 5)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit.review_cli import NO_REGISTRY
from tests.audit.test_review_pr import CALCIUM, git, key, make_repo
from tests.helpers import run


def test_a_folder_with_no_registry_is_refused_not_the_packages_own(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORMULA_REGISTRY_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "review-pr", "--base", "main")
    assert (code, out) == (NO_REGISTRY, "") and "no registry here" in err and "--root" in err


def test_without_base_the_change_is_reviewed_against_where_it_left_main(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo")
    assert run(capsys, "fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "r", "--root", str(repo),
               *key())[0] == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the change")
    fork = git(repo, "rev-parse", "main")
    git(repo, "checkout", "-q", "main")  # main moves on after the branch left it
    (repo / "formulas" / "policy" / "NOTE.md").write_text("later on main\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "main moves on")
    git(repo, "checkout", "-q", "change")
    code, out, _ = run(capsys, "review-pr", "--root", str(repo), "--format", "json")
    report = json.loads(out)
    assert report["blocking"] == [] and report["problems"] == [], (report["blocking"], report["problems"])
    assert code == 0 and report["base"]["commit"] == fork and report["base"]["revision"] == "merge-base with main"
    assert [c["slug"] for c in report["calculators"]] == [CALCIUM]
    assert all(p["path"] != "formulas/policy/NOTE.md" for p in report["paths"])  # main's later work is not the change's


def test_without_base_or_main_it_says_to_give_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "branch", "-m", "main", "trunk")
    code, out, err = run(capsys, "review-pr", "--root", str(repo))
    assert (code, out) == (2, "") and "unknown revision 'main'" in err
