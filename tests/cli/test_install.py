"""Where the registry is found: --root, then $FORMULA_REGISTRY_ROOT, then the nearest folder upwards from the current
one holding formulas/ and guidelines/, then the copy installed with the package, which is read-only (tests/cli/
test_discovery.py runs every command inside a registry). (.ci/run also installs the wheel and runs it from /tmp.)"""
from __future__ import annotations

from pathlib import Path

import pytest

from registry import loader
from tests.helpers import copy_registry, run


@pytest.fixture()
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """As in a wheel: no checkout beside the package, the registry copied into registry/embedded/; the current
    folder is in no registry."""
    embedded = copy_registry(tmp_path / "site-packages" / "registry" / "embedded")
    monkeypatch.setattr(loader, "PROJECT_ROOT", tmp_path / "site-packages")
    monkeypatch.setattr(loader, "EMBEDDED_ROOT", embedded)
    monkeypatch.delenv(loader.ROOT_ENV, raising=False)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    loader.clear_cache()
    yield embedded
    loader.clear_cache()


def test_root_resolution_order(installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert loader.find_root() == loader.Found(installed, loader.INSTALLED)
    here = copy_registry(tmp_path / "work")  # the current folder becomes a registry
    assert loader.find_root() == loader.Found(here, loader.FOUND)
    other = copy_registry(tmp_path / "elsewhere")
    monkeypatch.setenv(loader.ROOT_ENV, str(other))
    assert loader.find_root() == loader.Found(other, loader.FROM_ENV)
    assert loader.resolve_root(tmp_path / "explicit") == tmp_path / "explicit"


def test_a_checkout_is_found_only_from_inside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editable install outside any registry falls back to its checkout as the shipped copy: read-only."""
    monkeypatch.delenv(loader.ROOT_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert loader.shipped_root() == loader.PROJECT_ROOT  # (no registry/embedded/ in a checkout)
    assert loader.find_root() == loader.Found(loader.PROJECT_ROOT, loader.INSTALLED) and loader.is_embedded()
    monkeypatch.chdir(loader.PROJECT_ROOT / "registry")
    assert loader.find_root() == loader.Found(loader.PROJECT_ROOT, loader.FOUND) and not loader.is_embedded()


def test_the_installed_copy_reads_but_refuses_writes(installed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate")
    assert code == 0 and out.splitlines()[0] == \
        f"registry: {installed} (the copy installed with the package, read-only)"
    assert run(capsys, "solve", "--calculator", "6", "--entities", '{"weight": [70, "kg"], "height": [1.75, "m"]}',
               "--format", "json")[0] == 0
    lock = (installed / "formulas" / "REGISTRY.lock").read_text(encoding="utf-8")
    for argv in (["lock"], ["texts", "render"], ["fix", "ideal-body-weight", "--set", "base_height=61", "--reason", "r"],
                 ["review", "mdrd-gfr", "--by", "A", "--role", "B"]):
        code, _, err = run(capsys, *argv)
        assert code == 1 and "read-only copy installed with the package" in err, argv
    assert (installed / "formulas" / "REGISTRY.lock").read_text(encoding="utf-8") == lock
