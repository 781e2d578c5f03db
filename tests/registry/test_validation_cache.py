"""get_registry re-runs the validation rules unless this exact content (and code) passed them before."""
from __future__ import annotations

import pytest

from registry import loader
from tests.helpers import count_calls, edit


def _validations(monkeypatch) -> list[int]:
    return count_calls(monkeypatch, loader, "validate")


def test_passed_content_is_not_revalidated_and_any_edit_is(registry_copy, cache_dir, monkeypatch):
    calls = _validations(monkeypatch)
    reg = loader.get_registry(registry_copy)
    assert reg.validated and not reg.problems and len(calls) == 1
    assert len(list(cache_dir.glob("validated-*"))) == 1
    loader.clear_cache()
    again = loader.get_registry(registry_copy)
    assert again.validated and not again.problems and len(calls) == 1  # the marker of this content
    # an edit to a released version without a new version: new content, so the rules run and find it
    edit(registry_copy / "formulas" / "ideal-body-weight.yaml", "value: 2.3", "value: 2.4")
    loader.clear_cache()
    changed = loader.get_registry(registry_copy)
    assert len(calls) == 2 and changed.problems
    assert len(list(cache_dir.glob("validated-*"))) == 1  # a failing registry leaves no marker


def test_an_empty_cache_setting_turns_it_off(registry_copy, monkeypatch):
    monkeypatch.setenv(loader.CACHE_ENV, "")
    assert loader.validation_key(registry_copy) is None  # no key: `_cached` always runs the rules


def test_the_key_covers_snapshots_and_the_lock(registry_copy, cache_dir):
    before = loader.validation_key(registry_copy)
    lock = registry_copy / "formulas" / "REGISTRY.lock"
    lock.write_text(lock.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert loader.validation_key(registry_copy) != before


def test_read_only_commands_use_the_cache_and_any_byte_change_invalidates_it(registry_copy, cache_dir, monkeypatch,
                                                                              capsys):
    """`list`, `show`, `pending`... read a registry that passed before from the cache; a change of any byte of any
    registry file (here a comment in a guideline, and then a broken value) makes them load and validate again."""
    from tests.helpers import run

    calls = _validations(monkeypatch)
    root = str(registry_copy)
    assert run(capsys, "list", "--root", root)[0] == 0 and len(calls) == 1  # cold: validated in full, then stored
    for argv in (["list"], ["show", "meld-na"], ["pending"], ["due"], ["history", "meld-na"]):
        assert run(capsys, *argv, "--root", root)[0] == 0, argv
    assert len(calls) == 1, "a read-only command re-ran the validation of an unchanged registry"
    guideline = sorted((registry_copy / "guidelines").glob("*.yaml"))[0]
    guideline.write_text(guideline.read_text(encoding="utf-8") + "# a comment\n", encoding="utf-8")
    assert run(capsys, "list", "--root", root)[0] == 0 and len(calls) == 2  # any byte: validated again
    edit(registry_copy / "formulas" / "ideal-body-weight.yaml", "value: 2.3", "value: 2.4")
    code, _, err = run(capsys, "show", "ideal-body-weight", "--root", root)
    assert len(calls) == 3 and code == 1 and "ideal-body-weight" in err  # the edit is found, never served stale


def test_writers_always_validate_in_full(registry_copy, cache_dir, monkeypatch, capsys):
    from registry import cliutil
    from tests.helpers import run

    assert run(capsys, "list", "--root", str(registry_copy))[0] == 0  # the cache now holds this registry
    calls = count_calls(monkeypatch, cliutil, "validate")
    cliutil.load_registry(registry_copy)  # what a writer calls: no cache
    assert len(calls) == 1


@pytest.mark.parametrize("dist", ["pydantic", "pydantic-core", "jinja2", "pyyaml", "ruamel.yaml", "no-such-dist-here"])
def test_the_key_reads_library_versions_as_importlib_metadata_does(dist: str) -> None:
    from importlib import metadata

    from registry.loader import _installed_version

    try:
        expected = metadata.version(dist)
    except metadata.PackageNotFoundError:
        expected = "none"
    assert _installed_version(dist) == expected


def test_the_snapshot_keeps_the_trust_files_as_read(registry_copy, cache_dir):
    from registry.trust import decisionlog

    first = loader.validated(registry_copy)
    again = loader.validated(registry_copy)  # read back from the snapshot
    assert again is not first and again.trust_memo is not None
    assert again.trust_memo == decisionlog.trust(registry_copy / "formulas")
    edit(registry_copy / "formulas" / "policy" / "governance.yaml", "people: {}", "people: {}  # edited")
    changed = loader.validated(registry_copy)  # another key: validated afresh, the files read again
    assert changed.trust_memo is not None and changed.trust_memo is not again.trust_memo
