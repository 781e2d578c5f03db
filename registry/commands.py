"""Sub-commands of `formula` that read or maintain the registry."""
from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel

from registry import jsontext
from registry import versions as ver
from registry.cliutil import CommandError, add_root, load_registry, require_writable
from registry.loader import Registry, clear_cache, load
from registry.report import calculator_rows, original_text_label, show_text
from registry.schema import Calculator, ConcernType, VersionStatus
from registry.tables import render_table
from registry.terminal import printable, say
from registry.validate import summary, validate


def register(sub: argparse._SubParsersAction) -> None:  # noqa: PLR0915  argparse declarations, one per flag
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

    p = sub.add_parser("diff", help="what changed between two versions: the text a clinician reads, then constants and inputs",
                       description="The rendered supplied text of each version, as a unified diff, then the changed "
                       "constants, inputs, tables and dependencies. V2 may be a draft waiting for approval.")
    _root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    p.add_argument("v1", metavar="V1", help="the older version, e.g. 1.0.0 (`formula history` lists them)")
    p.add_argument("v2", metavar="V2", help="the newer version, or a draft waiting for approval")
    p.add_argument("--format", choices=["text", "json"], default="text",
                   help="json: the text diff and every change with its old and new values, for tools")
    p.set_defaults(handler=cmd_diff)

    p = sub.add_parser("schema", help="the JSON Schema of a calculator file (or a guideline file)")
    _root(p)
    p.add_argument("--kind", choices=["calculator", "guideline", "units", "policy"], default="calculator",
                   help="policy: formulas/policy/governance.yaml, who may approve")
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
    _key(p)
    p.set_defaults(handler=cmd_lock)

    p = sub.add_parser("release", help="release the edited content of a calculator as a new version",
                       description="After editing a calculator's constants, tables, inputs or its active text, "
                       "make the edit a new active version; the previous one becomes superseded. Refuses while "
                       "other calculators have unreleased edits (naming them).")
    _root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    _release_args(p)
    p.set_defaults(handler=cmd_release)

    p = sub.add_parser("fix", help="change constants and release the change as a new version",
                       description="Set one or more constants (each --set applied together, checked against the "
                       "constant's allowed range first) and release the result; with --draft it waits for "
                       "`formula approve`.")
    _root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    p.add_argument("--set", dest="assignments", action="append", required=True, metavar="CONSTANT=VALUE",
                   help="repeat for several constants")
    p.add_argument("--label", dest="labels", action="append", default=[], metavar="CONSTANT=NAME",
                   help="the name the new value goes by in texts (e.g. 'Katz factor'); required when the constant "
                   "set carries a label")
    _release_args(p)
    p.set_defaults(handler=cmd_fix)

    p = sub.add_parser("approve", help="approve a draft version: it becomes active (or on its effective date)",
                       description="Sign an approval of a waiting draft; once its approvals satisfy the policy "
                       "(four eyes, k of n) it becomes the active version now, or, when its effective date lies "
                       "ahead, on that day (`formula activate`). Naming the active version instead adds an "
                       "approval to it (to meet a policy made stricter after its release).")
    _root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    p.add_argument("version", help="the draft's version, e.g. 1.1.0")
    _key(p)
    p.add_argument("--by", help="the approver's principal (optional: it must be the key's)")
    p.add_argument("--role", help="which of the approver's roles in governance.yaml (default: their first)")
    p.add_argument("--reason", required=True, help="why the change is approved (recorded with the approval)")
    p.add_argument("--date", help="approval date YYYY-MM-DD, not in the future (default: today)")
    p.set_defaults(handler=cmd_approve)

    p = sub.add_parser("reject", help="reject a waiting draft: it is removed, the rejection kept on record",
                       description="Remove a draft that will not be approved; who rejected it, their role, the "
                       "date and the reason are kept in formulas/drafts/rejected/<slug>.yaml.")
    _root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    p.add_argument("version", help="the draft's version")
    _key(p)
    p.add_argument("--by", help="the principal who rejects (optional: it must be the key's)")
    p.add_argument("--role", help="which of their roles in governance.yaml (default: their first)")
    p.add_argument("--reason", required=True, help="why the draft is rejected")
    p.set_defaults(handler=cmd_reject)

    p = sub.add_parser("pending", help="what awaits approval or its effective date",
                       description="Every draft waiting for approval and every approved version waiting for its "
                       "effective date: who drafted it, since when, and what it changes.")
    _root(p)
    _fmt(p)
    p.set_defaults(handler=cmd_pending)

    p = sub.add_parser("activate", help="make approved versions whose effective date has come active")
    _root(p)
    p.add_argument("--on", help="date YYYY-MM-DD, not in the future (default: today)")
    p.set_defaults(handler=cmd_activate)

    p = sub.add_parser("recover", help="roll back a change a killed command left half-written",
                       description="Restores every file named in formulas/.journal.json to its previous content. "
                       "Writing commands do this themselves before they start.")
    _root(p)
    p.set_defaults(handler=cmd_recover)

    p = sub.add_parser("review", help="record a review sign-off on the active version",
                       description="Sign off the active version after a review: appends who, role and date, "
                       "sets the last review and the next review due (default: one year later). Review data "
                       "is governance metadata, so no new version is made. The date may not lie in the future, "
                       "before the version took effect, or before the last review.")
    _root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    _key(p)
    p.add_argument("--by", help="the reviewer's principal (optional: it must be the key's)")
    p.add_argument("--role", help="which of the reviewer's roles in governance.yaml (default: their first)")
    p.add_argument("--date", help="review date YYYY-MM-DD (default: today)")
    p.add_argument("--next-due", help="next review due YYYY-MM-DD (default: --interval-days after the review)")
    p.add_argument("--interval-days", type=int, default=365, help="days from this review to the next (1 to 3653; "
                   "default 365)")
    p.set_defaults(handler=cmd_review)

    p = sub.add_parser("due", help="calculators whose review is due", description="List calculators whose active "
                       "version has never been reviewed or whose next review is due on or before --on. JSON gives "
                       "null for a review that never happened.")
    _root(p)
    p.add_argument("--on", help="date YYYY-MM-DD (default: today)")
    p.add_argument("--overdue", action="store_true", help="only those whose next review date has passed")
    _fmt(p)
    p.set_defaults(handler=cmd_due)

    p = sub.add_parser("changelog", help="every released version across the registry: who, why, what changed",
                       description="Released versions, newest first, with who released and approved them, the "
                       "reason, what changed and the review sign-offs.")
    _root(p)
    p.add_argument("--since", metavar="DATE|REF", help="versions effective on or after a date, or released since a git ref")
    p.add_argument("--format", choices=["markdown", "table", "json"], default="markdown",
                   help="markdown (to publish), table (one line per version, fits the terminal) or json")
    p.set_defaults(handler=cmd_changelog)

    p = sub.add_parser("verify", help="for consumers: is every active version reached through valid signed decisions?",
                       description="Checks every signature, the decision chain and the policy. Exit 0 only when "
                       "every active version rests on valid signed decisions that satisfy the policy; 3 when none "
                       "is invalid but some rest on history recorded before signing (the shipped registry); 1 when "
                       "a decision is invalid.")
    _root(p)
    p.add_argument("--format", choices=["table", "json"], default="table",
                   help="table (one line per active version) or json (every active version with its state and approvers)")
    p.set_defaults(handler=cmd_verify)

    p = sub.add_parser("stale", help="stored results produced by a text or version that has since changed",
                       description="Reads a results.jsonl (one JSON object per line naming its calculator by "
                       "slug/text_slug or calculator_id, with text_version and/or text_sha256) and lists the "
                       "cases whose text changed since. Exit 1 when the file (or a line of it) cannot be read, and with --check "
                       "when any case is stale.")
    _root(p)
    p.add_argument("results", type=Path, nargs="?", help="RESULTS.jsonl, or a run folder holding results.jsonl")
    p.add_argument("--runs", type=Path, metavar="DIR", help="instead of RESULTS: every results.jsonl below DIR (e.g. "
                   "results/; none there is nothing stale)")
    _fmt(p)
    p.add_argument("--check", action="store_true", help="exit 1 when any case is stale or cannot be checked "
                   "(for pipelines)")
    p.set_defaults(handler=cmd_stale)


