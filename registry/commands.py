"""Sub-commands of `formula` that read or maintain the registry."""
from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel

from registry import versions as ver
from registry.cliutil import CommandError, add_root, load_registry, require_writable
from registry.loader import Registry, clear_cache, load
from registry.report import calculator_rows, render_table, show_text
from registry.schema import Calculator, ConcernType, VersionStatus
from registry.validate import summary, validate


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="load and check the whole registry",
                       description="Check schema, references, cycles, versions and the lock file. "
                       "Errors print as path:line: field: problem; exit status 1 when any.")
    _root(p)
    p.set_defaults(handler=cmd_validate)

    p = sub.add_parser("list", help="one row per calculator", description="List the calculators with their audit status.")
    _root(p)
    _fmt(p)
    p.add_argument("--concern", choices=[c.value for c in ConcernType], help="only this literature-audit concern")
    p.add_argument("--group", choices=["replaced", "other", "none"], help="only this audit group (paper Table 13)")
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("show", help="everything about one calculator", description="Show one calculator for a clinician.")
    _root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    _fmt(p)
    p.set_defaults(handler=cmd_show)

    p = sub.add_parser("history", help="the version lineage of one calculator")
    _root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    _fmt(p)
    p.set_defaults(handler=cmd_history)

    p = sub.add_parser("diff", help="what changed between two versions (text, constants, inputs)")
    _root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    p.add_argument("v1")
    p.add_argument("v2")
    p.set_defaults(handler=cmd_diff)

    p = sub.add_parser("schema", help="the JSON Schema of a calculator file (or a guideline file)")
    _root(p)
    p.add_argument("--kind", choices=["calculator", "guideline", "units"], default="calculator")
    p.set_defaults(handler=cmd_schema)

    p = sub.add_parser("lock", help="record content hashes of released versions not yet locked",
                       description="Add every active or superseded version missing from formulas/REGISTRY.lock, "
                       "with a snapshot under formulas/history/. Never overwrites a recorded hash, except with "
                       "--rehash, the one-off migration of a lock written in an older format.")
    _root(p)
    p.add_argument("--rehash", action="store_true",
                   help="migrate a format-1 lock to the current format: refuses unless every released version "
                   "still matches its recorded hash under the old scheme; rewrites active versions' hashes and "
                   "snapshots (superseded snapshots keep theirs)")
    p.set_defaults(handler=cmd_lock)

    p = sub.add_parser("release", help="release the edited content of a calculator as a new version",
                       description="After editing a calculator's constants, tables, inputs or its active text, "
                       "make the edit a new active version; the previous one becomes superseded.")
    _root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    p.add_argument("--reason", required=True, help="what changed and why (the changelog line)")
    p.add_argument("--part", choices=["major", "minor", "patch"], default="minor", help="which part to bump")
    p.add_argument("--date", help="effective date YYYY-MM-DD (default: today)")
    p.set_defaults(handler=cmd_release)

    p = sub.add_parser("fix", help="change one constant and release the change as a new version",
                       description="Shorthand for editing a constant in the YAML, then `formula release`.")
    _root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    p.add_argument("--set", dest="assignment", required=True, metavar="CONSTANT=VALUE")
    p.add_argument("--reason", required=True, help="what changed and why (the changelog line)")
    p.add_argument("--part", choices=["major", "minor", "patch"], default="minor")
    p.add_argument("--date", help="effective date YYYY-MM-DD (default: today)")
    p.set_defaults(handler=cmd_fix)

    p = sub.add_parser("review", help="record a review sign-off on the active version",
                       description="Sign off the active version after a review: appends who, role and date, "
                       "sets the last review and the next review due (default: one year later). Review data "
                       "is governance metadata, so no new version is made.")
    _root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    p.add_argument("--by", required=True, help="the reviewer's name")
    p.add_argument("--role", required=True, help="the reviewer's role, e.g. 'clinical pharmacist'")
    p.add_argument("--date", help="review date YYYY-MM-DD (default: today)")
    p.add_argument("--next-due", help="next review due YYYY-MM-DD (default: --interval-days after the review)")
    p.add_argument("--interval-days", type=int, default=365)
    p.set_defaults(handler=cmd_review)

    p = sub.add_parser("due", help="calculators whose review is due", description="List calculators whose active "
                       "version has never been reviewed or whose next review is due on or before --on.")
    _root(p)
    p.add_argument("--on", help="date YYYY-MM-DD (default: today)")
    _fmt(p)
    p.set_defaults(handler=cmd_due)


_root = add_root


def _fmt(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=["table", "json"], default="table")


def _load_valid(root: Path | None) -> Registry:
    return load_registry(root)


