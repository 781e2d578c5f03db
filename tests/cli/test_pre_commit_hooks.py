"""The project as a pre-commit hook repository: `pre-commit try-repo` on a registry repository, for real.

pre-commit installs the project from this checkout (`language: python`, its dependencies from PyPI) into
an environment of its own, once; the hooks then run on a clean registry, on a released constant fix (the
stored run it makes stale is caught) and on a hand edit that was never released (validation fails).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from registry.loader import PROJECT_ROOT
from tests.audit.test_review_pr import git, key, make_repo
from tests.helpers import edit, run

HOOKS = ("formula-validate", "formula-texts-check", "formula-stale-check")


def try_repo(repo: Path, home: Path, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(PROJECT_ROOT), *extra], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=1200)


VERDICT = re.compile(r"^(formula .+?)\.{3,}(?:\(no files to check\))?(Passed|Failed|Skipped)$", re.M)


def verdicts(out: str) -> dict[str, str]:
    """hook name -> Passed / Failed / Skipped, from pre-commit's report lines."""
    return dict(VERDICT.findall(out))


def test_the_hooks_run_on_a_registry_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = (PROJECT_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert all(f"id: {h}" in manifest for h in HOOKS) and "--root ." in manifest
    repo, home = make_repo(tmp_path / "repo"), tmp_path / "pre-commit"

    clean = try_repo(repo, home, "--all-files")
    assert clean.returncode == 0, clean.stdout[-3000:] + clean.stderr[-3000:]
    assert verdicts(clean.stdout) == {"formula validate": "Passed", "formula texts render --check": "Passed",
                                      "formula stale --check": "Passed"}, clean.stdout[-3000:]

    # a released fix: the registry is valid and its catalogue current, but the stored run is now stale
    assert run(capsys, "fix", "ideal-body-weight", "--set", "base_height=61", "--reason", "r", "--with-dependants",
               "--root", str(repo), *key())[0] == 0
    git(repo, "add", "-A")
    fixed = try_repo(repo, home)
    assert fixed.returncode == 1
    assert verdicts(fixed.stdout) == {"formula validate": "Passed", "formula texts render --check": "Passed",
                                      "formula stale --check": "Failed"}, fixed.stdout[-3000:]
    assert re.search(r"\d+ stale cases? in 1 of 1 run,", fixed.stdout)
    git(repo, "commit", "-qm", "fix")

    # a hand edit never released: validation names it, and the catalogue no longer matches
    edit(repo / "formulas" / "calcium-correction.yaml", "value: 0.8", "value: 0.9")
    git(repo, "add", "-A")
    hand = try_repo(repo, home)
    assert hand.returncode == 1
    assert verdicts(hand.stdout)["formula validate"] == "Failed" and "R-LOCK-CHANGED" in hand.stdout
    assert verdicts(hand.stdout)["formula texts render --check"] == "Failed"