def _release_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--reason", required=True, help="what changed and why (the changelog line)")
    p.add_argument("--part", choices=["major", "minor", "patch"], default="minor", help="which part to bump")
    p.add_argument("--date", help="effective date YYYY-MM-DD (default: today); a future date keeps the current "
                   "version active until then")
    _key(p)
    p.add_argument("--by", help="the author's principal (optional: it must be the key's)")
    p.add_argument("--role", help="which of the author's roles in governance.yaml (default: their first)")
    p.add_argument("--draft", action="store_true", help="make a draft that becomes active only through `formula approve`")
    p.add_argument("--with-dependants", action="store_true",
                   help="also release every calculator that depends on this one (e.g. Cockcroft-Gault after ideal "
                   "body weight): a version's content covers its dependencies'")


_root = add_root


def _key(p: argparse.ArgumentParser) -> None:
    p.add_argument("--key", help="your OpenSSH signing key (or its .pub, the key held by ssh-agent); default "
                   "$FORMULA_SIGNING_KEY. The decision is signed, and recorded as the principal "
                   "formulas/policy/allowed_signers gives this key")


def _fmt(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=["table", "json"], default="table",
                   help="table: for reading, fitted to the terminal (default); json: every field, never cut, for scripts")
    p.add_argument("--wide", action="store_true",
                   help="print the table at its full width, whatever the terminal's (no column left out)")


