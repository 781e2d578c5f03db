"""`formula people add|rotate|retire`: allowed_signers and the policy's people: edited together, round-trip,
checked before anything is written, one change under the registry lock (real processes: two at once, and one
killed with SIGKILL at every step of its write)."""
from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from registry.loader import PROJECT_ROOT, clear_cache
from registry.trust.sshsig import parse_signers
from tests.helpers import make_key, run
from tests.registry.helpers import NEW, SODIUM, fingerprint, kill_at, problems

TODAY = "2026-12-02"
POLICY = Path("formulas") / "policy"
FORK = multiprocessing.get_context("fork")


@pytest.fixture
def root(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """A committee's registry made by `formula init`, with a comment added to its policy (it must survive)."""
    monkeypatch.setenv("FORMULA_TODAY", TODAY)
    target = tmp_path / "committee"
    code, _, err = run(capsys, "init", str(target), "--key", f"{make_key('chair')}.pub", "--name", "Dr A. Chair",
                       "--role", "chair", "--no-git")
    assert code == 0, err
    policy = target / POLICY / "governance.yaml"
    policy.write_text(policy.read_text(encoding="utf-8").replace("four_eyes: true", "four_eyes: true  # always"),
                      encoding="utf-8")
    return target


def people(capsys, root: Path, *argv: str) -> tuple[int, str, str]:
    clear_cache()
    return run(capsys, "people", *argv, "--root", str(root))


def signers(root: Path) -> list[tuple[str, str | None, str | None]]:
    found, bad = parse_signers((root / POLICY / "allowed_signers").read_text(encoding="utf-8"))
    assert not bad
    return [(s.principal, s.valid_after, s.valid_before) for s in found]


def test_add_rotate_retire_keep_the_policy_and_the_keys_in_step(capsys, root: Path) -> None:
    before = (root / POLICY / "governance.yaml").read_text(encoding="utf-8")
    code, out, err = people(capsys, root, "add", "pharmacist", "--key", f"{make_key('pharmacist')}.pub", "--name",
                            "B. Pharmacist", "--new-role", "renal pharmacist")
    assert code == 0, err
    assert "added pharmacist: B. Pharmacist (renal pharmacist)" in out
    after = (root / POLICY / "governance.yaml").read_text(encoding="utf-8")
    assert after.startswith(before.split("people:")[0]) and "four_eyes: true  # always" in after  # round-trip
    assert yaml.safe_load(after)["people"]["pharmacist"] == {"name": "B. Pharmacist", "roles": ["renal pharmacist"]}
    assert signers(root) == [("chair", None, None), ("pharmacist", None, None)]
    assert problems(root) == []
    # the new person can approve the chair's draft (four eyes)
    clear_cache()
    code, _, err = run(capsys, "fix", SODIUM, "--set", "reference_glucose=90", "--reason", "reference", "--draft",
                       "--key", str(make_key("chair")), "--root", str(root))
    assert code == 0, err
    clear_cache()
    code, out, err = run(capsys, "approve", SODIUM, NEW, "--reason", "agreed", "--key", str(make_key("pharmacist")),
                         "--root", str(root))
    assert code == 0 and "now active" in out, err
    # rotate today: the old key valid through today (its approval stays valid), the new one from today
    code, out, err = people(capsys, root, "rotate", "pharmacist", "--key", f"{make_key('pharmacist-2026')}.pub")
    assert code == 0, err
    assert signers(root) == [("chair", None, None), ("pharmacist", None, "20261203"),
                             ("pharmacist", "20261202", None)]
    assert problems(root) == []
    # retire the chair from the 9th: keys closed, name and roles kept (their decisions stay verified)
    code, out, err = people(capsys, root, "retire", "chair", "--on", "2026-12-09")
    assert code == 0, err
    assert signers(root)[0] == ("chair", None, "20261210")
    policy = (root / POLICY / "governance.yaml").read_text(encoding="utf-8")
    assert "chair:  # retired: keys valid up to 2026-12-09" in policy and "Dr A. Chair" in policy
    assert problems(root) == []
    assert run(capsys, "verify", "--root", str(root))[0] in (0, 3)


BAD = [
    ("a key ssh-keygen cannot read", ["add", "x", "--key", "{truncated}", "--name", "X", "--role", "chair"],
     "ssh-keygen cannot read it"),
    ("no such key", ["add", "x", "--key", "/nonexistent/k.pub", "--name", "X", "--role", "chair"], "no such file"),
    ("an unknown role", ["add", "x", "--key", "{fresh}", "--name", "X", "--role", "chiar"],
     "'chiar' is not a role of this committee (known: chair)"),
    ("a new role that exists", ["add", "x", "--key", "{fresh}", "--name", "X", "--new-role", "Chair"],
     "already a role"),
    ("a duplicate principal", ["add", "chair", "--key", "{fresh}", "--name", "X", "--role", "chair"],
     "chair is already a person"),
    ("another person's key", ["add", "x", "--key", "{chair}", "--name", "X", "--role", "chair"],
     "already the key of chair"),
    ("a duplicate name", ["add", "x", "--key", "{fresh}", "--name", "dr a. chair", "--role", "chair"],
     "already the name of chair"),
    ("a pattern principal", ["add", "*@example.org", "--key", "{fresh}", "--name", "X", "--role", "chair"],
     "one literal identity"),
    ("a rotation dated in the past", ["rotate", "chair", "--key", "{fresh}", "--on", "2026-12-01"],
     "--on 2026-12-01 is in the past (today is 2026-12-02)"),
    ("a rotation to the same key", ["rotate", "chair", "--key", "{chair}"], "already a key of chair"),
    ("rotating an unknown person", ["rotate", "nobody", "--key", "{fresh}"], "nobody is not a person"),
    ("retiring in the past", ["retire", "chair", "--on", "2025-01-01"], "is in the past"),
    ("not a date", ["retire", "chair", "--on", "soon"], "--on must be a real date"),
]


@pytest.mark.parametrize("why, argv, needle", BAD, ids=[b[0] for b in BAD])
def test_every_argument_is_checked_before_anything_is_written(capsys, root: Path, tmp_path: Path, why, argv,
                                                               needle) -> None:
    truncated = tmp_path / "truncated.pub"  # base64 that parses, a blob ssh-keygen refuses
    truncated.write_text("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAAA x\n", encoding="utf-8")
    subs = {"{truncated}": str(truncated), "{fresh}": f"{make_key('newcomer')}.pub",
            "{chair}": f"{make_key('chair')}.pub"}
    before = fingerprint(root)
    code, out, err = people(capsys, root, *[subs.get(a, a) for a in argv])
    assert code == 1 and needle in err and "Traceback" not in err, (out, err)
    assert fingerprint(root) == before


def test_retiring_twice_and_rotating_a_retired_person_are_refused(capsys, root: Path) -> None:
    assert people(capsys, root, "retire", "chair")[0] == 0
    code, _, err = people(capsys, root, "retire", "chair")
    assert code == 1 and "already retired" in err
    code, _, err = people(capsys, root, "rotate", "chair", "--key", f"{make_key('newcomer')}.pub", "--on", "2026-12-05")
    assert code == 1 and "they are retired" in err


def _cli(root: Path, *argv: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cli.main", "people", *argv, "--root", str(root)],
                            cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "FORMULA_TODAY": TODAY})


