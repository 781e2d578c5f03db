"""get_registry reads a clean registry's snapshot instead of its YAML, and never trusts one over changed files."""
from __future__ import annotations

import pickle

import pytest

from registry import loader, snapshot
from registry.yamlio import line_of
from tests.helpers import count_calls, edit


def _loads(monkeypatch) -> list[int]:
    return count_calls(monkeypatch, loader, "load")


def test_a_second_start_reads_the_snapshot_and_an_edit_reads_the_files(registry_copy, cache_dir, monkeypatch):
    calls = _loads(monkeypatch)
    first = loader.get_registry(registry_copy)
    assert len(calls) == 1 and len(list(cache_dir.glob("registry-*.pickle"))) == 1
    loader.clear_cache()
    again = loader.get_registry(registry_copy)
    assert len(calls) == 1 and again is not first  # from the snapshot: no YAML parsed
    assert again.validated and not again.problems and again.hashes == first.hashes
    assert again.calculators == first.calculators and again.root == first.root and again.paths == first.paths
    assert again.raw == first.raw and again.units == first.units and again.guidelines == first.guidelines
    slug = next(iter(first.raw))
    assert line_of(again.raw[slug], ("output",)) == line_of(first.raw[slug], ("output",)) > 1  # lines kept
    edit(registry_copy / "formulas" / "ideal-body-weight.yaml", "value: 2.3", "value: 2.4")
    loader.clear_cache()
    changed = loader.get_registry(registry_copy)
    assert len(calls) == 2 and changed.problems  # new content: loaded, validated and refused as before
    assert len(list(cache_dir.glob("registry-*.pickle"))) == 1  # a failing registry leaves no snapshot


@pytest.mark.parametrize("blob", [b"", b"garbage", snapshot.FORMAT + b"\x80\x05truncated",
                                  snapshot.FORMAT + pickle.dumps(print)])
def test_a_corrupt_or_foreign_snapshot_falls_back_to_the_files(registry_copy, cache_dir, monkeypatch, blob):
    loader.get_registry(registry_copy)
    (path,) = cache_dir.glob("registry-*.pickle")
    path.write_bytes(blob)
    loader.clear_cache()
    calls = _loads(monkeypatch)
    reg = loader.get_registry(registry_copy)
    assert len(calls) == 1 and reg.validated and not reg.problems
    assert path.read_bytes().startswith(snapshot.FORMAT) and path.read_bytes() != blob  # rewritten


def test_the_unpickler_builds_no_callable_outside_the_allow_list(tmp_path):
    path = tmp_path / "x.pickle"
    path.write_bytes(snapshot.FORMAT + pickle.dumps(print))
    assert snapshot.read(path, str(tmp_path)) is None
    with pytest.raises(pickle.UnpicklingError, match="does not build builtins.print"):
        import io
        snapshot._Unpickler(io.BytesIO(pickle.dumps(print))).load()


def test_a_snapshot_of_another_root_is_not_used(registry_copy, cache_dir, tmp_path):
    reg = loader.get_registry(registry_copy)
    (path,) = cache_dir.glob("registry-*.pickle")
    assert snapshot.read(path, str(registry_copy)) is not None
    assert snapshot.read(path, str(tmp_path / "elsewhere")) is None
    assert reg.validated


def test_old_snapshots_are_pruned(registry_copy, cache_dir):
    loader.get_registry(registry_copy)
    (current,) = cache_dir.glob("registry-*.pickle")
    for i in range(snapshot.KEEP + 3):
        (cache_dir / f"registry-old{i}.pickle").write_bytes(b"x")
    snapshot._prune(cache_dir, current)
    left = sorted(cache_dir.glob("registry-*.pickle"))
    assert current in left and len(left) == snapshot.KEEP


@pytest.mark.parametrize("module, name", [("registry.atomic", "atomic_write"), ("os", "system"),
                                          ("registry.schema", "Field"), ("builtins", "eval")])
def test_the_unpickler_refuses_functions_and_other_modules(module, name):
    import io
    with pytest.raises(pickle.UnpicklingError, match="does not build"):
        snapshot._Unpickler(io.BytesIO(b"")).find_class(module, name)


def test_the_snapshot_carries_the_dumps_warm_commands_need_and_never_a_stale_one(registry_copy, cache_dir):
    """Each version's record hash and the units dump come with the snapshot (registry.snapshot_extras), equal to what a
    fresh dump gives; an edited version, a new object, gets its own."""
    from registry.texts import plain_units
    from registry.trust.decisionlog import _record_hash, record_hash

    loader.get_registry(registry_copy)
    loader.clear_cache()
    again = loader.get_registry(registry_copy)  # from the snapshot
    kinds = {kind for kind, _, _ in again.derived}
    assert kinds == {"record", "units"} and len(again.derived) == 1 + sum(
        len(c.versions) for c in again.calculators.values())
    for kind, source, value in again.derived:
        fresh = _record_hash(source) if kind == "record" else source.model_dump()
        assert value == fresh
    v = again.calculators["ideal-body-weight"].versions[0]
    assert record_hash(v) is next(val for k, s, val in again.derived if s is v)  # taken up, not worked out again
    edited = v.model_copy(update={"changelog": "edited"})
    assert record_hash(edited) == _record_hash(edited) != record_hash(v)
    assert plain_units(again.units) == again.units.model_dump()
