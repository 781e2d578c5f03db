"""A planted formulas/.journal.json writes nowhere: an entry that is absolute, climbs with `..`, leaves
formulas/ or passes through a symbolic link is refused with a clear message and never applied, by
`formula recover` and by every writing command (each recovers first)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from registry.atomic import JOURNAL_NAME, commit, read_journal
from registry.loader import clear_cache
from tests.helpers import run
from tests.hostile.helpers import formula, hostile_copy, problems

SODIUM = "sodium-correction-hyperglycemia"


def _cmd(capsys: pytest.CaptureFixture[str], root: Path, *argv: str, real: bool) -> tuple[int, str]:
    """(exit status, stderr) of `formula ARGV --root ROOT`: a real process, or in this one (the same code, faster)."""
    if real:
        proc = formula(root, *argv, cwd=root.parent)
        return proc.returncode, proc.stderr
    clear_cache()
    code, _, err = run(capsys, *argv, "--root", str(root))
    return code, err


def _journal(root: Path, files: dict[str, Any]) -> Path:
    p = root / "formulas" / JOURNAL_NAME
    p.write_text(json.dumps({"format": 1, "about": "planted", "files": files}), encoding="utf-8")
    return p


def _victim(tmp_path: Path) -> Path:
    v = tmp_path / "victim.txt"
    v.write_text("precious\n", encoding="utf-8")
    return v


def _absolute(root: Path, victim: Path) -> dict[str, Any]:
    return {str(victim): "overwritten\n"}


def _absolute_delete(root: Path, victim: Path) -> dict[str, Any]:
    return {str(victim): None}


def _dotdot(root: Path, victim: Path) -> dict[str, Any]:
    return {os.path.relpath(victim, root): "overwritten\n"}


def _dotdot_inside(root: Path, victim: Path) -> dict[str, Any]:
    return {"formulas/../../" + victim.name: "overwritten\n"}


def _outside_formulas(root: Path, victim: Path) -> dict[str, Any]:
    (root / "setup.py").write_text("# the project's own code\n", encoding="utf-8")
    return {"setup.py": "import os; os.system('touch PWNED')\n"}


def _symlinked_folder(root: Path, victim: Path) -> dict[str, Any]:
    (root / "formulas" / "history" / "evil").symlink_to(victim.parent, target_is_directory=True)
    return {f"formulas/history/evil/{victim.name}": "overwritten\n"}


def _symlinked_file(root: Path, victim: Path) -> dict[str, Any]:
    (root / "formulas" / "texts" / "evil.md").symlink_to(victim)
    return {"formulas/texts/evil.md": None}


def _folder(root: Path, victim: Path) -> dict[str, Any]:
    return {"formulas/texts": None}


def _folder_written(root: Path, victim: Path) -> dict[str, Any]:
    return {"formulas/history": "overwritten\n"}


def _under_a_file(root: Path, victim: Path) -> dict[str, Any]:
    return {"formulas/units.yaml/inside.yaml": "overwritten\n"}


PAYLOADS: list[Callable[[Path, Path], dict[str, Any]]] = [
    _absolute, _absolute_delete, _dotdot, _dotdot_inside, _outside_formulas, _symlinked_folder, _symlinked_file,
    _folder, _folder_written, _under_a_file]


@pytest.mark.parametrize("payload", PAYLOADS, ids=[p.__name__.strip("_") for p in PAYLOADS])
def test_recover_refuses_a_journal_that_leaves_formulas(tmp_path: Path, payload: Callable,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    root = hostile_copy(tmp_path)
    victim = _victim(tmp_path)
    files = payload(root, victim)
    setup = (root / "setup.py").read_text(encoding="utf-8") if (root / "setup.py").exists() else None
    journal = _journal(root, files)
    code, err = _cmd(capsys, root, "recover", real=payload is _absolute)
    assert code == 1, err
    assert err.startswith("error: ") and JOURNAL_NAME in err and "Traceback" not in err
    assert repr(next(iter(files))) in err, err  # the message names the entry
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert setup is None or (root / "setup.py").read_text(encoding="utf-8") == setup
    assert not (tmp_path / "PWNED").exists() and journal.exists()  # kept, for a person to inspect
    if payload is _dotdot:  # validate names it too
        assert any(code == "R-JOURNAL" and "refused" in msg for _, code, msg in problems(root))


WRITERS = [
    ("review", SODIUM, "--by", "Ada", "--role", "pharmacist"),
    ("fix", SODIUM, "--set", "reference_glucose=90", "--reason", "r"),
    ("release", SODIUM, "--reason", "r"),
    ("approve", SODIUM, "1.9.0", "--by", "Ada", "--role", "pharmacist", "--reason", "agreed"),
    ("activate",),
    ("lock",),
    ("lock", "--rehash"),
    ("texts", "render"),
]


@pytest.mark.parametrize("argv", WRITERS, ids=[" ".join(a[:2]) for a in WRITERS])
def test_every_writing_command_refuses_a_planted_journal(tmp_path: Path, argv: tuple[str, ...],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    root = hostile_copy(tmp_path)
    victim = _victim(tmp_path)
    _journal(root, {**_dotdot(root, victim), **_absolute_delete(root, victim)})
    before = {p: p.read_bytes() for p in (root / "formulas").rglob("*") if p.is_file() and p.name != ".registry.lock"}
    code, err = _cmd(capsys, root, *argv, real=argv[0] == "review")
    assert code == 1, err
    assert JOURNAL_NAME in err and "refused" in err and "Traceback" not in err
    assert victim.read_text(encoding="utf-8") == "precious\n"
    after = {p: p.read_bytes() for p in (root / "formulas").rglob("*") if p.is_file() and p.name != ".registry.lock"}
    assert after == before  # nothing written, the refused journal included


def test_a_journal_that_is_a_link_or_not_a_journal_is_refused(tmp_path: Path) -> None:
    from registry.atomic import JournalRefused

    root = hostile_copy(tmp_path)
    victim = _victim(tmp_path)
    j = root / "formulas" / JOURNAL_NAME
    j.symlink_to(victim)
    with pytest.raises(JournalRefused, match="symbolic link"):
        read_journal(root / "formulas")
    j.unlink()
    j.write_text(json.dumps({"files": [str(victim)]}), encoding="utf-8")
    with pytest.raises(JournalRefused, match="no `files` mapping"):
        read_journal(root / "formulas")
    j.write_text(json.dumps({"files": {"formulas/units.yaml": 42}}), encoding="utf-8")
    with pytest.raises(JournalRefused, match="no file content"):
        read_journal(root / "formulas")


def test_commit_refuses_a_change_the_journal_could_not_roll_back(tmp_path: Path) -> None:
    from registry.atomic import JournalRefused

    root = hostile_copy(tmp_path)
    victim = _victim(tmp_path)
    units = root / "formulas" / "units.yaml"
    before = units.read_text(encoding="utf-8")
    for target in (victim, root / "setup.py"):
        with pytest.raises(JournalRefused):
            commit(root, {units: "changed\n", target: "overwritten\n"})
    assert units.read_text(encoding="utf-8") == before and victim.read_text(encoding="utf-8") == "precious\n"
    assert not (root / "formulas" / JOURNAL_NAME).exists()


@pytest.mark.parametrize("argv", [("recover",), *WRITERS], ids=["recover", *(" ".join(a[:2]) for a in WRITERS)])
def test_a_journal_entry_naming_a_folder_is_refused_with_nothing_applied(tmp_path: Path, argv: tuple[str, ...],
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    root = hostile_copy(tmp_path)
    _journal(root, {"formulas/units.yaml": "overwritten\n", "formulas/texts": None})
    before = {p: p.read_bytes() for p in (root / "formulas").rglob("*") if p.is_file() and p.name != ".registry.lock"}
    code, err = _cmd(capsys, root, *argv, real=argv[0] in ("recover", "lock"))
    assert code == 1 and "Traceback" not in err and "IsADirectoryError" not in err, err
    assert "'formulas/texts'" in err and "folder" in err, err
    after = {p: p.read_bytes() for p in (root / "formulas").rglob("*") if p.is_file() and p.name != ".registry.lock"}
    assert after == before  # units.yaml untouched: no entry is applied before every entry is checked
    assert any(code == "R-JOURNAL" and "folder" in msg for _, code, msg in problems(root))


def test_commit_refuses_to_write_a_folder(tmp_path: Path) -> None:
    from registry.atomic import JournalRefused

    root = hostile_copy(tmp_path)
    units = root / "formulas" / "units.yaml"
    before = units.read_text(encoding="utf-8")
    with pytest.raises(JournalRefused, match="folder"):
        commit(root, {units: "changed\n", root / "formulas" / "texts": None})
    assert units.read_text(encoding="utf-8") == before and (root / "formulas" / "texts").is_dir()
