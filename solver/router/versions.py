"""A released version's content, rebuilt from its history snapshot, for computing with it.

`formula release` writes `formulas/history/<slug>/<version>.yaml` with everything that fixes a
version's answer (inputs, constants, tables, dependencies, output, text, shared unit data). To
compute with a superseded version we put that content back into the calculator entry, make the
version the active one in a private copy of the registry, and check that the rebuilt content
hashes to what the lock file recorded, so a result never claims a version it did not use. Unit
data the registry has gained since (a factor that used to be written in code) is kept from the current
registry; everything the snapshot holds wins.
"""
from __future__ import annotations

import dataclasses

from registry.loader import Registry
from registry.schema import Calculator, UnitsFile
from registry.validate import validate
from registry.versions import CONTENT_FIELDS, content, content_hash, read_lock, read_snapshot


class VersionError(LookupError):
    """A version that cannot be rebuilt; the message says which and why."""


def with_version(reg: Registry, calc: Calculator, version: str) -> tuple[Registry, Calculator]:
    """A registry copy in which `calc` is exactly its released `version` (the active one is unchanged)."""
    if version == calc.active.version:
        return reg, calc
    known = {v.version: v for v in calc.versions}
    if version not in known:
        raise VersionError(f"{calc.slug} has no version {version}; versions: {', '.join(known)}")
    if known[version].status.value not in ("active", "superseded"):
        raise VersionError(f"{calc.slug} {version} is {known[version].status.value}, not a released version")
    snap = read_snapshot(reg.formulas_dir, calc.slug, version)
    if snap is None:
        raise VersionError(f"{calc.slug} {version}: no snapshot at formulas/history/{calc.slug}/{version}.yaml "
                           "(run `formula lock`)")
    data = calc.model_dump(mode="json")
    for f in CONTENT_FIELDS:
        data[f] = snap[f]
    versions = []
    for v in data["versions"]:
        v = dict(v)
        if v["version"] == version:
            v["status"], v["text"] = "active", snap["text"]
        elif v["status"] == "active":
            v["status"] = "superseded"
        versions.append(v)
    data["versions"] = versions
    old = Calculator.model_validate(data)
    units = reg.units
    if units is not None and "units" in snap:  # the shared unit data as that version used it
        u = units.model_dump(mode="json")
        shared = dict(snap["units"])
        analytes = shared.pop("analytes", {})
        for key, section in shared.items():  # a section the registry has grown since keeps its newer keys
            u[key] = {**u[key], **section} if isinstance(section, dict) and isinstance(u.get(key), dict) else section
        for name, a in analytes.items():
            u["analytes"][name] = {**u["analytes"].get(name, {}), **a}
        units = UnitsFile.model_validate(u)
    want = read_lock(reg.lock_path).get(calc.slug, {}).get(version)
    got = content_hash(snap)
    if want is None or want != got:
        raise VersionError(f"{calc.slug} {version}: the snapshot does not hash to the lock file's {want} "
                           f"(got {got}); the history is damaged")
    rebuilt = content(old, old.active, None)
    if any(rebuilt[f] != snap[f] for f in (*CONTENT_FIELDS, "text")):
        raise VersionError(f"{calc.slug} {version}: the snapshot cannot be rebuilt into a calculator entry")
    if not reg.validated:  # the copy below counts as validated: it must be made from a registry that is
        validate(reg)
    # results computed here name the version's recorded hash (the snapshot, checked against the lock just now)
    new_reg = dataclasses.replace(reg, calculators={**reg.calculators, calc.slug: old}, units=units,
                                  hashes={(calc.slug, version): want})
    return new_reg, old
