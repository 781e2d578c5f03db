"""Real processes: two writers at once, and `formula fix` killed (SIGKILL) at every step of its write.

After each kill, `validate` must pass with the old or the new state complete, or name the
interrupted change; `formula recover` then restores the old state.
"""
from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from registry.loader import PROJECT_ROOT, clear_cache, load
from tests.helpers import PEOPLE, committee, solo
from tests.registry.helpers import NEW, NEWER, OLD, SODIUM, SODIUM_VERSIONS, copy_registry, kill_at, problems

FORK = multiprocessing.get_context("fork")
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork and SIGKILL semantics tested on Linux")


def _cli(root: Path, *argv: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cli.main", *argv, "--root", str(root)], cwd=PROJECT_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_fixes_at_once_both_land_in_order(tmp_path: Path, monkeypatch) -> None:
    root = copy_registry(tmp_path)
    solo(root, monkeypatch)  # a signed maintainer who may release at once ($FORMULA_SIGNING_KEY, inherited)
    procs = [_cli(root, "fix", SODIUM, "--set", "correction_per_mg_dl_glucose=0.016",
                  "--label", "correction_per_mg_dl_glucose=Katz factor", "--reason", "Katz"),
             _cli(root, "fix", SODIUM, "--set", "reference_glucose=90", "--reason", "reference")]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert problems(root) == []
    c = load(root).calculators[SODIUM]
    assert [v.version for v in c.versions] == SODIUM_VERSIONS + [NEW, NEWER]
    assert c.constants["correction_per_mg_dl_glucose"].value == 0.016 and c.constants["reference_glucose"].value == 90


def test_two_reviews_at_once_keep_both_signoffs(tmp_path: Path) -> None:
    root = copy_registry(tmp_path)
    people = committee(root)
    procs = [_cli(root, "review", SODIUM, *people.args(who)) for who in ("chair", "pharmacist")]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert problems(root) == []  # both signed, and chained one after the other
    reviews = load(root).calculators[SODIUM].active.decisions
    assert sorted(d.principal for d in reviews) == ["chair", "pharmacist"] and reviews[1].previous is not None


APPROVERS = {"chair": PEOPLE["chair"], "pharmacist": PEOPLE["pharmacist"],
             "deputy": ("D. Deputy Chair", ["chair"]), "author": PEOPLE["author"]}


def _draft_for_approval(tmp_path: Path, required: int) -> tuple[Path, object]:
    root = copy_registry(tmp_path)
    people = committee(root, APPROVERS, approvals_required=required)
    done = subprocess.run([sys.executable, "-m", "cli.main", "fix", SODIUM, "--set", "reference_glucose=90",
                           "--reason", "k of n", *people.args("author"), "--root", str(root)], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "drafted" in done.stdout, done.stderr
    return root, people


def test_k_of_n_approvals_by_concurrent_processes_are_neither_lost_nor_double_counted(tmp_path: Path) -> None:
    root, people = _draft_for_approval(tmp_path, required=3)
    procs = [_cli(root, "approve", SODIUM, NEW, "--reason", f"agreed ({who})", *people.args(who))
             for who in ("chair", "pharmacist", "deputy")]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    assert sum("now active" in out for out, _ in outs) == 1  # the third approval, whichever came last
    c = load(root).calculators[SODIUM]
    assert c.active.version == NEW
    assert sorted(d.principal for d in c.active.decisions if d.decision == "approve") == ["chair", "deputy",
                                                                                         "pharmacist"]
    assert problems(root) == []


def test_two_of_three_approvers_at_once_make_it_active_once(tmp_path: Path) -> None:
    root, people = _draft_for_approval(tmp_path, required=2)
    procs = [_cli(root, "approve", SODIUM, NEW, "--reason", "agreed", *people.args(who))
             for who in ("chair", "pharmacist", "deputy")]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    assert sum("now active" in out for out, _ in outs) == 1  # promoted once, at the second approval
    assert sum("(active): approved" in out for out, _ in outs) == 1  # the third joins the active version
    c = load(root).calculators[SODIUM]
    assert c.active.version == NEW
    assert sorted(d.principal for d in c.active.decisions if d.decision == "approve") == ["chair", "deputy",
                                                                                         "pharmacist"]
    assert problems(root) == []


def test_one_approver_twice_at_once_counts_once(tmp_path: Path) -> None:
    root, people = _draft_for_approval(tmp_path, required=2)
    procs = [_cli(root, "approve", SODIUM, NEW, "--reason", "agreed", *people.args("chair")) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert sorted(p.returncode for p in procs) == [0, 1], outs
    assert any("already approved" in err for _, err in outs)
    assert load(root).calculators[SODIUM].active.version == OLD and problems(root) == []


def _fix_child(root: str, events) -> None:
    """`formula fix` in a forked process that reports each step of its write and pauses there to be killed."""
    import registry.atomic as atomic

    real_write, real_replace, real_remove = atomic.atomic_write, os.replace, atomic._remove

    def write(path, data):
        events.send(("write", str(path)))
        time.sleep(0.05)
        real_write(path, data)

    def replace(src, dst):
        events.send(("rename", str(dst)))
        time.sleep(0.05)
        real_replace(src, dst)

    def remove(path):
        events.send(("remove", str(path)))
        time.sleep(0.05)
        real_remove(path)

    atomic.atomic_write, atomic._remove, os.replace = write, remove, replace
    from cli.main import main

    clear_cache()
    code = main(["fix", SODIUM, "--set", "correction_per_mg_dl_glucose=0.016",
                 "--label", "correction_per_mg_dl_glucose=Katz factor", "--reason", "Katz",
                 "--root", root])
    events.send(("exit", code))
    os._exit(code)


def _state(root: Path) -> tuple[str, float]:
    c = load(root).calculators[SODIUM]
    return c.active.version, c.constants["correction_per_mg_dl_glucose"].value


def test_fix_killed_at_every_step_leaves_old_or_new_state_or_names_the_repair(tmp_path: Path, monkeypatch) -> None:
    from cli.main import main

    old, new = (OLD, 0.024), (NEW, 0.016)
    kills_mid_change = 0
    # kill points: while loading (0), then at writes, renames and the journal's removal, spread over the
    # 13 steps of this fix (journal, YAML, snapshot, lock, index and one text: written, then renamed); the
    # last run is let finish
    points = iter([0, 1, 2, 3, 5, 7, 9, 11, 12, 13, 99])
    runs = 0
    base = copy_registry(tmp_path / "base")
    solo(base, monkeypatch)  # the forked child signs with $FORMULA_SIGNING_KEY and releases at once
    while True:
        step = next(points)
        runs += 1
        # hard links are a safe, quick copy: every write here replaces a file (rename), never edits it in place
        root = tmp_path / f"run{step}"
        for d in ("formulas", "guidelines"):
            shutil.copytree(base / d, root / d, copy_function=os.link)
        parent, child = FORK.Pipe()
        proc = FORK.Process(target=_fix_child, args=(str(root), child))
        proc.start()
        # step 0 kills while the command loads and checks; step k kills at the k-th write, rename or removal
        finished = kill_at(proc, parent, step, 30)
        found = problems(root)
        if found:
            kills_mid_change += 1
            assert any("formula recover" in p for p in found), found
            clear_cache()
            assert main(["recover", "--root", str(root)]) == 0
            assert problems(root) == []
            assert _state(root) == old
        else:
            assert _state(root) in (old, new)
        assert not list((root / "formulas").rglob("*.tmp")) or main(["recover", "--root", str(root)]) == 0
        if finished:
            assert _state(root) == new
            break
        assert step < 99, "the command never finished"
    assert runs >= 10
    assert kills_mid_change >= 7