def _load_valid(root: Path | None) -> Registry:
    # read-only: a broken calculator file leaves the others readable, and an unchanged registry that passed
    # validation before is read from the cache (list 0.95 s -> see bench/cli.py)
    return load_registry(root, partial=True, cached=True)


def _calc(reg: Registry, ref: str) -> Calculator:
    try:
        return reg.get(ref)
    except KeyError:
        if re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", ref) and ref != "units" and (reg.formulas_dir / f"{ref}.yaml").is_file():
            # a calculator left out of a partial reading (registry.tolerant)
            raise CommandError(printable(f"{ref} is left out: formulas/{ref}.yaml, or a calculator it uses, fails "
                                         "validation (`formula validate` lists the problems)")) from None
        from registry.suggest import unknown_calculator

        raise CommandError(unknown_calculator(reg, ref)) from None


_writable = require_writable


# ---------------------------------------------------------------------- commands


def cmd_validate(args: argparse.Namespace) -> int:
    reg = load(args.root)
    validate(reg, parallel=True)
    if reg.problems:
        from registry.validate import first_fix

        for p in reg.problems:
            say(printable(p))
        advice = first_fix(reg.problems)
        raise CommandError(f"{len(reg.problems)} problem(s)" + (f"; {printable(advice)}" if advice else ""))
    print(summary(reg))
    from registry.governance.pending import pending

    waiting = pending(reg)
    if waiting:
        say(printable(f"{len(waiting)} version(s) pending approval or their effective date: "
                      + ", ".join(f"{p.slug} {p.version}" for p in waiting) + " (`formula pending`)"))
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
    shown = [{"id": r["medcalc_id"], "slug": r["slug"], "version": r["active_version"], "concern": r["concern"].replace("_", " "),
              "group": r["audit_group"], "original text": original_text_label(r["completeness"]),
              "successors": r["successors"], "intended use": r["intended_use"], "category": r["category"],
              "output": r["output"]} for r in rows]
    say(render_table(shown, list(shown[0]) if shown else ["slug"], whole=["id"],
                       drop=["group", "successors", "intended use", "category", "output"]))
    say(_counts(rows))
    return 0


def _counts(rows: list[dict[str, Any]]) -> str:
    def tally(key: str) -> str:
        c: dict[str, int] = {}
        for r in rows:
            c[str(r[key])] = c.get(str(r[key]), 0) + 1
        return ", ".join(f"{k} {v}" for k, v in sorted(c.items()))

    import textwrap

    from registry.tables import terminal_width

    lines = [f"{len(rows)} calculators", f"concern: {tally('concern')}", f"audit group: {tally('audit_group')}",
             f"original text (paper's audit): {tally('completeness')}",
             "current text: `formula audit completeness` checks the registry's texts today"]
    width = min(terminal_width() or 100, 100)
    return "\n" + "\n".join(textwrap.fill(line, width=width, subsequent_indent="  ") for line in lines)


