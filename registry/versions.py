"""Version content, hashes, the lock file and snapshots of released versions.

A released version (active or superseded) is immutable. Its *content* (lock format 3) is every
field of the calculator file that a person reads or that changes what is computed: everything
except the version bookkeeping (`versions`: status, sign-offs, approvals, review dates,
changelog), plus the version's own number and text, the shared unit data it converts with
(factors, conventions and the molar masses of its analytes, from formulas/units.yaml), the
content hashes of the calculators it depends on (transitively), and the content hashes of the
guideline files it cites (provenance, literature audit, replacements). So a change to a
dependency or to a cited guideline changes every dependant's hash.

Content is dumped without fields left at their default (`exclude_defaults`), so a new optional
schema field changes no existing hash until a file sets it. Formats 1 and 2 are kept only so
`formula lock --rehash` can verify an older lock before migrating it.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from registry import jsontext
from registry.model import Registry
from registry.schema import Calculator, Guideline, UnitsFile, Version, VersionStatus, semver_key
from registry.yamlio import YamlError, dump, load_file

# What changes an answer: always present in a version's content (and snapshot), even when empty.
CONTENT_FIELDS = ("output", "inputs", "constants", "tables", "depends_on")
# Calculator fields outside a version's content: the per-version records (bookkeeping, changelogged).
BOOKKEEPING = frozenset({"versions"})
# Keys a version's content adds beside the calculator's own fields.
ADDED_KEYS = ("version", "text", "units", "dependencies", "guidelines")
LOCK_FORMAT = 3  # 1: a version's own content; 2: plus its dependencies' hashes; 3: every shown field, guidelines
CYCLE_HASH = "sha256:dependency-cycle"  # stands in for a dependency on a cycle (validation reports the cycle)
SEAL_KEY = "sealed_before_signing"  # in the lock: the digest and date of formulas/policy/recorded_before_signing.yaml
MIGRATED_KEY = "recorded_before_format"  # in a snapshot migrated from an older format: it holds that format's fields


def covered_fields() -> list[str]:
    """The calculator's top-level fields a version's content covers (new schema fields are covered)."""
    return [f for f in Calculator.model_fields if f not in BOOKKEEPING]


def content(calc: Calculator, version: Version, units: UnitsFile | None) -> dict[str, Any]:
    """What a released version fixes: its calculator's shown fields, its number and text, the unit data it uses."""
    data = calc.model_dump(mode="json", exclude=set(BOOKKEEPING), exclude_defaults=True)
    full = calc.model_dump(mode="json", include=set(CONTENT_FIELDS))
    for f in CONTENT_FIELDS:
        data.setdefault(f, full[f])
    data["version"] = version.version
    data["text"] = version.text
    if units is not None:
        data["units"] = units_content(calc, units)
    return data


def units_content(calc: Calculator, units: UnitsFile) -> dict[str, Any]:
    """The shared unit data a calculator converts with (benchmark-wide deviations and analyte notes aside, and the
    spellings exports use: how a value may be written never changes what a reading computes, and every reading is
    recorded with the answer)."""
    shared = units.model_dump(mode="json", exclude={"analytes", "deviations", "spellings"}, exclude_defaults=True)
    used = sorted({i.analyte for i in calc.inputs if i.analyte and i.analyte in units.analytes})
    shared["analytes"] = {a: units.analytes[a].model_dump(mode="json", exclude={"note"}, exclude_defaults=True)
                          for a in used}
    return shared


def cited_guidelines(calc: Calculator) -> list[str]:
    """Every guideline a calculator cites: provenance, literature audit and replacements."""
    found = {r.guideline for r in calc.provenance} | set(calc.literature_audit.guidelines)
    found |= {r.guideline for r in calc.replacements if r.guideline}
    return sorted(found)


def guideline_hash(g: Guideline | None) -> str:
    """The content hash of a guideline file (every field is shown; defaults left out as for calculators)."""
    if g is None:
        return "sha256:unknown-guideline"
    return content_hash(g.model_dump(mode="json", exclude_defaults=True))