def _calc(reg: Registry, ref: str) -> Calculator:
    try:
        return reg.get(ref)
    except KeyError:
        raise CommandError(f"unknown calculator {ref!r}: give a slug or benchmark id (see `formula list`)") from None


_writable = require_writable


# ---------------------------------------------------------------------- commands


def cmd_validate(args: argparse.Namespace) -> int:
    reg = load(args.root)
    validate(reg)
    if reg.problems:
        for p in reg.problems:
            print(p)
        raise CommandError(f"{len(reg.problems)} problem(s)")
    print(summary(reg))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    reg = _load_valid(args.root)
    rows = calculator_rows(reg)
    if args.concern:
        rows = [r for r in rows if r["concern"] == args.concern]
    if args.group:
        rows = [r for r in rows if r["audit_group"] == args.group]
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    cols = ["medcalc_id", "slug", "category", "output", "intended_use", "concern", "audit_group",
            "completeness", "active_version", "successors"]
    print(render_table(rows, cols))
    print(_counts(rows))
    return 0


def _counts(rows: list[dict[str, Any]]) -> str:
    def tally(key: str) -> str:
        c: dict[str, int] = {}
        for r in rows:
            c[str(r[key])] = c.get(str(r[key]), 0) + 1
        return ", ".join(f"{k} {v}" for k, v in sorted(c.items()))

    return (f"\n{len(rows)} calculators | concern: {tally('concern')}\n"
            f"audit group: {tally('audit_group')} | completeness: {tally('completeness')}")


