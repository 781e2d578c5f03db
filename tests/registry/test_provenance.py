"""Provenance holes, each reproduced and now failing closed: dependants, snapshots, the catalogue, the lock format."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from registry import versions as ver
from registry.loader import load
from registry.validate import validate
from solver.library import RegistryInvalid, compute
from tests.helpers import SHIPPED_ROOT, edit, run, solo
from tests.solver.conftest import one_shot_rows

CG = "creatinine-clearance-cockcroft-gault"
IBW = "ideal-body-weight"
# an overweight man (BMI 28.5): the benchmark's Cockcroft-Gault uses the adjusted body weight
MAN = {"sex": "Male", "age": [60, "years"], "weight": [90, "kg"], "height": [70, "in"], "creatinine": [1.0, "mg/dL"]}


def codes_of(root: Path) -> list[tuple[str, str]]:
    reg = load(root)
    validate(reg)
    return [(p.path, p.code) for p in reg.problems]


def test_a_dependency_change_makes_every_dependant_fail_until_released(
        registry_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    root = str(registry_copy)
    solo(registry_copy, monkeypatch)  # a signed maintainer who may release at once
    # Devine: IBW 50 kg + 2.3 kg/inch over 60 in = 73 kg; adjusted 73 + 0.4 (90 - 73) = 79.8 kg;
    # Cockcroft-Gault (140 - 60) x 79.8 / (72 x 1.0) mL/min
    before = compute(CG, MAN, registry=load(root), variant="benchmark")
    released = load(root).calculators[CG].active.version
    assert before.value == pytest.approx(80 * 79.8 / 72, abs=1e-5) and before.version == released
    # a hand edit of the dependency, not yet released
    edit(registry_copy / "formulas" / f"{IBW}.yaml", "value: 50", "value: 52")
    found = codes_of(registry_copy)
    assert (f"formulas/{IBW}.yaml", "R-LOCK-CHANGED") in found, found
    assert (f"formulas/{CG}.yaml", "R-LOCK-DEPENDENCY") in found, found
    assert ("formulas/adjusted-body-weight.yaml", "R-LOCK-DEPENDENCY") in found, found
    code, out, _ = run(capsys, "validate", "--root", root)
    assert code == 1 and "depends on adjusted-body-weight, ideal-body-weight whose content changed" in out
    # the library refuses rather than answer with the old version's name and the new numbers
    with pytest.raises(RegistryInvalid, match="formula release"):
        compute(CG, MAN, registry=load(root), variant="benchmark")
    code, _, err = run(capsys, "solve", "--calculator", CG, "--entities", json.dumps(MAN), "--root", root)
    assert code == 1 and err.startswith("error: ") and "fails validation" in err
    # releasing the dependency alone would leave its dependants claiming their old versions: refused
    code, _, err = run(capsys, "release", IBW, "--reason", "new base weight", "--root", root)
    assert code == 1 and "--with-dependants" in err and "creatinine-clearance-cockcroft-gault" in err
    code, out, err = run(capsys, "release", IBW, "--reason", "new base weight", "--root", root, "--with-dependants")
    assert code == 0, err
    assert "adjusted-body-weight" in out and CG in out
    assert run(capsys, "validate", "--root", root)[0] == 0
    after = compute(CG, MAN, registry=load(root), variant="benchmark")
    # IBW 52 + 23 = 75 kg; adjusted 75 + 0.4 (90 - 75) = 81 kg
    assert after.value == pytest.approx(80 * 81 / 72, abs=1e-5)
    assert after.version == ver.bump(released, "minor") and after.content_hash != before.content_hash
    assert after.content_hash == ver.read_lock(registry_copy / "formulas" / "REGISTRY.lock")[CG][after.version]


def test_a_tampered_snapshot_is_an_error(registry_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    active = load(registry_copy).calculators[IBW].active.version
    snap = registry_copy / "formulas" / "history" / IBW / f"{active}.yaml"  # the active version's snapshot
    edit(snap, "value: 2.3", "value: 2.2")
    assert codes_of(registry_copy) == [(f"formulas/{IBW}.yaml", "R-SNAPSHOT")]
    code, out, _ = run(capsys, "validate", "--root", str(registry_copy))
    assert code == 1 and f"snapshot formulas/history/{IBW}/{active}.yaml does not match its hash" in out
    snap.unlink()
    code, out, _ = run(capsys, "validate", "--root", str(registry_copy))
    assert code == 1 and f"snapshot formulas/history/{IBW}/{active}.yaml is missing" in out


@pytest.mark.parametrize("damage", ["truncate", "stale", "delete", "extra", "index"])
def test_the_rendered_catalogue_must_match_a_fresh_render(registry_copy: Path, damage: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    texts = registry_copy / "formulas" / "texts"
    target = texts / "body-mass-index.md"
    if damage == "truncate":
        target.write_text(target.read_text(encoding="utf-8")[:40], encoding="utf-8")
    elif damage == "stale":
        edit(target, "kg", "lb")
    elif damage == "delete":
        target.unlink()
    elif damage == "extra":
        target = texts / "no-such-calculator.md"
        target.write_text("old text\n", encoding="utf-8")
    else:
        target = texts / "index.json"
        target.write_text(re.sub(r'"version": "[^"]+"', '"version": "0.9"', target.read_text(encoding="utf-8"),
                                 count=1), encoding="utf-8")
    assert codes_of(registry_copy) == [(f"formulas/texts/{target.name}", "R-CATALOGUE")]
    code, out, _ = run(capsys, "validate", "--root", str(registry_copy))
    assert code == 1 and f"formulas/texts/{target.name}" in out and "formula texts render" in out
    if damage != "extra":  # the fix the message names works
        assert run(capsys, "texts", "render", "--root", str(registry_copy))[0] == 0
        assert codes_of(registry_copy) == []


def _as_older_format(root: Path, fmt: int) -> set[tuple[str, str]]:
    """Write the registry's lock and snapshots as the format-`fmt` tool did (1: own content; 2: plus dependencies).

    Returns the superseded versions whose snapshot was written natively in format 3 (released after the
    migration): the older tool would have recorded only its own content fields for them, so the migration
    cannot give back their format-3 snapshot and hash.
    """
    fdir = root / "formulas"
    reg = load(root)
    body = json.loads((fdir / "REGISTRY.lock").read_text(encoding="utf-8"))
    native: set[tuple[str, str]] = set()
    for s, c in reg.calculators.items():
        for v in ver.released(c):
            if v.status.value == "active":
                old = ver.legacy_content(c, v, reg.units)
                if fmt == 2:
                    old["dependencies"] = {d: ver.legacy_hash(reg, d, 2) for d in c.depends_on}
            else:  # a superseded snapshot back in the older form: the full dump of what it held
                snap = ver.read_snapshot(fdir, s, v.version)
                assert snap is not None
                migrated = ver.MIGRATED_KEY in snap
                if not migrated:
                    native.add((s, v.version))
                assert snap.pop(ver.MIGRATED_KEY, ver.LOCK_FORMAT) == ver.LOCK_FORMAT
                data = c.model_dump(mode="json")
                data.update({f: snap[f] for f in ver.CONTENT_FIELDS})
                data["versions"] = [{"version": v.version, "status": "active", "effective": "2000-01-01",
                                     "text": snap["text"], "changelog": "x"}]
                rebuilt = type(c).model_validate(data)
                if migrated:
                    old = {**ver.legacy_content(rebuilt, rebuilt.active, None),
                           **{k: snap[k] for k in ("units", "dependencies") if k in snap}}
                else:  # what the older tool would have recorded when it superseded this version
                    old = ver.legacy_content(rebuilt, rebuilt.active, reg.units)
                    if fmt == 2:
                        old["dependencies"] = {d: ver.legacy_hash(reg, d, 2) for d in c.depends_on}
            body["calculators"][s][v.version] = ver.content_hash(old)
            ver.write_snapshot(fdir, s, old)
    body["format"] = fmt
    (fdir / "REGISTRY.lock").write_text(json.dumps(body), encoding="utf-8")
    return native


@pytest.mark.parametrize("fmt", [1, 2])
def test_lock_rehash_migrates_an_older_lock_and_refuses_an_unreleased_edit(
        registry_copy: Path, capsys: pytest.CaptureFixture[str], fmt: int) -> None:
    fdir = registry_copy / "formulas"
    committed_lock = (fdir / "REGISTRY.lock").read_text(encoding="utf-8")
    history = {p: p.read_text(encoding="utf-8") for p in sorted((fdir / "history").rglob("*.yaml"))}
    reg = load(registry_copy)
    native = _as_older_format(registry_copy, fmt)
    assert codes_of(registry_copy) == [("formulas/REGISTRY.lock", "R-LOCK-FORMAT")]
    # an edit made under the old lock is not blessed by the migration, nor is a tampered superseded snapshot
    edit(fdir / f"{IBW}.yaml", "value: 2.3", "value: 2.4", count=-1)
    superseded = next(v.version for v in reg.calculators[CG].versions if v.status.value == "superseded")
    snap = fdir / "history" / CG / f"{superseded}.yaml"
    good = snap.read_text(encoding="utf-8")
    edit(snap, "value: 72", "value: 73")
    code, _, err = run(capsys, "lock", "--rehash", "--root", str(registry_copy))
    assert code == 1 and err.startswith("error: ") and f"{IBW} {reg.calculators[IBW].active.version}" in err
    assert f"{CG} {superseded}" in err
    edit(fdir / f"{IBW}.yaml", "value: 2.4", "value: 2.3", count=-1)
    snap.write_text(good, encoding="utf-8")
    code, out, err = run(capsys, "lock", "--rehash", "--root", str(registry_copy))
    assert code == 0, err
    # the migration gives exactly the committed format-3 lock and snapshots, superseded ones included,
    # except versions superseded after the migration: the older format held only their content fields
    migrated_lock, want_lock = ver.read_lock(fdir / "REGISTRY.lock"), json.loads(committed_lock)["calculators"]
    for s, v in native:
        snap = ver.read_snapshot(fdir, s, v)
        assert snap is not None and snap[ver.MIGRATED_KEY] == ver.LOCK_FORMAT
        assert {f: snap[f] for f in ver.CONTENT_FIELDS} == {f: history_snapshot(history, fdir, s, v)[f]
                                                             for f in ver.CONTENT_FIELDS}
        del migrated_lock[s][v], want_lock[s][v]
    if not native:
        assert (fdir / "REGISTRY.lock").read_text(encoding="utf-8") == committed_lock
    assert migrated_lock == want_lock
    natives = {ver.snapshot_path(fdir, s, v) for s, v in native}
    assert {p: p.read_text(encoding="utf-8") for p in history if p not in natives} == {
        p: t for p, t in history.items() if p not in natives}
    assert codes_of(registry_copy) == []
    # re-running is harmless
    assert run(capsys, "lock", "--rehash", "--root", str(registry_copy))[:2] == (
        0, f"registry: {registry_copy} (given by --root)\n"
        f"formulas/REGISTRY.lock is already format {ver.LOCK_FORMAT}; nothing to rehash\n")


def history_snapshot(history: dict[Path, str], fdir: Path, slug: str, version: str) -> dict:
    """A committed snapshot (read before the test rewrote it) as data."""
    return yaml.safe_load(history[ver.snapshot_path(fdir, slug, version)])


def test_every_result_names_the_locked_content_hash() -> None:
    lock = ver.read_lock(SHIPPED_ROOT / "formulas" / "REGISTRY.lock")
    res = compute(CG, MAN, variant="benchmark")
    assert res.content_hash == lock[CG][res.version]
    assert res.to_json()["content_hash"] == res.content_hash
    seen = set()
    for row in one_shot_rows():  # one real row per benchmark calculator
        res = compute(int(row["Calculator ID"]), row["entities"], variant="benchmark")
        assert res.content_hash == lock[res.calculator][res.version], res.calculator
        seen.add(res.calculator)
    assert len(seen) == 55
