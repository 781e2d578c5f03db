"""Nothing reviews or decides on the wrong registry or date (issue 49, item 10), generated over places and deciders:
`review-pr` where no registry is found refuses (exit 3) instead of reviewing the package's own copy, and every
deciding command refuses a day after the machine's clock, writing nothing."""
from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

import pytest

from audit.review_cli import NO_REGISTRY
from registry import clock
from tests.helpers import copy_registry, run, solo

GENUINE = clock.real_today  # read at import, before tests/conftest.py lets the clock reach the fixed day
CALCIUM = "calcium-correction"


def _place(tmp_path: Path, kind: str) -> Path:
    here = tmp_path / kind.replace(" ", "-")
    here.mkdir()
    if kind == "only formulas":
        (here / "formulas").mkdir()
    elif kind == "only guidelines":
        (here / "guidelines").mkdir()
    elif kind == "a git repository":
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=here, check=True)
    elif kind == "a subfolder":
        here = here / "a" / "b"
        here.mkdir(parents=True)
    return here


@pytest.mark.parametrize("kind", ["empty", "only formulas", "only guidelines", "a git repository", "a subfolder"])
def test_review_pr_where_no_registry_is_found_refuses(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORMULA_REGISTRY_ROOT", raising=False)
    monkeypatch.chdir(_place(tmp_path, kind))
    for argv in (["review-pr"], ["review-pr", "--base", "main", "--format", "json"]):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (NO_REGISTRY, "") and "no registry here" in err and "validates" not in err


DECIDERS = {
    "fix": ["fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "r"],
    "release": ["release", CALCIUM, "--reason", "r"],
    "review": ["review", CALCIUM],
}


@pytest.mark.parametrize("ahead", [1, 400])
@pytest.mark.parametrize("decider", sorted(DECIDERS))
def test_no_decision_is_signed_on_a_day_that_has_not_come(decider: str, ahead: int, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_registry(tmp_path / "registry")
    solo(root, monkeypatch)
    if decider == "release":  # an edit to release
        path = root / "formulas" / f"{CALCIUM}.yaml"
        path.write_text(path.read_text(encoding="utf-8").replace("value: 0.8", "value: 0.75", 1), encoding="utf-8")
    monkeypatch.setattr(clock, "real_today", GENUINE)
    day = GENUINE() + dt.timedelta(days=ahead)
    monkeypatch.setenv(clock.ENV, day.isoformat())
    before = _files(root)
    code, _, err = run(capsys, *DECIDERS[decider], "--root", str(root))
    assert code != 0 and "after this machine's clock" in err and "Traceback" not in err, err
    assert _files(root) == before


def _files(root: Path) -> dict[Path, bytes]:
    """The registry's files, but the writers' lock file (registry.lock's own, empty, made by any writer)."""
    return {p: p.read_bytes() for p in (root / "formulas").rglob("*") if p.is_file() and p.name != ".registry.lock"}