def cmd_show(args: argparse.Namespace) -> int:
    reg = _load_valid(args.root)
    c = _calc(reg, args.calculator)
    if args.format == "json":
        from registry.governance.signatures import views

        checked = [d.model_dump() for d in views(reg, c) if d.version == c.active.version]
        print(json.dumps({**c.model_dump(mode="json"), "active_decisions": checked}, indent=2, ensure_ascii=False))
    else:
        say(show_text(reg, c))
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    reg = _load_valid(args.root)
    c = _calc(reg, args.calculator)
    lock = ver.read_lock(reg.lock_path).get(c.slug, {})
    from registry.governance.pending import draft_version
    from registry.governance.signatures import views

    decided = views(reg, c)
    rows = [_history_row(v, v.status.value, lock.get(v.version, ""), [d for d in decided if d.version == v.version])
            for v in c.versions]
    found = draft_version(reg, c.slug)
    if found is not None:
        v = found[1]
        mine = [d for d in decided if d.version == v.version]
        approved = bool(v.approved_by) if not v.decisions else _pending_approved(reg, c)
        rows.append(_history_row(v, "approved, awaiting its date" if approved else "draft, awaiting approval", "",
                                 mine, draft=True))
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        say(printable(f"{c.name} ({c.slug})"))
        shown = [dict(r, hash=_short_hash(r["hash"])) for r in rows]
        say(render_table(shown, ["version", "status", "effective", "changelog", "signing", "released_by", "approved",
                                 "next_review", "hash"],
                         drop=["approved", "released_by", "next_review", "hash"]))  # who approved goes last
    return 0


def _pending_approved(reg: Registry, c: Calculator) -> bool:
    from registry.governance.pending import pending_one

    p = pending_one(reg, c)
    return p is not None and p.state.startswith("approved")


def _history_row(v: Any, status: str, hash_: str, decided: list[Any], draft: bool = False) -> dict[str, Any]:
    """One version: who released and approved it, only as far as it is proven (verified) or typed (marked so)."""
    verified = [d for d in decided if d.state == "verified"]
    author = next((d for d in verified if d.decision in ("release", "draft")), None)
    approvals = [d for d in verified if d.decision == "approve"]
    if any(d.state == "invalid" for d in decided):
        signing = "invalid (formula verify)"
    elif any(d.state == "recorded_before_signing" for d in decided):
        signing = "recorded before signing"
    elif verified:
        signing = "verified"
    else:
        signing = "not signed"
    released_by = (f"{author.name} ({author.role})" if author else
                   f"{v.released_by.who} (typed)" if v.released_by else "")
    approved = ("; ".join(f"{d.name} ({d.date})" for d in approvals) if approvals else
                f"{v.approved_by.who} ({v.approved_by.date}; typed)" if v.approved_by else "")
    return {"version": v.version, "status": status, "effective": v.effective.isoformat(), "signing": signing,
            "released_by": released_by, "approved": approved,
            "next_review": v.next_review.isoformat() if v.next_review and not draft else "", "hash": hash_,
            "changelog": v.changelog, "decisions": [d.model_dump() for d in decided]}


def _short_hash(h: str | None) -> str:
    """'sha256:' and 12 hex digits: enough to tell versions apart on screen (JSON keeps the whole hash)."""
    if not h:
        return "-"
    algo, _, digest = h.partition(":")
    return f"{algo}:{digest[:12]}" if digest else h[:12]