@pytest.mark.skipif(sys.platform != "linux", reason="fork and SIGKILL semantics tested on Linux")
def test_four_additions_at_once_all_land(root: Path) -> None:
    names = ["ana", "ben", "cai", "dee"]
    procs = [_cli(root, "add", n, "--key", f"{make_key(n)}.pub", "--name", n.title(), "--role", "chair")
             for n in names]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, outs
    assert sorted(p for p, _, _ in signers(root)) == sorted(["chair", *names])
    policy = yaml.safe_load((root / POLICY / "governance.yaml").read_text(encoding="utf-8"))
    assert sorted(policy["people"]) == sorted(["chair", *names])
    assert problems(root) == []


def _add_child(root: str, events) -> None:
    """`formula people add` in a forked process that reports each step of its write and pauses to be killed."""
    import registry.atomic as atomic

    real_write, real_remove = atomic.atomic_write, atomic._remove

    def write(path, data):
        events.send(("write", str(path)))
        time.sleep(0.05)
        real_write(path, data)

    def remove(path):
        events.send(("remove", str(path)))
        time.sleep(0.05)
        real_remove(path)

    atomic.atomic_write, atomic._remove = write, remove
    from cli.main import main

    clear_cache()
    code = main(["people", "add", "pharmacist", "--key", f"{make_key('pharmacist')}.pub", "--name", "B. Pharmacist",
                 "--new-role", "renal pharmacist", "--root", root])
    events.send(("exit", code))
    os._exit(code)


def _state(root: Path) -> str:
    who = {p for p, _, _ in signers(root)}
    policy = yaml.safe_load((root / POLICY / "governance.yaml").read_text(encoding="utf-8"))
    assert who == set(policy["people"]), "allowed_signers and people: disagree"
    return "new" if "pharmacist" in who else "old"


@pytest.mark.skipif(sys.platform != "linux", reason="fork and SIGKILL semantics tested on Linux")
@pytest.mark.parametrize("step", [0, 1, 2, 3, 4, 99])
def test_killed_at_any_step_the_keys_and_people_agree(capsys, root: Path, tmp_path: Path, monkeypatch, step) -> None:
    """Step 0 kills while it loads; k at the k-th write or removal (journal, the two files, the journal's
    removal); 99 lets it finish. After each, the two files agree, once `formula recover` has run if needed."""
    make_key("pharmacist")
    parent, child = FORK.Pipe()
    proc = FORK.Process(target=_add_child, args=(str(root), child))
    proc.start()
    finished = kill_at(proc, parent, step, 60)
    found = problems(root)
    if found:
        assert any("formula recover" in p for p in found), found
        assert run(capsys, "recover", "--root", str(root))[0] == 0
        assert problems(root) == [] and _state(root) == "old"
    state = _state(root)
    assert state == "new" if finished else state in ("old", "new")


def test_a_policy_with_no_people_yet_gets_a_block_of_them(capsys, root: Path) -> None:
    """`people: {}` (the shipped policy's) becomes a block mapping, one person under another; the comments stay."""
    import re

    policy = root / POLICY / "governance.yaml"
    text = policy.read_text(encoding="utf-8")
    policy.write_text(re.sub(r"people:\n(  .*\n)+", "people: {}  # none yet\n", text), encoding="utf-8")
    (root / POLICY / "allowed_signers").write_text("# no keys yet\n", encoding="utf-8")
    code, _, err = people(capsys, root, "add", "chair", "--key", f"{make_key('chair')}.pub", "--name", "Dr A. Chair",
                          "--new-role", "chair")
    assert code == 0, err
    after = policy.read_text(encoding="utf-8")
    assert re.search(r"people: *# none yet\n  chair:\n    name: Dr A. Chair\n", after), after
    assert "four_eyes: true  # always" in after
    assert problems(root) == []