def cmd_show(args: argparse.Namespace) -> int:
    reg = _load_valid(args.root)
    c = _calc(reg, args.calculator)
    if args.format == "json":
        print(json.dumps(c.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        print(show_text(reg, c))
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    reg = _load_valid(args.root)
    c = _calc(reg, args.calculator)
    lock = ver.read_lock(reg.lock_path).get(c.slug, {})
    rows = [{"version": v.version, "status": v.status.value, "effective": v.effective.isoformat(),
             "approved": v.approved.isoformat() if v.approved else "", "next_review": v.next_review.isoformat()
             if v.next_review else "", "hash": lock.get(v.version, "")[:19], "changelog": v.changelog}
            for v in c.versions]
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        print(f"{c.name} ({c.slug})")
        print(render_table(rows, list(rows[0])))
    return 0


def version_content(reg: Registry, c: Calculator, version: str) -> dict[str, Any] | None:
    """The released content of a version: the live file for the active one, its snapshot otherwise."""
    for v in c.versions:
        if v.version == version:
            if v.status == VersionStatus.active or v.status == VersionStatus.draft:
                return ver.released_content(reg, c, v)
            return ver.read_snapshot(reg.formulas_dir, c.slug, version)
    return None


def cmd_diff(args: argparse.Namespace) -> int:
    reg = _load_valid(args.root)
    c = _calc(reg, args.calculator)
    a, b = version_content(reg, c, args.v1), version_content(reg, c, args.v2)
    for v, data in ((args.v1, a), (args.v2, b)):
        if data is None:
            known = ", ".join(x.version for x in c.versions)
            raise CommandError(f"{c.slug} has no released version {v!r}; versions: {known}")
    assert a is not None and b is not None
    out = list(difflib.unified_diff(_lines(a), _lines(b), f"{c.slug}@{args.v1}", f"{c.slug}@{args.v2}", lineterm=""))
    print("\n".join(out) if out else f"{c.slug}: {args.v1} and {args.v2} have the same content")
    return 0


def _lines(data: dict[str, Any]) -> list[str]:
    from registry.yamlio import dump

    text = data.get("text", "")
    body = {k: v for k, v in data.items() if k != "text"}
    return ["text:", *("  " + t for t in str(text).splitlines())] + dump(body).splitlines()


def cmd_schema(args: argparse.Namespace) -> int:
    from registry.schema import Guideline, UnitsFile

    if args.root is not None and not (args.root / "formulas").is_dir():
        raise CommandError(f"no formulas/ folder in {args.root}; pass --root DIR")

    models: dict[str, type[BaseModel]] = {"calculator": Calculator, "guideline": Guideline, "units": UnitsFile}
    model = models[args.kind]
    print(json.dumps(model.model_json_schema(), indent=2, ensure_ascii=False))
    return 0


def cmd_lock(args: argparse.Namespace) -> int:
    _writable(args.root)
    reg = load(args.root)
    if reg.problems:
        for p in reg.problems:
            print(p, file=sys.stderr)
        raise CommandError(f"{len(reg.problems)} problem(s) in the registry files: fix them before locking")
    if args.rehash:
        return _rehash(reg)
    if ver.lock_format(reg.lock_path) != ver.LOCK_FORMAT:
        raise CommandError(f"{reg.rel(reg.lock_path)} is in an older format: run `formula lock --rehash` first")
    lock = ver.read_lock(reg.lock_path)
    added = 0
    for slug, c in sorted(reg.calculators.items()):
        entry = lock.setdefault(slug, {})
        for v in ver.released(c):
            if v.version in entry:
                continue
            if v.status != VersionStatus.active:
                raise CommandError(f"{slug}: superseded version {v.version} has no lock entry and cannot be "
                                   "reconstructed")
            data = ver.released_content(reg, c, v)
            entry[v.version] = ver.content_hash(data)
            ver.write_snapshot(reg.formulas_dir, slug, data)
            added += 1
    ver.write_lock(reg.lock_path, lock)
    clear_cache()
    print(f"locked {added} new version(s); {reg.rel(reg.lock_path)} holds "
          f"{sum(len(v) for v in lock.values())}")
    return 0


def _rehash(reg: Registry) -> int:
    """Migrate a format-1 lock: verify every released version under the old scheme, then hash with the new one.

    Safe to re-run: on a current-format lock it changes nothing. Superseded snapshots are kept as
    they are (the hashes of their dependencies at release time are not known), so their recorded
    hashes stay valid; each active version is rehashed with its dependencies and snapshotted again.
    """
    fmt = ver.lock_format(reg.lock_path)
    if fmt == ver.LOCK_FORMAT:
        print(f"{reg.rel(reg.lock_path)} is already format {fmt}; nothing to rehash")
        return 0
    lock = ver.read_lock(reg.lock_path)
    stale = []
    for slug, c in sorted(reg.calculators.items()):
        for v in ver.released(c):
            recorded = lock.get(slug, {}).get(v.version)
            now: str | None
            if v.status == VersionStatus.active:
                now = ver.content_hash(ver.content(c, v, reg.units))
            else:
                snap = ver.read_snapshot(reg.formulas_dir, slug, v.version)
                now = ver.content_hash(snap) if snap is not None else None
            if recorded is None or now != recorded:
                stale.append(f"{slug} {v.version}")
    if stale:
        raise CommandError("these released versions no longer match their format-1 hash, so rehashing would bless "
                           "unreleased edits; undo the edits (or release them with the old tool) first:\n  "
                           + "\n  ".join(stale))
    for slug, c in sorted(reg.calculators.items()):
        data = ver.released_content(reg, c, c.active)
        lock[slug][c.active.version] = ver.content_hash(data)
        ver.write_snapshot(reg.formulas_dir, slug, data)
    ver.write_lock(reg.lock_path, lock)
    clear_cache()
    print(f"rehashed {len(reg.calculators)} active version(s) into lock format {ver.LOCK_FORMAT}; "
          f"commit {reg.rel(reg.lock_path)} and formulas/history/")
    return 0


def _maintain(root: Path | None, action: Callable[[], str]) -> int:
    """Run a registry-editing action; its refusal is `error: ...` and exit 1, never a traceback."""
    from registry.release import ReleaseError

    _writable(root)
    try:
        print(action())
    except ReleaseError as e:
        raise CommandError(str(e)) from None
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    from registry.release import release

    return _maintain(args.root, lambda: release(args.root, args.calculator, args.reason, part=args.part, date=args.date))


def cmd_fix(args: argparse.Namespace) -> int:
    from registry.release import release, set_constant

    def fix() -> str:
        set_constant(args.root, args.calculator, args.assignment)
        return release(args.root, args.calculator, args.reason, part=args.part, date=args.date)

    return _maintain(args.root, fix)


def cmd_review(args: argparse.Namespace) -> int:
    from registry.release import review

    return _maintain(args.root, lambda: review(args.root, args.calculator, args.by, args.role, date=args.date,
                                    next_due=args.next_due, interval_days=args.interval_days))


def cmd_due(args: argparse.Namespace) -> int:
    import datetime as dt

    reg = _load_valid(args.root)
    try:
        on = dt.date.fromisoformat(args.on) if args.on else dt.date.today()
    except ValueError:
        raise CommandError(f"--on must be a date YYYY-MM-DD, got {args.on!r}") from None
    rows = []
    for c in sorted(reg.calculators.values(), key=lambda c: c.slug):
        v = c.active
        if v.next_review is None or v.next_review <= on:
            rows.append({"slug": c.slug, "version": v.version,
                         "last_review": v.last_review.isoformat() if v.last_review else "never",
                         "next_review": v.next_review.isoformat() if v.next_review else "-",
                         "signoffs": len(v.signoffs)})
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    else:
        print(render_table(rows, ["slug", "version", "last_review", "next_review", "signoffs"]) if rows
              else "no review due")
        print(f"\n{len(rows)} of {len(reg.calculators)} calculators due for review on {on}")
    return 0
