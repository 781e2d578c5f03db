"""Make an edited calculator a new version: supersede the old one, lock and snapshot the new one.

The maintainer edits constants, tables, inputs or the active version's text in place (by hand
or with `formula fix`), then releases. The previous version's text comes back from its
snapshot, so the file keeps every version's text and the lock keeps every version's hash; the
text catalogue (formulas/texts/) is rendered again, so the diff shows every text that changed.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from registry import versions as ver
from registry.loader import clear_cache, load
from registry.schema import Calculator, VersionStatus
from registry.texts import TEXTS_DIR, write_catalogue
from registry.yamlio import dump, load_file


class ReleaseError(Exception):
    pass


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ReleaseError(f"{text!r} is not a number") from None


def set_constant(root: Path | str | None, ref: str, assignment: str) -> str:
    """Edit one constant (`NAME=VALUE`) of a calculator's file in place; returns the file path."""
    if "=" not in assignment:
        raise ReleaseError(f"--set expects CONSTANT=VALUE, got {assignment!r}")
    name, value = (s.strip() for s in assignment.split("=", 1))
    reg = load(root)
    try:
        c = reg.get(ref)
    except KeyError:
        raise ReleaseError(f"unknown calculator {ref!r}") from None
    path = reg.paths[c.slug]
    raw = load_file(path)
    consts = raw.get("constants") or {}
    if name not in consts:
        raise ReleaseError(f"{c.slug} has no constant {name!r}; constants: {', '.join(consts) or 'none'}")
    consts[name]["value"] = _number(value)
    path.write_text(dump(raw), encoding="utf-8")
    clear_cache()
    return str(path)


def release(root: Path | str | None, ref: str, reason: str, *, part: str = "minor", date: str | None = None) -> str:
    reg = load(root)
    schema_problems = [p for p in reg.problems]
    if schema_problems:
        raise ReleaseError("\n".join(map(str, schema_problems)) + "\nfix these before releasing")
    try:
        c = reg.get(ref)
    except KeyError:
        raise ReleaseError(f"unknown calculator {ref!r}") from None
    if not reason.strip():
        raise ReleaseError("--reason must say what changed and why")
    if ver.lock_format(reg.lock_path) != ver.LOCK_FORMAT:
        raise ReleaseError("REGISTRY.lock is in an older format: run `formula lock --rehash` first")
    old = c.active
    lock = ver.read_lock(reg.lock_path)
    recorded = lock.get(c.slug, {}).get(old.version)
    snap = ver.read_snapshot(reg.formulas_dir, c.slug, old.version)
    if recorded is None or snap is None:
        raise ReleaseError(f"{c.slug} {old.version} was never locked; run `formula lock` first")
    live = ver.released_content(reg, c, old)
    if ver.content_hash(live) == recorded:
        raise ReleaseError(f"{c.slug}: nothing to release, the content equals version {old.version}")
    effective = dt.date.fromisoformat(date) if date else dt.date.today()
    if effective < old.effective:
        raise ReleaseError(f"effective date {effective} is before {old.version}'s {old.effective}")
    new_version = ver.bump(old.version, part)

    path = reg.paths[c.slug]
    raw = load_file(path)
    items = raw["versions"]
    idx = next(i for i, v in enumerate(items) if v.get("status") == VersionStatus.active.value)
    edited_text = items[idx]["text"]
    items[idx]["status"] = VersionStatus.superseded.value
    items[idx]["text"] = snap["text"]
    items.append({"version": new_version, "status": VersionStatus.active.value, "effective": effective,
                  "text": edited_text, "changelog": reason.strip()})
    try:
        new_calc = Calculator.model_validate(raw)
    except ValidationError as e:
        raise ReleaseError(f"the edited file does not validate:\n{e}") from None
    path.write_text(dump(raw), encoding="utf-8")
    data = ver.released_content(reg, new_calc, new_calc.active)
    lock.setdefault(c.slug, {})[new_version] = ver.content_hash(data)
    ver.write_snapshot(reg.formulas_dir, c.slug, data)
    ver.write_lock(reg.lock_path, lock)
    clear_cache()
    fresh = load(root)  # every text that states this calculator's numbers may have changed
    write_catalogue(fresh.calculators, fresh.units, fresh.formulas_dir / TEXTS_DIR)
    return (f"{c.slug}: released {new_version} (was {old.version}): {reason.strip()}; "
            f"re-rendered {fresh.rel(fresh.formulas_dir / TEXTS_DIR)}")


def review(root: Path | str | None, ref: str, who: str, role: str, *, date: str | None = None,
           next_due: str | None = None, interval_days: int = 365) -> str:
    """Record a review sign-off on the active version: governance metadata, not content (no new version)."""
    if not who.strip() or not role.strip():
        raise ReleaseError("--by and --role must name the reviewer and their role")
    reg = load(root)
    if reg.problems:
        raise ReleaseError("\n".join(map(str, reg.problems)) + "\nfix these before recording a review")
    try:
        c = reg.get(ref)
    except KeyError:
        raise ReleaseError(f"unknown calculator {ref!r}") from None
    try:
        when = dt.date.fromisoformat(date) if date else dt.date.today()
        due = dt.date.fromisoformat(next_due) if next_due else when + dt.timedelta(days=interval_days)
    except ValueError as e:
        raise ReleaseError(f"dates are YYYY-MM-DD: {e}") from None
    if due <= when:
        raise ReleaseError(f"the next review ({due}) must come after this one ({when})")
    path = reg.paths[c.slug]
    raw = load_file(path)
    item = next(v for v in raw["versions"] if v.get("status") == VersionStatus.active.value)
    item.setdefault("signoffs", []).append({"who": who.strip(), "role": role.strip(), "date": when})
    item["last_review"] = when
    item["next_review"] = due
    item.setdefault("approved", when)
    try:
        Calculator.model_validate(raw)
    except ValidationError as e:
        raise ReleaseError(f"the edited file does not validate:\n{e}") from None
    path.write_text(dump(raw), encoding="utf-8")
    clear_cache()
    return f"{c.slug} {item['version']}: reviewed by {who.strip()} ({role.strip()}) on {when}; next review due {due}"