def cmd_diff(args: argparse.Namespace) -> int:
    from registry.diffing import diff, scoring_changes
    from registry.versioned import rendered, version_content

    reg = _load_valid(args.root)
    c = _calc(reg, args.calculator)
    a, b = version_content(reg, c, args.v1), version_content(reg, c, args.v2)
    for v, data in ((args.v1, a), (args.v2, b)):
        if data is None:
            known = ", ".join(x.version for x in c.versions)
            raise CommandError(f"{c.slug} has no released or draft version {v!r}; versions: {known}")
    assert a is not None and b is not None
    ta, tb = rendered(reg, c, args.v1) or "", rendered(reg, c, args.v2) or ""
    text = list(difflib.unified_diff(ta.splitlines(), tb.splitlines(), f"{c.slug} {args.v1} (supplied text)",
                                     f"{c.slug} {args.v2} (supplied text)", lineterm=""))
    changes = [ch for ch in diff(a, b) if ch.what != "text"]
    scoring = bool(scoring_changes(changes))
    if args.format == "json":
        print(json.dumps({"slug": c.slug, "from": args.v1, "to": args.v2, "text_diff": text,
                          "changes": [ch.model_dump(mode="json") for ch in changes],
                          "scoring_changed": scoring}, indent=2, ensure_ascii=False))
        return 0
    if not text and not changes:
        say(printable(f"{c.slug}: {args.v1} and {args.v2} have the same content; no change to scoring"))
        return 0
    say("\n".join(printable(t) for t in text) if text else "supplied text: unchanged")
    say()
    say("\n".join(printable(f"- {ch.line()}") for ch in changes) or "- no change beyond the text")
    if not scoring:
        say("no change to scoring: the same inputs give the same answers")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from registry.schema import Guideline, UnitsFile

    if args.root is not None and not (args.root / "formulas").is_dir():
        raise CommandError(f"no formulas/ folder in {args.root}; pass --root DIR")

    from registry.governance.policy import Policy

    models: dict[str, type[BaseModel]] = {"calculator": Calculator, "guideline": Guideline, "units": UnitsFile,
                                          "policy": Policy}
    model = models[args.kind]
    print(json.dumps(model.model_json_schema(), indent=2, ensure_ascii=False))
    return 0


def cmd_lock(args: argparse.Namespace) -> int:
    if args.rehash:
        from registry.governance.release import ReleaseError, writing

        _writable(args.root)
        try:
            with writing(args.root) as base:  # the registry lock, and any interrupted change rolled back first
                reg = load(base)
                if reg.problems and any(p.code != "R-LOCK-FORMAT" for p in reg.problems):
                    for p in reg.problems:
                        print(p, file=sys.stderr)
                    raise CommandError(f"{len(reg.problems)} problem(s) in the registry files: fix them before "
                                       "rehashing")
                return _rehash(reg)
        except ReleaseError as e:  # the lock is held by another command
            raise CommandError(str(e)) from None

    def lock_all() -> str:
        from registry.atomic import commit
        from registry.governance.release import ReleaseError, writing

        with writing(args.root) as base:
            reg = load(base)
            if reg.problems:
                raise ReleaseError("\n".join(map(str, reg.problems)))
            if ver.lock_format(reg.lock_path) != ver.LOCK_FORMAT:
                raise ReleaseError(f"{reg.rel(reg.lock_path)} is in an older format: run `formula lock --rehash` first")
            lock = ver.read_lock(reg.lock_path)
            changes: dict[Path, str | None] = {}
            added = 0
            new: list[tuple[Calculator, str, str]] = []
            for slug, c in sorted(reg.calculators.items()):
                entry = lock.setdefault(slug, {})
                for v in ver.released(c):
                    if v.version in entry:
                        continue
                    if v.status != VersionStatus.active:
                        raise ReleaseError(f"{slug}: superseded version {v.version} has no lock entry and cannot "
                                           "be reconstructed")
                    data = ver.released_content(reg, c, v)
                    entry[v.version] = ver.content_hash(data)
                    changes[ver.snapshot_path(reg.formulas_dir, slug, v.version)] = ver.snapshot_text(data)
                    new.append((c, v.version, entry[v.version]))
                    added += 1
            from registry.governance.release import sign_new_versions

            signed = sign_new_versions(reg, new, args.key, changes)
            changes[reg.lock_path] = ver.lock_text(lock)
            commit(reg.root, changes)
        return (f"locked {added} new version(s); {reg.rel(reg.lock_path)} holds "
                f"{sum(len(v) for v in lock.values())}" + signed)

    return _maintain(args.root, lock_all)


