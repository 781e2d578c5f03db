"""atomic_write's temporary file cannot be hijacked: it is created exclusively under an unpredictable
name in the target's folder, so a symbolic link planted where the old predictable name would be
is never written through (it overwrote a victim during `formula export fhir`)."""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

import registry.atomic as atomic
from registry.atomic import atomic_write
from tests.hostile.helpers import formula, hostile_copy

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="symbolic links and /proc as on Linux")


def _victim(tmp_path: Path) -> Path:
    v = tmp_path / "victim.txt"
    v.write_text("precious\n", encoding="utf-8")
    return v


def test_a_link_planted_at_the_old_predictable_name_is_not_followed(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    target = tmp_path / "out" / "units.yaml"
    target.parent.mkdir()
    (target.parent / f".{target.name}.{os.getpid()}.tmp").symlink_to(victim)
    atomic_write(target, "new content\n")
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert target.read_text(encoding="utf-8") == "new content\n" and not target.is_symlink()


def test_links_planted_for_every_likely_pid_do_not_hijack_export_fhir(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    victim = _victim(tmp_path)
    out = tmp_path / "fhir"
    out.mkdir()
    first = "Library-creatinine-clearance-cockcroft-gault-1.0.0.json"
    last = int(Path("/proc/sys/kernel/ns_last_pid").read_text()) if Path("/proc/sys/kernel/ns_last_pid").exists() \
        else os.getpid()
    for pid in range(last + 1, last + 400):  # the next processes' ids, where the old name would land
        (out / f".{first}.{pid}.tmp").symlink_to(victim)
    proc = formula(root, "export", "fhir", "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert victim.read_text(encoding="utf-8") == "precious\n"
    written = out / first
    assert written.is_file() and not written.is_symlink() and '"resourceType": "Library"' in written.read_text()


def test_temporary_names_are_unpredictable_and_exclusive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real_replace = os.replace

    def spy(src: object, dst: object) -> None:
        seen.append(os.fspath(src))  # type: ignore[call-overload]
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", spy)
    target = tmp_path / "lock.json"
    for n in range(3):
        atomic_write(target, f"{n}\n")
    names = [Path(s).name for s in seen]
    assert len(set(names)) == 3 and not any(str(os.getpid()) in n for n in names), names
    assert all(Path(s).parent == tmp_path and n.startswith(".lock.json.") and n.endswith(".tmp")
               for s, n in zip(seen, names))


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "x.yaml"
    target.write_text("old\n", encoding="utf-8")

    def boom(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write(target, "new\n")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.yaml"]


def test_permissions_are_the_replaced_files_or_the_umasks(tmp_path: Path) -> None:
    old = tmp_path / "kept.yaml"
    old.write_text("old\n", encoding="utf-8")
    old.chmod(0o640)
    atomic_write(old, "new\n")
    assert stat.S_IMODE(old.stat().st_mode) == 0o640
    mask = os.umask(0o022)
    try:
        atomic_write(tmp_path / "fresh.yaml", "x\n")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "fresh.yaml").stat().st_mode) == 0o644  # not mkstemp's 0600


def test_a_link_at_the_target_is_replaced_not_written_through(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    target = tmp_path / "texts" / "a.md"
    target.parent.mkdir()
    target.symlink_to(victim)
    atomic_write(target, "text\n")
    assert victim.read_text(encoding="utf-8") == "precious\n" and not target.is_symlink()


def test_recover_removes_only_temporary_files_inside_the_registry(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    keep = outside / ".keep.tmp"
    keep.write_text("not ours\n", encoding="utf-8")
    (root / "formulas" / "history" / "evil").symlink_to(outside, target_is_directory=True)
    left = root / "formulas" / ".units.yaml.abc123.tmp"
    left.write_text("half\n", encoding="utf-8")
    atomic.recover(root)
    assert keep.exists() and not left.exists()
