"""Version content, hashes, the lock file and snapshots of released versions.

A released version (active or superseded) is immutable. Its *content* is what changes a
calculator's answer or its supplied text: output, inputs, constants, tables, dependencies, the
version's own text, the shared unit data it converts with (factors, conventions and the
molar masses of its analytes, from formulas/units.yaml), and (lock format 2) the content hashes
of the calculators it depends on, so a change to a dependency changes every dependant's hash,
transitively. Governance metadata (reviews, sign-offs, audit findings, citations) can be updated
in place without a new version, and so can an input's `definition` (what the concept means and
where that is defined): it is descriptive, never read by the library or a text.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from registry.model import Registry
from registry.schema import Calculator, UnitsFile, Version, VersionStatus, semver_key
from registry.yamlio import YamlError, dump, load_file

CONTENT_FIELDS = ("output", "inputs", "constants", "tables", "depends_on")
# Descriptive fields inside the content fields that never change an answer or a text: excluded
# from the hash, so they can be corrected in place like other governance metadata.
DESCRIPTIVE = {"inputs": {"__all__": {"definition"}}}
LOCK_FORMAT = 2  # 1: a version's own content; 2: plus the content hashes of its dependencies
CYCLE_HASH = "sha256:dependency-cycle"  # stands in for a dependency on a cycle (validation reports the cycle)


def content(calc: Calculator, version: Version, units: UnitsFile | None) -> dict[str, Any]:
    """What a released version fixes: its own definition, and the shared unit data it converts with."""
    data = calc.model_dump(mode="json", include=set(CONTENT_FIELDS), exclude=DESCRIPTIVE)
    data = {k: data[k] for k in CONTENT_FIELDS}
    data["version"] = version.version
    data["text"] = version.text
    if units is not None:
        shared = units.model_dump(mode="json", exclude={"analytes", "deviations"})
        used = sorted({i.analyte for i in calc.inputs if i.analyte and i.analyte in units.analytes})
        shared["analytes"] = {a: units.analytes[a].model_dump(mode="json", exclude={"note"}) for a in used}
        data["units"] = shared
    return data


def released_content(reg: Registry, calc: Calculator, version: Version) -> dict[str, Any]:
    """A version's content under lock format 2: its own content plus its dependencies' content hashes.

    The dependencies are read from the registry as it is now (their active versions); a snapshot
    keeps the hashes it was released with.
    """
    data = content(calc, version, reg.units)
    data["dependencies"] = {d: active_hash(reg, d) for d in calc.depends_on}
    return data


def active_hash(reg: Registry, slug: str, _visiting: frozenset[str] = frozenset()) -> str:
    """The content hash of a calculator's active version as the registry stands (memoised on the registry)."""
    calc = reg.calculators.get(slug)
    if calc is None:
        return "sha256:unknown-calculator"
    if slug in _visiting:
        return CYCLE_HASH
    try:
        version = calc.active
    except (ValueError, StopIteration, LookupError):
        return "sha256:no-active-version"
    key = (slug, version.version)
    if key not in reg.hashes:
        data = content(calc, version, reg.units)
        data["dependencies"] = {d: active_hash(reg, d, _visiting | {slug}) for d in calc.depends_on}
        reg.hashes[key] = content_hash(data)
    return reg.hashes[key]


def content_hash(data: dict[str, Any]) -> str:
    blob = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


def snapshot_path(formulas_dir: Path, slug: str, version: str) -> Path:
    return formulas_dir / "history" / slug / f"{version}.yaml"


def read_snapshot(formulas_dir: Path, slug: str, version: str) -> dict[str, Any] | None:
    p = snapshot_path(formulas_dir, slug, version)
    if not p.exists():
        return None
    data = load_file(p)
    if not isinstance(data, dict):
        raise YamlError(p, 1, "a snapshot must be a mapping")
    return json.loads(json.dumps(data, default=str))  # plain dicts, dates as ISO text


def snapshot_text(data: dict[str, Any]) -> str:
    return "# Snapshot of a released version, written by `formula release`. Never edit by hand.\n" + dump(data)


def write_snapshot(formulas_dir: Path, slug: str, data: dict[str, Any]) -> Path:
    from registry.atomic import atomic_write

    p = snapshot_path(formulas_dir, slug, data["version"])
    atomic_write(p, snapshot_text(data))
    return p


# --------------------------------------------------------------------------- lock file


def read_lock(path: Path) -> dict[str, dict[str, str]]:
    """slug -> {version: content hash}. A missing lock reads as empty."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {slug: dict(v) for slug, v in data.get("calculators", {}).items()}


def lock_format(path: Path) -> int:
    """The hashing scheme the lock was written with (a missing lock is written in the current one)."""
    if not path.exists():
        return LOCK_FORMAT
    return int(json.loads(path.read_text(encoding="utf-8")).get("format", 1))


def write_lock(path: Path, entries: dict[str, dict[str, str]]) -> None:
    from registry.atomic import atomic_write

    atomic_write(path, lock_text(entries))


def lock_text(entries: dict[str, dict[str, str]]) -> str:
    ordered = {s: dict(sorted(v.items(), key=lambda kv: semver_key(kv[0]))) for s, v in sorted(entries.items())}
    body = {
        "about": "Content hashes of released calculator versions. Written by `formula lock` and "
        "`formula release`; `formula validate` fails when a released version changes without a new version. "
        "Format 2: a version's hash covers the content hashes of the calculators it depends on.",
        "format": LOCK_FORMAT,
        "calculators": ordered,
    }
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def lock_digest(path: Path) -> str:
    """The registry's identity for run manifests: the hash of its lock file."""
    if not path.exists():
        return "sha256:unlocked"
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def released(calc: Calculator) -> list[Version]:
    return [v for v in calc.versions if v.status in (VersionStatus.active, VersionStatus.superseded)]


def bump(version: str, part: str) -> str:
    a, b, c = semver_key(version)
    if part == "major":
        return f"{a + 1}.0.0"
    if part == "minor":
        return f"{a}.{b + 1}.0"
    if part == "patch":
        return f"{a}.{b}.{c + 1}"
    raise ValueError(f"unknown version part {part!r}: use major, minor or patch")