def _rehash(reg: Registry) -> int:
    """Migrate an older lock: verify every released version under its old scheme, then hash with the current one.

    Safe to re-run: on a current-format lock it changes nothing. Each active version is rehashed
    (its dependencies and cited guidelines included) and snapshotted again. A superseded version
    is rebuilt from its snapshot through the schema (it must dump back to exactly what the
    snapshot holds) and its snapshot rewritten in the current form: it keeps only what the older
    format recorded, and the dependency hashes it was released with.
    """
    fmt = ver.lock_format(reg.lock_path)
    if fmt == ver.LOCK_FORMAT:
        print(f"{reg.rel(reg.lock_path)} is already format {fmt}; nothing to rehash")
        return 0
    if fmt > ver.LOCK_FORMAT or fmt < 1:
        raise CommandError(f"{reg.rel(reg.lock_path)} is format {fmt}, which this tool does not know")
    lock = ver.read_lock(reg.lock_path)
    stale, snaps = [], {}
    for slug, c in sorted(reg.calculators.items()):
        for v in ver.released(c):
            recorded = lock.get(slug, {}).get(v.version)
            now: str | None
            if v.status == VersionStatus.active:
                now = ver.legacy_hash(reg, slug, fmt)
            else:
                snap = ver.read_snapshot(reg.formulas_dir, slug, v.version)
                now = ver.content_hash(snap) if snap is not None else None
                snaps[(slug, v.version)] = snap
            if recorded is None or now != recorded:
                stale.append(f"{slug} {v.version}")
    if stale:
        raise CommandError(f"these released versions no longer match their format-{fmt} hash, so rehashing would "
                           "bless unreleased edits; undo the edits (or release them with the old tool) first:\n  "
                           + "\n  ".join(stale))
    from registry.atomic import commit

    changes: dict[Path, str | None] = {}
    for (slug, version), snap in snaps.items():
        assert snap is not None
        migrated = ver.migrated_snapshot(reg.calculators[slug], snap, reg.units)
        if migrated is None:
            raise CommandError(f"formulas/history/{slug}/{version}.yaml does not rebuild into a calculator entry "
                               "losslessly; nothing was changed")
        lock[slug][version] = ver.content_hash(migrated)
        changes[ver.snapshot_path(reg.formulas_dir, slug, version)] = ver.snapshot_text(migrated)
    for slug, c in sorted(reg.calculators.items()):
        data = ver.released_content(reg, c, c.active)
        lock[slug][c.active.version] = ver.content_hash(data)
        changes[ver.snapshot_path(reg.formulas_dir, slug, c.active.version)] = ver.snapshot_text(data)
    changes[reg.lock_path] = ver.lock_text(lock)
    from registry.governance.decisionlog import LEGACY_FILE, resealed

    seal = resealed(reg.formulas_dir, ver.read_lock(reg.lock_path), lock)
    if seal is not None:  # the history sealed before signing names the same versions by their new hashes
        changes[reg.formulas_dir / LEGACY_FILE] = seal
    commit(reg.root, changes)  # every snapshot, the lock and the seal, or none of them
    clear_cache()
    print(f"rehashed {len(reg.calculators)} active and {len(snaps)} superseded version(s) from lock format {fmt} "
          f"into format {ver.LOCK_FORMAT}; commit {reg.rel(reg.lock_path)} and formulas/history/")
    return 0


def _maintain(root: Path | None, action: Callable[[], str]) -> int:
    """Run a registry-editing action; its refusal is `error: ...` and exit 1, never a traceback."""
    from registry.atomic import JournalRefused
    from registry.governance.release import ReleaseError
    from registry.yamlio import YamlError

    _writable(root)
    try:
        say(action())
    except (ReleaseError, YamlError, JournalRefused) as e:
        raise CommandError(str(e)) from None
    return 0


def _release_kw(args: argparse.Namespace) -> dict[str, Any]:
    return dict(part=args.part, date=args.date, by=args.by, role=args.role, draft=args.draft,
                with_dependants=args.with_dependants, key=args.key)


def cmd_release(args: argparse.Namespace) -> int:
    from registry.governance.release import release

    return _maintain(args.root, lambda: release(args.root, args.calculator, args.reason, **_release_kw(args)))


def cmd_fix(args: argparse.Namespace) -> int:
    from registry.governance.release import release

    return _maintain(args.root, lambda: release(args.root, args.calculator, args.reason, sets=args.assignments,
                                                labels=args.labels, **_release_kw(args)))


def cmd_approve(args: argparse.Namespace) -> int:
    from registry.governance.release import approve

    return _maintain(args.root, lambda: approve(args.root, args.calculator, args.version, args.by, args.role,
                                                date=args.date, reason=args.reason, key=args.key))


def cmd_reject(args: argparse.Namespace) -> int:
    from registry.governance.release import reject

    return _maintain(args.root, lambda: reject(args.root, args.calculator, args.version, args.by, args.role,
                                               reason=args.reason, key=args.key))