def released_content(reg: Registry, calc: Calculator, version: Version,
                     _visiting: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A version's content under lock format 3: its own content, its dependencies' and cited guidelines' hashes.

    Dependencies and guidelines are read from the registry as it is now (their active versions);
    a snapshot keeps the hashes it was released with.
    """
    data = content(calc, version, reg.units)
    data["dependencies"] = {d: active_hash(reg, d, _visiting | {calc.slug}) for d in calc.depends_on}
    data["guidelines"] = {g: guideline_hash(reg.guidelines.get(g)) for g in cited_guidelines(calc)}
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
        reg.hashes[key] = content_hash(released_content(reg, calc, version, _visiting))
    return reg.hashes[key]


def only_guidelines_moved(reg: Registry, calc: Calculator) -> bool:
    """Whether the active version differs from its snapshot only in the hashes of guidelines it cites.

    Several calculators can cite the guideline that changed; each is released in turn, and the
    others waiting for their release do not block it.
    """
    try:
        snap = read_snapshot(reg.formulas_dir, calc.slug, calc.active.version)
    except (YamlError, StopIteration):
        return False
    if snap is None:
        return False
    live = released_content(reg, calc, calc.active)
    rest = {k: v for k, v in live.items() if k != "guidelines"}
    return rest == {k: v for k, v in snap.items() if k != "guidelines"} and live["guidelines"] != snap.get("guidelines")


def mapping_orders(value: Any, path: tuple[str | int, ...] = ()) -> dict[tuple[str | int, ...], list[str]]:
    """The key order of every mapping a registry file holds as data (constants, tables, points, lookups, ...),
    by its path (`("tables", "points", "points")`); a model's own fields are in schema order, not data."""
    out: dict[tuple[str | int, ...], list[str]] = {}
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            if name not in BOOKKEEPING:
                out.update(mapping_orders(getattr(value, name), (*path, name)))
    elif isinstance(value, dict):
        out[path] = [str(k) for k in value]
        for k, v in value.items():
            out.update(mapping_orders(v, (*path, str(k))))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            out.update(mapping_orders(v, (*path, i)))
    return out


def order_changes(calc: Calculator, snap: dict[str, Any]) -> list[tuple[str | int, ...]]:
    """The mappings whose order differs from the active version's snapshot, by path.

    Texts, pages and tables show a mapping in its order. The content hash sorts mapping keys (lock
    format 3, kept so that every shipped hash stays valid); the snapshot, written in the file's order
    when the version was released, is the record of the order that was released.
    """
    changed = []
    for path, keys in mapping_orders(calc).items():
        node: Any = snap
        for part in path:
            if isinstance(node, dict) and isinstance(part, str):
                node = node.get(part)
            elif isinstance(node, list) and isinstance(part, int) and part < len(node):
                node = node[part]
            else:
                node = None
                break
        if isinstance(node, dict) and set(map(str, node)) == set(keys) and [str(k) for k in node] != keys:
            changed.append(path)
    return changed


def dotted(path: tuple[str | int, ...]) -> str:
    """`("tables", "points", "points")` as `tables.points.points`, list items as `[i]`."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


# --------------------------------------------------------------------------- older lock formats (migration only)


# The fields each model had when formats 1 and 2 were written. A field the schema gained since is
# left out of a legacy dump while it holds its default, so an older lock still verifies after a
# merge that added optional fields (a field set to a value stays in: it was released with it).
_LEGACY_FIELDS = {
    "Output": {"kind", "range", "rounding", "unit"},
    "Input": {"accepted_units", "analyte", "default", "definition", "description", "kind", "molar_mass", "name",
              "options", "range", "required", "unit", "used"},
    "Constant": {"applies_to", "description", "source", "unit", "value"},
    "Table": {"applies_to", "bands", "default", "description", "labels_only", "lookup", "points", "source", "unit",
              "variable"},
    "Band": {"ge", "gt", "label", "le", "lt", "value"},
    "UnitsFile": {"age", "amount", "analytes", "deviations", "height", "length", "mass", "rounding", "temperature",
                  "volume", "weight"},
    "RoundingRule": {"decimals", "significant_digits", "small_below"},
    "AgeRule": {"days_per_week", "months_per_year", "weeks_per_year"},
    "TemperatureRule": {"fahrenheit_offset", "fahrenheit_per_celsius"},
    "LengthRule": {"inches_per_foot", "inches_per_metre"},
    "Analyte": {"molar_mass", "note", "valence"},
}


def _legacy(obj: Any, dumped: Any) -> Any:
    """`dumped` (a dump of `obj`) without fields newer than format 2 that hold their default."""
    if isinstance(obj, BaseModel) and isinstance(dumped, dict):
        known = next((_LEGACY_FIELDS[k.__name__] for k in type(obj).__mro__ if k.__name__ in _LEGACY_FIELDS), None)
        out = {}
        for key, value in dumped.items():
            field = type(obj).model_fields.get(key)
            now = getattr(obj, key, None)
            if (known is not None and key not in known and field is not None and not field.is_required()
                    and now == field.get_default(call_default_factory=True)):
                continue
            out[key] = _legacy(now, value)
        return out
    if isinstance(obj, (list, tuple)) and isinstance(dumped, list) and len(obj) == len(dumped):
        return [_legacy(a, b) for a, b in zip(obj, dumped)]
    if isinstance(obj, dict) and isinstance(dumped, dict):
        return {k: _legacy(obj.get(k), v) for k, v in dumped.items()}
    return dumped


def legacy_content(calc: Calculator, version: Version, units: UnitsFile | None) -> dict[str, Any]:
    """A version's own content as lock formats 1 and 2 hashed it (answer-changing fields and the text)."""
    data = calc.model_dump(mode="json", include=set(CONTENT_FIELDS), exclude={"inputs": {"__all__": {"definition"}}})
    data = {k: _legacy(getattr(calc, k), data[k]) for k in CONTENT_FIELDS}
    data["version"] = version.version
    data["text"] = version.text
    if units is not None:
        shared = _legacy(units, units.model_dump(mode="json", exclude={"analytes", "deviations", "spellings"}))
        used = sorted({i.analyte for i in calc.inputs if i.analyte and i.analyte in units.analytes})
        shared["analytes"] = {a: _legacy(units.analytes[a], units.analytes[a].model_dump(mode="json", exclude={"note"}))
                              for a in used}
        data["units"] = shared
    return data


def legacy_hash(reg: Registry, slug: str, fmt: int, _visiting: frozenset[str] = frozenset()) -> str:
    """The hash an active version had under lock format `fmt` (1 or 2), to verify a lock before migrating it."""
    calc = reg.calculators.get(slug)
    if calc is None:
        return "sha256:unknown-calculator"
    if slug in _visiting:
        return CYCLE_HASH
    data = legacy_content(calc, calc.active, reg.units)
    if fmt >= 2:
        data["dependencies"] = {d: legacy_hash(reg, d, fmt, _visiting | {slug}) for d in calc.depends_on}
    return content_hash(data)


def migrated_snapshot(calc: Calculator, snap: dict[str, Any], units: UnitsFile | None) -> dict[str, Any] | None:
    """A superseded version's older-format snapshot in format-3 form, or None when it does not rebuild losslessly.

    The snapshot is put back into the calculator entry and read through the schema; it must dump
    to exactly what it held, and is then written as format 3 dumps it. It holds only what the
    older format recorded (the version's name, expression and other shown fields were not kept
    then, and are not guessed now): `recorded_before_format` says so.
    """
    data = calc.model_dump(mode="json")
    for f in CONTENT_FIELDS:
        if f not in snap:
            return None
        data[f] = snap[f]
    entry = {"version": snap.get("version"), "status": VersionStatus.active.value, "effective": "2000-01-01",
             "text": snap.get("text"), "changelog": "snapshot"}
    data["versions"] = [entry]
    try:
        old = Calculator.model_validate(data)
    except ValueError:
        return None
    if any(legacy_content(old, old.active, None)[k] != snap.get(k) for k in (*CONTENT_FIELDS, "version", "text")):
        return None
    new = {k: v for k, v in content(old, old.active, None).items() if k in (*CONTENT_FIELDS, "version", "text")}
    for k in ("units", "dependencies"):  # the unit data it used and the hashes its dependencies had, as recorded
        if k in snap:
            new[k] = snap[k]
    new[MIGRATED_KEY] = LOCK_FORMAT
    return new


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
    data = _lock_data(path)
    calcs = data.get("calculators", {}) if isinstance(data, dict) else None
    if not isinstance(calcs, dict) or not all(isinstance(v, dict) and all(isinstance(h, str) for h in v.values())
                                              for v in calcs.values()):
        raise ValueError("not a lock file: expected {\"calculators\": {slug: {version: hash}}}")
    return {str(slug): dict(v) for slug, v in calcs.items()}


LOCK_KEYS = ("about", "format", "calculators", SEAL_KEY)  # everything a lock may hold; anything else is refused


def _lock_data(path: Path) -> Any:
    """The lock's JSON; ValueError naming the file when it is a link, not a plain file, over `jsontext.LOCK_MAX`
    bytes, not UTF-8 JSON, or holds a duplicate key, NaN or a key the lock does not have (each could make the
    lock say two things, or hide what a reader skips)."""
    from registry.plain_files import FileRefused

    try:
        data = jsontext.read_file(path, jsontext.LOCK_MAX, "lock", strict=True)
    except FileRefused as e:
        raise ValueError(str(e)) from None
    except jsontext.JsonError as e:
        raise ValueError(f"{path}: not a lock file ({e}); restore it with `git checkout`, or rewrite it with "
                         "`formula lock`") from None
    extra = sorted(set(data) - set(LOCK_KEYS)) if isinstance(data, dict) else []
    seal = data.get(SEAL_KEY) if isinstance(data, dict) else None
    extra += [f"{SEAL_KEY}.{k}" for k in sorted(set(seal) - {"digest", "date"})] if isinstance(seal, dict) else []
    if extra:
        raise ValueError(f"{path}: unknown key {extra[0]!r}: a lock holds only {', '.join(LOCK_KEYS)} (and the "
                         "seal's digest and date); remove it, or restore the lock with `git checkout`")
    return data


def lock_format(path: Path) -> int:
    """The hashing scheme the lock was written with (a missing lock is written in the current one)."""
    if not path.exists():
        return LOCK_FORMAT
    data = _lock_data(path)
    fmt = data.get("format", 1) if isinstance(data, dict) else None
    if not isinstance(fmt, int) or isinstance(fmt, bool):
        raise ValueError(f"not a lock file: its format is {fmt!r}, not a number")
    return fmt


def lock_seal(path: Path) -> dict[str, str] | None:
    """What the lock records of the seal of history before signing: {"digest", "date"}, or None.

    The seal file (formulas/policy/recorded_before_signing.yaml) is closed: its digest is fixed here, so an entry
    added to it (a typed version passed off as history) fails validation, and a pull request that also moves the
    digest changes the lock, which `formula review-pr` shows under "Who decides changed"."""
    if not path.exists():
        return None
    data = _lock_data(path)
    seal = data.get(SEAL_KEY) if isinstance(data, dict) else None
    if not isinstance(seal, dict):
        return None
    return {str(k): str(v) for k, v in seal.items()}


def write_lock(path: Path, entries: dict[str, dict[str, str]]) -> None:
    from registry.atomic import atomic_write

    atomic_write(path, lock_text(entries, lock_seal(path)))


def lock_text(entries: dict[str, dict[str, str]], seal: dict[str, str] | None) -> str:
    """The lock's text; `seal` is what it records of the seal of history before signing (kept by every writer)."""
    ordered = {s: dict(sorted(v.items(), key=lambda kv: semver_key(kv[0]))) for s, v in sorted(entries.items())}
    body: dict[str, Any] = {
        "about": "Content hashes of released calculator versions. Written by `formula lock` and "
        "`formula release`; `formula validate` fails when a released version changes without a new version. "
        "Format 3: a version's hash covers every field of its calculator file a person reads or that changes "
        "an answer (not the per-version bookkeeping), the unit data it uses, and the content hashes of the "
        "calculators it depends on and the guideline files it cites.",
        "format": LOCK_FORMAT,
        "calculators": ordered,
    }
    if seal is not None:
        body[SEAL_KEY] = {"digest": seal["digest"], "date": seal["date"]}
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def lock_digest(path: Path) -> str:
    """The registry's identity for run manifests: the hash of its lock file."""
    if not path.exists():
        return "sha256:unlocked"
    from registry.plain_files import read_bytes

    return "sha256:" + hashlib.sha256(read_bytes(path)).hexdigest()


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
