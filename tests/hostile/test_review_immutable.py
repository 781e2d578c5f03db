"""Issue 49, item 3: a released version never changes and the seal stays closed, judged against the base.

The attack rewrites a released version in place (same number) and recomputes everything the head could
check it by: its lock hash, its snapshot, its seal entry and the seal's digest. `formula validate` then passes
on the head alone; `formula review-pr` must block it, whatever the head's lock says. Rewrites are generated
over several calculators and several kinds of edit; seal edits over entries, digest and date.
"""
from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from registry.loader import clear_cache, load
from registry.trust.decisionlog import LEGACY_FILE, record_hash, seal_digest, trust
from registry.versions import content_hash, lock_seal, lock_text, read_lock, released_content, write_snapshot
from registry.yamlio import rt_dump, rt_load
from tests.audit.test_review_pr import git, make_repo
from tests.helpers import run
from tests.hostile.helpers import edit_yaml, formula, problems


def _leaves(root: Path) -> list[str]:
    """Calculators no other depends on: rewriting one moves no other hash (the attacker's easiest targets)."""
    reg = load(root)
    used = {d for c in reg.calculators.values() for d in c.depends_on}
    return sorted(s for s in reg.calculators if s not in used)


def _text(data: Any) -> None:
    data["versions"][-1]["text"] = data["versions"][-1]["text"] + "\nAnd one sentence more.\n"


def _name(data: Any) -> None:
    data["name"] = data["name"] + " (as amended)"


def _notes(data: Any) -> None:
    data["versions"][-1]["changelog"] = "what it always said"


EDITS: dict[str, Callable[[Any], None]] = {"text": _text, "name": _name, "changelog": _notes}


def reseal(root: Path, slug: str, *, render: bool = True) -> None:
    """Recompute what the head checks a rewritten active version by: lock hash, snapshot, seal entry, seal digest."""
    clear_cache()
    reg = load(root)
    c = reg.calculators[slug]
    v = c.active
    data = released_content(reg, c, v)
    write_snapshot(reg.formulas_dir, slug, data)
    lock = read_lock(reg.lock_path)
    lock[slug][v.version] = content_hash(data)
    seal_path = reg.formulas_dir / LEGACY_FILE
    sealed = rt_load(seal_path)
    sealed[slug][v.version]["content"] = content_hash(data)
    sealed[slug][v.version]["record"] = record_hash(v)
    seal_path.write_text(rt_dump(sealed), encoding="utf-8")
    seal = lock_seal(reg.lock_path) or {}
    seal["digest"] = seal_digest(trust(reg.formulas_dir).legacy)
    reg.lock_path.write_text(lock_text(lock, seal), encoding="utf-8")
    clear_cache()
    if render:
        made = formula(root, "texts", "render")  # and the rendered texts the head publishes
        assert made.returncode == 0, made.stderr


def _review(capsys: pytest.CaptureFixture[str], repo: Path, message: str) -> tuple[int, dict]:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    code, out, _ = run(capsys, "review-pr", "--base", "main", "--head", "change", "--root", str(repo),
                       "--format", "json")
    return code, json.loads(out)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("immutable") / "repo")


@pytest.mark.parametrize("edit", sorted(EDITS))
@pytest.mark.parametrize("pick", [0, 3, -1])
def test_a_released_version_rewritten_and_resealed_blocks(shared: Path, capsys: pytest.CaptureFixture[str],
                                                         edit: str, pick: int) -> None:
    repo = shared
    git(repo, "checkout", "-qfB", "change", "main")
    slug = _leaves(repo)[pick]
    edit_yaml(repo / "formulas" / f"{slug}.yaml", EDITS[edit])
    reseal(repo, slug)
    if edit != "changelog":  # a changelog is bookkeeping: the content stays, the seal's record moves
        assert problems(repo) == []  # the head alone cannot tell
    code, report = _review(capsys, repo, f"rewrite {slug}")
    version = load(repo).calculators[slug].active.version
    said = report["blocking"]
    assert code == 1 and any("recorded_before_signing.yaml" in w and "edits the seal" in w for w in said), said
    rewritten = [w for w in said if w.startswith(f"{slug} {version}: released on the base")]
    assert len(rewritten) == (edit != "changelog"), said  # content moved: judged by the base's hash


def _add_entry(data: Any) -> None:
    data["calcium-correction"]["9.9.9"] = {"content": "sha256:" + "0" * 64, "record": "sha256:" + "1" * 64,
                                           "last_review": None, "next_review": None}


def _drop_entry(data: Any) -> None:
    del data["calcium-correction"][next(iter(data["calcium-correction"]))]


def _record(data: Any) -> None:
    entry = data["anion-gap"][next(iter(data["anion-gap"]))]
    entry["record"] = "sha256:" + "2" * 64


SEAL_EDITS: dict[str, Callable[[Any], None] | None] = {"entry added": _add_entry, "entry removed": _drop_entry,
                                                       "record edited": _record, "date moved": None}


@pytest.mark.parametrize("edit", sorted(SEAL_EDITS))
def test_any_change_to_the_seal_blocks(shared: Path, capsys: pytest.CaptureFixture[str], edit: str) -> None:
    repo = shared
    git(repo, "checkout", "-qfB", "change", "main")
    lock = repo / "formulas" / "REGISTRY.lock"
    data = json.loads(lock.read_text(encoding="utf-8"))
    change = SEAL_EDITS[edit]
    if change is None:
        data["sealed_before_signing"]["date"] = "2026-12-02"
    else:
        edit_yaml(repo / "formulas" / LEGACY_FILE, change)
        data["sealed_before_signing"]["digest"] = seal_digest(trust(repo / "formulas").legacy)
    lock.write_text(json.dumps(data, indent=2), encoding="utf-8")
    code, report = _review(capsys, repo, f"seal {edit}")
    assert code == 1 and any("seal" in w for w in report["blocking"]), report["blocking"]


def test_validate_refuses_a_sealed_version_with_a_decision_after_the_seal(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    slug = "calcium-correction"
    seal_day = dt.date.fromisoformat((lock_seal(root / "formulas" / "REGISTRY.lock") or {})["date"])
    later = (seal_day + dt.timedelta(days=1)).isoformat()

    def late(data: Any) -> None:
        data["versions"][-1]["approved_by"] = {"who": "A. Late", "role": "chair", "date": later}

    edit_yaml(root / "formulas" / f"{slug}.yaml", late)
    reseal(root, slug, render=False)
    found = [m for _, code, m in problems(root) if code == "R-SIGNATURE"]
    assert any(f"records a decision dated {later}, after the seal" in m for m in found), found
