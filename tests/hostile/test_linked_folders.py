"""A registry folder that is a symbolic link is refused in working-tree reads, as a linked file is
(tests/hostile/test_links.py): named once, nothing read through it, no traceback, nothing written.

Generated variants: every registry folder (formulas/, guidelines/, policy, history, texts, drafts, results,
a calculator's history folder), linked to a copy of itself (the same content: only the link is wrong) or to a
folder outside, and read by several commands."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from registry.plain_files import FileRefused, linked_folder, read_bytes
from tests.hostile.helpers import formula, hostile_copy, problems

FOLDERS = ["formulas", "guidelines", "formulas/policy", "formulas/history", "formulas/texts",
           "formulas/history/body-mass-index", "formulas/drafts"]


def _link(root: Path, folder: str, target: str) -> Path:
    """Move `folder` away (to a copy outside the registry) and link it back; `target` "copy" or "empty"."""
    path = root / folder
    away = root.parent / ("away-" + folder.replace("/", "-"))
    if path.exists():
        shutil.move(str(path), str(away))
    else:
        away.mkdir(parents=True)
        (away / "body-mass-index.yaml").write_text("slug: body-mass-index\n", encoding="utf-8")
    if target == "empty":
        shutil.rmtree(away)
        away.mkdir()
    path.symlink_to(away, target_is_directory=True)
    return path


@pytest.mark.parametrize("target", ["copy", "empty"])
@pytest.mark.parametrize("folder", FOLDERS)
def test_a_linked_registry_folder_is_named_and_not_read(tmp_path: Path, folder: str, target: str) -> None:
    root = hostile_copy(tmp_path)
    _link(root, folder, target)
    found = problems(root)
    named = [msg for f, _, msg in found if f == folder]
    assert named and "symbolic link" in named[0] and "folder" in named[0], found[:3]
    assert not any("Traceback" in msg for _, _, msg in found)


@pytest.mark.parametrize("command", [("validate",), ("list",), ("show", "body-mass-index"), ("lock",)])
@pytest.mark.parametrize("folder", ["formulas", "formulas/policy", "formulas/history"])
def test_commands_refuse_a_linked_folder_in_words(tmp_path: Path, folder: str, command: tuple[str, ...]) -> None:
    root = hostile_copy(tmp_path)
    _link(root, folder, "copy")
    run = formula(root, *command)
    out = run.stdout + run.stderr
    assert run.returncode != 0 and "Traceback" not in out and folder in out, out[-2000:]


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_a_file_below_a_linked_results_folder_is_refused_by_name(tmp_path: Path, depth: int) -> None:
    from audit.runs import RunError, read_run

    elsewhere = tmp_path / "elsewhere"
    run_dir = elsewhere.joinpath(*["sub"] * depth, "run")
    run_dir.mkdir(parents=True)
    (run_dir / "results.jsonl").write_text('{"row_number": 1}\n', encoding="utf-8")
    (tmp_path / "results").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(RunError, match="results.*symbolic link"):
        read_run(tmp_path / "results" / Path(*["sub"] * depth) / "run")


def test_the_reader_checks_only_up_to_the_registry_folder(tmp_path: Path) -> None:
    """A link above the registry (a home folder on another disk) is the user's business, not a registry's."""
    real = tmp_path / "real"
    (real / "formulas" / "policy").mkdir(parents=True)
    (real / "formulas" / "policy" / "x.yaml").write_text("a: 1\n", encoding="utf-8")
    (tmp_path / "home").symlink_to(real, target_is_directory=True)
    assert read_bytes(tmp_path / "home" / "formulas" / "policy" / "x.yaml") == b"a: 1\n"
    assert linked_folder(tmp_path / "home" / "formulas" / "policy" / "x.yaml") is None
    (real / "formulas" / "policy").rename(real / "formulas" / "kept")
    (real / "formulas" / "policy").symlink_to(real / "formulas" / "kept", target_is_directory=True)
    with pytest.raises(FileRefused, match=r"registry folder that is a symbolic link \(policy\)"):
        read_bytes(tmp_path / "home" / "formulas" / "policy" / "x.yaml")