def cmd_pending(args: argparse.Namespace) -> int:
    from registry.governance.pending import pending, row

    reg = _load_valid(args.root)
    rows = [row(p) for p in pending(reg)]
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print("nothing pending: no draft awaits approval and no approved version awaits its date")
        return 0
    shown = [dict(r, changes="; ".join(r["changes"]) + ("" if r["scoring_changed"] else " (no change to scoring)"))
             for r in rows]
    say(render_table(shown, ["slug", "version", "state", "effective", "drafted_by", "changes", "signing", "since",
                             "reason", "base", "approved_by"],
                     drop=["signing", "approved_by", "since", "base"]))  # the reason is never dropped
    print(f"\n{len(rows)} version(s) pending")
    return 0


def cmd_activate(args: argparse.Namespace) -> int:
    from registry.governance.release import activate

    return _maintain(args.root, lambda: activate(args.root, on=args.on))


def cmd_recover(args: argparse.Namespace) -> int:
    from registry.atomic import recover, registry_lock
    from registry.loader import default_root

    base = args.root if args.root is not None else default_root()

    def run() -> str:
        with registry_lock(base / "formulas"):
            restored = recover(base)
        return ("rolled back " + ", ".join(restored)) if restored else "nothing to recover"

    return _maintain(args.root, run)


def cmd_review(args: argparse.Namespace) -> int:
    from registry.governance.release import review

    return _maintain(args.root, lambda: review(args.root, args.calculator, args.by, args.role, date=args.date,
                                    next_due=args.next_due, interval_days=args.interval_days, key=args.key))


def cmd_due(args: argparse.Namespace) -> int:
    import datetime as dt

    from registry import clock

    reg = _load_valid(args.root)
    try:
        on = dt.date.fromisoformat(args.on) if args.on else clock.today()
    except ValueError:
        raise CommandError(f"--on must be a date YYYY-MM-DD, got {args.on!r}") from None
    rows = []
    for c in sorted(reg.calculators.values(), key=lambda c: c.slug):
        v = c.active
        overdue = v.next_review is not None and v.next_review < on
        if args.overdue and not overdue:
            continue
        if v.next_review is None or v.next_review <= on:
            rows.append({"slug": c.slug, "version": v.version,
                         "last_review": v.last_review.isoformat() if v.last_review else None,
                         "next_review": v.next_review.isoformat() if v.next_review else None,
                         "overdue": overdue, "signoffs": len(v.signoffs)})
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    else:
        shown = [dict(r, last_review=r["last_review"] or "never", next_review=r["next_review"] or "-",
                      overdue="yes" if r["overdue"] else "") for r in rows]
        what = "overdue for" if args.overdue else "due for"
        print(render_table(shown, ["slug", "version", "last_review", "next_review", "overdue", "signoffs"],
                           drop=["signoffs"]) if rows
              else f"no review {what.split()[0]} on {on}")
        print(f"\n{len(rows)} of {len(reg.calculators)} calculators {what} review on {on}")
    return 0


def cmd_changelog(args: argparse.Namespace) -> int:
    from registry.governance.changelog import ChangelogError, changelog, markdown

    reg = _load_valid(args.root)
    if reg is None:
        return 1
    try:
        entries = changelog(reg, args.since)
    except ChangelogError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps([e.model_dump(mode="json") for e in entries], indent=2, ensure_ascii=False))
    elif args.format == "table":
        rows = [{"effective": e.effective, "slug": e.slug, "version": e.version, "status": e.status,
                 "why": e.reason, "released_by": e.released_by or "-"} for e in entries]
        print(render_table(rows, ["effective", "slug", "version", "status", "why", "released_by"],
                           drop=["status", "released_by"]) if rows else "No released version in this range.")
    else:
        say(markdown(entries))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from registry.governance.signatures import BEFORE_SIGNING, INVALID, report

    reg = load(args.root)
    status, out = report(reg)
    if args.format == "json":
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return status
    for p in out["problems"]:
        say(printable(p))
    n = out["active_versions"]
    if status == INVALID:
        say(printable(f"verify: FAILED: {len(out['problems'])} problem(s); {out['invalid']} of {n} active versions do "
                      "not rest on valid signed decisions under the policy"), file=sys.stderr)
    elif status == BEFORE_SIGNING:
        say(printable(f"verify: not verified: {out['recorded_before_signing']} of {n} active versions rest on "
                      f"decisions recorded before signing (no signature proves who approved them); "
                      f"{out['verified']} verified"), file=sys.stderr)
    else:
        print(f"verify: OK: all {n} active versions reached through valid signed decisions under the policy")
    return status


