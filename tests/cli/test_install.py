"""Where the registry is found: --root, then $FORMULA_REGISTRY_ROOT, then the source checkout, then the copy
installed with the package, which is read-only. (.ci/run also installs the wheel and runs it from /tmp.)"""
from __future__ import annotations

from pathlib import Path

import pytest

from registry import loader
from tests.helpers import copy_registry, run


@pytest.fixture()
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """As in a wheel: no checkout beside the package, the registry copied into registry/embedded/."""
    embedded = copy_registry(tmp_path / "site-packages" / "registry" / "embedded")
    monkeypatch.setattr(loader, "PROJECT_ROOT", tmp_path / "site-packages")
    monkeypatch.setattr(loader, "EMBEDDED_ROOT", embedded)
    monkeypatch.delenv(loader.ROOT_ENV, raising=False)
    loader.clear_cache()
    yield embedded
    loader.clear_cache()


def test_root_resolution_order(installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert loader.default_root() == installed
    other = copy_registry(tmp_path / "elsewhere")
    monkeypatch.setenv(loader.ROOT_ENV, str(other))
    assert loader.default_root() == other
    assert loader.resolve_root(tmp_path / "explicit") == tmp_path / "explicit"


def test_the_installed_copy_reads_but_refuses_writes(installed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate")
    assert code == 0 and str(installed) in out
    assert run(capsys, "solve", "--calculator", "6", "--entities", '{"weight": [70, "kg"], "height": [1.75, "m"]}',
               "--format", "json")[0] == 0
    lock = (installed / "formulas" / "REGISTRY.lock").read_text(encoding="utf-8")
    for argv in (["lock"], ["texts", "render"], ["fix", "ideal-body-weight", "--set", "base_height=61", "--reason", "r"],
                 ["review", "mdrd-gfr", "--by", "A", "--role", "B"]):
        code, _, err = run(capsys, *argv)
        assert code == 1 and "read-only copy installed with the package" in err, argv
    assert (installed / "formulas" / "REGISTRY.lock").read_text(encoding="utf-8") == lock
