"""Symbolic links and special files in a registry (issue 37, attack 3): every reader refuses them by name.

A pull request can commit a symbolic link (git stores it as one), and a working tree can hold a FIFO. A link to
`/proc/self/mem` made validate fail with an OSError traceback; a link to a file outside the repository was read
and its contents shown in the problems. Now each is a problem naming the path, and the target is never opened.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from registry.plain_files import FileRefused, read_bytes
from tests.hostile.helpers import formula, hostile_copy, problems

SECRET = "top-secret-contents-of-a-file-outside-the-repository"


@pytest.fixture()
def outside(tmp_path: Path) -> Path:
    p = tmp_path / "outside.yaml"
    p.write_text(f"slug: {SECRET}\n", encoding="utf-8")
    return p


def _link(path: Path, target: Path | str) -> None:
    path.unlink(missing_ok=True)
    path.symlink_to(target)


@pytest.mark.parametrize("where", ["formulas/anion-gap.yaml", "formulas/units.yaml", "guidelines/aha-2023-prevent-equations.yaml",
                                   "formulas/policy/allowed_signers", "formulas/policy/governance.yaml",
                                   "formulas/policy/recorded_before_signing.yaml", "formulas/REGISTRY.lock",
                                   "formulas/history/anion-gap/1.0.0.yaml", "formulas/texts/index.json"])
def test_a_link_to_a_file_outside_is_named_and_never_read(tmp_path: Path, outside: Path, where: str) -> None:
    root = hostile_copy(tmp_path)
    if not (root / where).exists():
        pytest.skip(f"{where} is not in the shipped registry")  # the parametrisation names shipped files
    _link(root / where, outside)
    found = problems(root)
    assert any(f.endswith(where) and "symbolic link" in msg for f, _, msg in found), found
    assert not any(SECRET in msg for _, _, msg in found)
    run = formula(root, "validate")
    assert run.returncode == 1 and where in run.stdout + run.stderr and "symbolic link" in run.stdout + run.stderr
    assert SECRET not in run.stdout + run.stderr and "Traceback" not in run.stderr


def test_a_link_to_proc_self_mem_is_no_traceback(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    _link(root / "formulas" / "anion-gap.yaml", "/proc/self/mem")
    _link(root / "formulas" / "policy" / "allowed_signers", "/proc/self/mem")
    run = formula(root, "validate")
    out = run.stdout + run.stderr
    assert run.returncode == 1 and "Traceback" not in out, out
    assert "formulas/anion-gap.yaml" in out and "formulas/policy/allowed_signers" in out


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    fifo = root / "formulas" / "policy" / "allowed_signers"
    fifo.unlink()
    os.mkfifo(fifo)
    run = formula(root, "validate", timeout=120)  # a blocking open would hang here until the timeout
    out = run.stdout + run.stderr
    assert run.returncode == 1 and "Traceback" not in out and "not a regular file" in out, out
    with pytest.raises(FileRefused, match="not a regular file"):
        read_bytes(fifo)


def test_a_linked_folder_is_named(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (root / "formulas" / "history" / "extra").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert any(f.endswith("formulas/history/extra") and "symbolic link" in msg for f, _, msg in problems(root))


def test_the_reader_refuses_a_link_by_name_and_reads_a_plain_file(tmp_path: Path, outside: Path) -> None:
    link = tmp_path / "link.yaml"
    link.symlink_to(outside)
    with pytest.raises(FileRefused, match=r"link\.yaml: is a symbolic link"):
        read_bytes(link)
    assert read_bytes(outside) == outside.read_bytes()
    assert read_bytes(outside, 4) == outside.read_bytes()[:5]  # a limit reads one byte more, to tell it is over