def read_jsonl(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """Rows of a JSON-lines file with their line numbers, and one problem per unreadable line (its own number).

    Only '\\n' ends a line (as the runner writes them); blank lines are skipped and not counted.
    """
    rows: list[tuple[int, dict[str, Any]]] = []
    bad: list[str] = []
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                bad.append(f"line {n}: not UTF-8 text")
                continue
            if not line.strip():
                continue
            try:
                row = jsontext.loads(line)
            except ValueError as e:
                bad.append(f"line {n}: not JSON ({e})")
                continue
            if not isinstance(row, dict):
                bad.append(f"line {n}: not a JSON object")
                continue
            rows.append((n, row))
    return rows, bad


def cmd_stale(args: argparse.Namespace) -> int:
    reg = _load_valid(args.root)
    if args.runs is not None:
        return _stale_runs(reg, args)
    if args.results is None:
        raise CommandError("give RESULTS.jsonl (or a run folder), or --runs DIR for every run below DIR")
    path: Path = args.results
    if path.is_dir():  # a run folder, as `formula score` and `formula report` take it
        path = path / "results.jsonl"
        if not path.is_file():
            raise CommandError(f"{args.results} is a folder without results.jsonl; give a run folder or a "
                               "results.jsonl file (or --runs DIR for every run below a folder)")
    out, problems, bad = _stale_file(reg, path, args.format)
    if args.format == "json":
        print(json.dumps(out, indent=2))
    if bad:
        raise CommandError(printable(f"{len(bad)} line(s) of {path} are not JSON lines (first: {bad[0]})"))
    if args.check and (out or problems):
        print(f"stale --check: {len(out)} stale case(s), {len(problems)} unchecked line(s)", file=sys.stderr)
        return 1
    return 0


def _stale_file(reg: Registry, path: Path, fmt: str) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """One results file: its stale rows, the lines that could not be checked and those that are not JSON lines
    (printed as a table unless `fmt` is json)."""
    from registry.versioned import stale

    try:
        rows, bad = read_jsonl(path)
    except OSError as e:
        raise CommandError(f"cannot read {path}: {e.strerror}") from None
    out, problems = stale(reg, rows)
    for p in bad + problems:
        say(printable(f"{path}: {p}"), file=sys.stderr)
    checked = len(rows) - len(problems)
    if fmt != "json":
        if out:
            say(render_table(out, ["line", "slug", "recorded_version", "current_version", "why", "row_number",
                                   "seed", "arm"], drop=["row_number", "seed", "arm"]))
        skipped = len(bad) + len(problems)
        print(f"\n{len(out)} of {checked} case(s) stale against the registry now"
              + (f"; {skipped} line(s) could not be checked (listed above)" if skipped else ""))
    return out, problems, bad


def _stale_runs(reg: Registry, args: argparse.Namespace) -> int:
    """`stale --runs DIR`: every results.jsonl below DIR (a registry repository's results/, for pre-commit)."""
    folder: Path = args.runs
    if args.results is not None:
        raise CommandError("give either RESULTS or --runs DIR, not both")
    files = sorted(p for p in folder.rglob("results.jsonl") if p.is_file()) if folder.is_dir() else []
    if not files:
        print(f"no stored run below {folder}: nothing can be stale")
        return 0
    found: list[dict[str, Any]] = []
    unchecked, unreadable = 0, []
    for path in files:
        if args.format != "json":
            say(printable(f"{path}:"))
        out, problems, bad = _stale_file(reg, path, args.format)
        found += [dict(r, results=str(path)) for r in out]
        unchecked += len(problems)
        unreadable += [f"{path}: {b}" for b in bad]
    if args.format == "json":
        print(json.dumps(found, indent=2))
    if unreadable:
        raise CommandError(printable(f"{len(unreadable)} line(s) are not JSON lines (first: {unreadable[0]})"))
    if args.check and (found or unchecked):
        print(f"stale --check: {len(found)} stale case(s) in {len({r['results'] for r in found})} of {len(files)} "
              f"run(s), {unchecked} unchecked line(s)", file=sys.stderr)
        return 1
    return 0
