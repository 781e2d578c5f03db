"""Sub-commands of `formula` about who decided what: init, people, history, release, fix, approve, reject, activate,
pending, review, due, changelog, verify."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from registry import versions as ver
from registry.cliutil import (
    CommandError,
    add_format,
    add_key,
    add_root,
    find_calculator,
    load_valid,
    maintain,
)
from registry.counted_nouns import counted
from registry.loader import Registry, load
from registry.schema import Calculator
from registry.tables import render_table
from registry.terminal import printable, say, tell


def register(sub: argparse._SubParsersAction) -> None:
    _register_init(sub)
    _register_people(sub)
    _register_releasing(sub)
    _register_deciding(sub)
    _register_reviewing(sub)


def _register_init(sub: argparse._SubParsersAction) -> None:
    """init: a committee's own registry"""
    p = sub.add_parser("init",
                       description="Make DIR (new or empty) a registry of its own: the shipped calculators with their "
                       "history recorded before signing, a policy that requires signatures with the first person's "
                       "key and roles, a git repository (unless DIR is inside one), a .pre-commit-config.yaml "
                       "running formula's hooks and a CODEOWNERS line for formulas/policy/. Every argument is "
                       "checked before anything is written; DIR appears whole or not at all.")
    p.add_argument("dir", metavar="DIR", type=Path, help="the new registry's folder (new, or empty)")
    p.add_argument("--key", type=Path, required=True, metavar="PATH.pub",
                   help="the first person's OpenSSH public key (ssh-keygen -t ed25519 writes it beside the "
                   "private key); it goes into formulas/policy/allowed_signers")
    p.add_argument("--principal", help="their identity in allowed_signers, e.g. ana@example.org (default: the "
                   "key's comment, as ssh-keygen -C set it)")
    p.add_argument("--name", required=True, help="their name as decisions show it, e.g. 'Dr A. Chair'")
    p.add_argument("--role", dest="roles", action="append", required=True, metavar="ROLE",
                   help="a role they act in, e.g. chair (repeat for several; the first is their default)")
    p.add_argument("--owner", dest="owners", action="append", default=[], metavar="OWNER",
                   help="who must review changes to formulas/policy/ (CODEOWNERS: @user, @org/team or an e-mail; "
                   "repeatable; default: the principal when it is an e-mail address)")
    p.add_argument("--no-git", action="store_true", help="do not run `git init`")
    p.set_defaults(handler=cmd_init)


def _register_people(sub: argparse._SubParsersAction) -> None:
    """people add|rotate|retire: allowed_signers and the policy's people:, edited together"""
    p = sub.add_parser("people",
                       description="Add a person, rotate their key or retire them: formulas/policy/allowed_signers "
                       "and people: of formulas/policy/governance.yaml are edited together (its comments and order "
                       "kept), checked as `validate` checks them, and written as one change under the registry "
                       "lock. Every argument is checked before anything is written.")
    psub = p.add_subparsers(dest="people", metavar="ACTION")
    psub.required = True
    a = psub.add_parser("add", help="add a person: their key, name and roles",
                        description="Add a person: their public key to allowed_signers, their name and roles to "
                        "people:. A role must be one the committee knows (--role) or be declared new (--new-role).")
    a.add_argument("principal", metavar="PRINCIPAL", help="their identity, e.g. ana@example.org or chair")
    a.add_argument("--key", type=Path, required=True, metavar="PATH.pub", help="their OpenSSH public key")
    a.add_argument("--name", required=True, help="their name as decisions show it, e.g. 'Dr A. Chair'")
    a.add_argument("--role", dest="roles", action="append", default=[], metavar="ROLE",
                   help="a role the committee knows (repeatable; the first is their default)")
    a.add_argument("--new-role", dest="new_roles", action="append", default=[], metavar="ROLE",
                   help="a role no one holds yet (repeatable)")
    add_root(a)
    a.set_defaults(handler=cmd_people_add)
    r = psub.add_parser("rotate", help="give a person a new key; the old one stays valid up to --on",
                        description="Give a person a new key, valid from --on (default today); their old key stays "
                        "valid up to and including that day, so the decisions it signed stay valid.")
    r.add_argument("principal", metavar="PRINCIPAL", help="the person whose key changes")
    r.add_argument("--key", type=Path, required=True, metavar="PATH.pub", help="their new OpenSSH public key")
    r.add_argument("--on", metavar="YYYY-MM-DD", help="the first day of the new key (today or later; default today)")
    add_root(r)
    r.set_defaults(handler=cmd_people_rotate)
    t = psub.add_parser("retire", help="close a person's keys after --on; their past decisions stay verified",
                        description="Retire a person: their keys stay valid up to and including --on (default "
                        "today) and not after; their name and roles are kept, so their decisions stay verified.")
    t.add_argument("principal", metavar="PRINCIPAL", help="the person who leaves the committee")
    t.add_argument("--on", metavar="YYYY-MM-DD", help="their last day (today or later; default today)")
    add_root(t)
    t.set_defaults(handler=cmd_people_retire)


def _register_releasing(sub: argparse._SubParsersAction) -> None:
    """history, release, fix: versions and how a new one is made"""
    p = sub.add_parser("history")
    add_root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    add_format(p)
    p.set_defaults(handler=cmd_history)

    p = sub.add_parser("release",
                       description="After editing a calculator's constants, tables, inputs or its active text, "
                       "make the edit a new active version; the previous one becomes superseded. Refuses while "
                       "other calculators have unreleased edits (naming them).")
    add_root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    _release_args(p)
    p.set_defaults(handler=cmd_release)

    p = sub.add_parser("fix",
                       description="Set one or more constants (each --set applied together, checked against the "
                       "constant's allowed range first) and release the result; with --draft it waits for "
                       "`formula approve`.")
    add_root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    p.add_argument("--set", dest="assignments", action="append", required=True, metavar="CONSTANT=VALUE",
                   help="repeat for several constants")
    p.add_argument("--label", dest="labels", action="append", default=[], metavar="CONSTANT=NAME",
                   help="the name the new value goes by in texts (e.g. 'Katz factor'); required when the constant "
                   "set carries a label")
    p.add_argument("--name", dest="formula_name", default=None, metavar="TEXT",
                   help="the formula's new name (formula.name), when it names the old label (e.g. 'Katz sodium "
                   "correction for hyperglycemia'): the fix warns when a name or text keeps a replaced label")
    p.add_argument("--publication", default=None, metavar="FILE",
                   help="a YAML file with the formula's new cited publication (authors, title, journal, year; doi "
                   "where certain), when a rename leaves the old citation behind: the fix warns when it does")
    _release_args(p)
    p.set_defaults(handler=cmd_fix)


def _register_deciding(sub: argparse._SubParsersAction) -> None:
    """approve, reject, pending, activate: what a draft becomes"""
    p = sub.add_parser("approve",
                       description="Sign an approval of a waiting draft; once its approvals satisfy the policy "
                       "(four eyes, k of n) it becomes the active version now, or, when its effective date lies "
                       "ahead, on that day (`formula activate`). Naming the active version instead adds an "
                       "approval to it (to meet a policy made stricter after its release).")
    add_root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    p.add_argument("version", help="the draft's version, e.g. 1.1.0")
    add_key(p)
    p.add_argument("--by", help="the approver's principal (optional: it must be the key's)")
    p.add_argument("--role", help="which of the approver's roles in governance.yaml (default: their first)")
    p.add_argument("--reason", required=True, help="why the change is approved (recorded with the approval)")
    p.add_argument("--date", help="approval date YYYY-MM-DD, not in the future (default: today)")
    p.set_defaults(handler=cmd_approve)

    p = sub.add_parser("reject",
                       description="Remove a draft that will not be approved; who rejected it, their role, the "
                       "date and the reason are kept in formulas/drafts/rejected/<slug>.yaml.")
    add_root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    p.add_argument("version", help="the draft's version")
    add_key(p)
    p.add_argument("--by", help="the principal who rejects (optional: it must be the key's)")
    p.add_argument("--role", help="which of their roles in governance.yaml (default: their first)")
    p.add_argument("--reason", required=True, help="why the draft is rejected")
    p.set_defaults(handler=cmd_reject)

    p = sub.add_parser("pending",
                       description="Every draft waiting for approval and every approved version waiting for its "
                       "effective date: who drafted it, since when, and what it changes.")
    add_root(p)
    add_format(p)
    p.set_defaults(handler=cmd_pending)

    p = sub.add_parser("activate")
    add_root(p)
    p.add_argument("--on", help="date YYYY-MM-DD, not in the future (default: today)")
    p.set_defaults(handler=cmd_activate)


def _register_reviewing(sub: argparse._SubParsersAction) -> None:
    """review, due, changelog, verify: what was decided, and when it is due"""
    p = sub.add_parser("review",
                       description="Sign off the active version after a review: appends who, role and date, "
                       "sets the last review and the next review due (default: one year later). Review data "
                       "is governance metadata, so no new version is made. The date may not lie in the future, "
                       "before the version took effect, or before the last review.")
    add_root(p)
    p.add_argument("calculator", help="slug or benchmark id")
    add_key(p)
    p.add_argument("--by", help="the reviewer's principal (optional: it must be the key's)")
    p.add_argument("--role", help="which of the reviewer's roles in governance.yaml (default: their first)")
    p.add_argument("--date", help="review date YYYY-MM-DD (default: today)")
    p.add_argument("--next-due", help="next review due YYYY-MM-DD (default: --interval-days after the review)")
    p.add_argument("--interval-days", type=int, default=365, help="days from this review to the next (1 to 3653; "
                   "default 365)")
    p.set_defaults(handler=cmd_review)

    p = sub.add_parser("due", description="List calculators whose active "
                       "version has never been reviewed or whose next review is due on or before --on. JSON gives "
                       "null for a review that never happened.")
    add_root(p)
    p.add_argument("--on", help="date YYYY-MM-DD (default: today)")
    p.add_argument("--overdue", action="store_true", help="only those whose next review date has passed")
    add_format(p)
    p.set_defaults(handler=cmd_due)

    p = sub.add_parser("changelog",
                       description="Released versions, newest first, with who released and approved them, the "
                       "reason, what changed and the review sign-offs.")
    add_root(p)
    p.add_argument("--since", metavar="DATE|REF", help="versions effective on or after a date, or released since a git ref")
    p.add_argument("--format", choices=["markdown", "table", "json"], default="markdown",
                   help="markdown (to publish), table (one line per version, fits the terminal) or json")
    p.set_defaults(handler=cmd_changelog)

    p = sub.add_parser("verify",
                       description="Checks every signature, the decision chain and the policy. Exit 0 only when "
                       "every active version rests on valid signed decisions that satisfy the policy; 3 when none "
                       "is invalid but some rest on history recorded before signing (the shipped registry); 1 when "
                       "a decision is invalid.")
    add_root(p)
    p.add_argument("--format", choices=["table", "json"], default="table",
                   help="table (one line per active version) or json (every active version with its state and approvers)")
    p.set_defaults(handler=cmd_verify)


def cmd_init(args: argparse.Namespace) -> int:
    from registry.governance.init import InitError, build, plan

    try:
        lines = build(plan(args.dir, args.key, args.principal, args.name, args.roles, args.owners,
                           use_git=not args.no_git))
    except InitError as e:
        raise CommandError(str(e)) from None
    for line in lines:
        tell(printable(line))
    return 0


def cmd_people_add(args: argparse.Namespace) -> int:
    from registry.governance import people as pp

    def action() -> str:
        key, name = pp.read_key(args.key), pp.check_name(args.name)
        pp.check_principal(args.principal)
        return pp.apply(args.root, lambda cur: pp.plan_add(cur, args.principal, key, name, args.roles, args.new_roles))

    return maintain(args.root, action)


def cmd_people_rotate(args: argparse.Namespace) -> int:
    from registry.governance import people as pp

    def action() -> str:
        key, day = pp.read_key(args.key), pp.check_day(args.on, "--on")
        pp.check_principal(args.principal)
        return pp.apply(args.root, lambda cur: pp.plan_rotate(cur, args.principal, key, day))

    return maintain(args.root, action)


def cmd_people_retire(args: argparse.Namespace) -> int:
    from registry.governance import people as pp

    def action() -> str:
        day = pp.check_day(args.on, "--on")
        pp.check_principal(args.principal)
        return pp.apply(args.root, lambda cur: pp.plan_retire(cur, args.principal, day))

    return maintain(args.root, action)


def cmd_history(args: argparse.Namespace) -> int:
    reg = load_valid(args.root)
    c = find_calculator(reg, args.calculator)
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
                         drop=["next_review", "hash"],  # who released and approved it before decoration (else records)
                         keep=["status", "effective", "changelog", "signing", "released_by", "approved"]))
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
            "changelog": v.changelog, "decisions": [d.plain() for d in decided]}


def _short_hash(h: str | None) -> str:
    """'sha256:' and 12 hex digits: enough to tell versions apart on screen (JSON keeps the whole hash)."""
    if not h:
        return "-"
    algo, _, digest = h.partition(":")
    return f"{algo}:{digest[:12]}" if digest else h[:12]


def _release_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--reason", required=True, help="what changed and why (the changelog line)")
    p.add_argument("--part", choices=["major", "minor", "patch"], default="minor", help="which part to bump")
    p.add_argument("--date", help="effective date YYYY-MM-DD (default: today); a future date keeps the current "
                   "version active until then")
    add_key(p)
    p.add_argument("--by", help="the author's principal (optional: it must be the key's)")
    p.add_argument("--role", help="which of the author's roles in governance.yaml (default: their first)")
    p.add_argument("--draft", action="store_true", help="make a draft that becomes active only through `formula approve`")
    p.add_argument("--with-dependants", action="store_true",
                   help="also release every calculator that depends on this one (e.g. Cockcroft-Gault after ideal "
                   "body weight): a version's content covers its dependencies'")


def _release_request(args: argparse.Namespace, **fix: Any) -> Any:
    """The typed request of `formula release` or `fix` (registry.governance.release.ReleaseRequest)."""
    from registry.governance.release import ReleaseRequest

    return ReleaseRequest(calculator=args.calculator, reason=args.reason, part=args.part, date=args.date, by=args.by,
                          role=args.role, draft=args.draft, with_dependants=args.with_dependants,
                          key=None if args.key is None else str(args.key), **fix)


def cmd_release(args: argparse.Namespace) -> int:
    from registry.governance.release import release

    return maintain(args.root, lambda: release(args.root, _release_request(args)))


def cmd_fix(args: argparse.Namespace) -> int:
    from registry.governance.release import release

    ask = _release_request(args, sets=args.assignments or [], labels=args.labels or [], name=args.formula_name,
                           publication=None if args.publication is None else str(args.publication))
    return maintain(args.root, lambda: release(args.root, ask))


def cmd_approve(args: argparse.Namespace) -> int:
    from registry.governance.approving import approve

    return maintain(args.root, lambda: approve(args.root, args.calculator, args.version, args.by, args.role,
                                                date=args.date, reason=args.reason, key=args.key))


def cmd_reject(args: argparse.Namespace) -> int:
    from registry.governance.rejecting import reject

    return maintain(args.root, lambda: reject(args.root, args.calculator, args.version, args.by, args.role,
                                               reason=args.reason, key=args.key))


def cmd_pending(args: argparse.Namespace) -> int:
    from registry.governance.pending import pending, row

    reg = load_valid(args.root)
    rows = [row(p) for p in pending(reg)]
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print("nothing pending: no draft awaits approval and no approved version awaits its date")
        return 0
    shown = [dict(r, changes="; ".join(r["changes"]) + ("" if r["scoring_changed"] else " (no change to scoring)"))
             for r in rows]
    say(render_table(shown, ["slug", "version", "state", "effective", "drafted_by", "changes", "approved_by", "reason",
                             "signing", "since", "base"],
                     drop=["signing", "since", "base"],  # decoration goes first; who and what never (records)
                     keep=["version", "state", "effective", "drafted_by", "changes", "approved_by", "reason"]))
    print(f"\n{counted(len(rows), 'version')} pending")
    return 0


def cmd_activate(args: argparse.Namespace) -> int:
    from registry.governance.approving import activate

    return maintain(args.root, lambda: activate(args.root, on=args.on))


def cmd_review(args: argparse.Namespace) -> int:
    from registry.governance.reviewing import review

    return maintain(args.root, lambda: review(args.root, args.calculator, args.by, args.role, date=args.date,
                                    next_due=args.next_due, interval_days=args.interval_days, key=args.key))


def cmd_due(args: argparse.Namespace) -> int:
    import datetime as dt

    from registry import clock

    reg = load_valid(args.root)
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

    reg = load_valid(args.root)
    if reg is None:
        return 1
    try:
        entries = changelog(reg, args.since)
    except ChangelogError as e:
        tell(f"error: {e}", file=sys.stderr)
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


def safety_line(s: dict[str, Any]) -> str:
    """The safety case's sign-off in one line of `formula verify`."""
    who = f"{s['name'] or s['by']} ({s['role']}) on {s['date']}"
    if s["state"] == "stale":
        changed = s["stale_for"] or ["the hazard log"]
        return f"safety case: signed by {who}, STALE for " + ", ".join(changed) + " (`formula safety case`)"
    if s["state"] == "invalid":
        return f"safety case: sign-off does not verify: {s['why']}"
    return f"safety case: signed by {who}, verified; covers every active version"


def cmd_verify(args: argparse.Namespace) -> int:
    """The verdict (and which registry it is of) on stdout, each problem behind it on stderr; the exit status
    says the same (0 verified, 3 history before signing, 1 invalid)."""
    from registry.cliutil import registry_line
    from registry.governance.signatures import BEFORE_SIGNING, INVALID, report

    reg = load(args.root)
    status, out = report(reg)
    if args.format == "json":
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return status
    say(registry_line(args.root))
    for p in out["problems"]:
        say(printable(p), file=sys.stderr)
    n = out["active_versions"]
    if status == INVALID:
        say(printable(f"verify: FAILED: {counted(len(out['problems']), 'problem')}; {out['invalid']} of {n} active versions do "
                      "not rest on valid signed decisions under the policy"))
    elif status == BEFORE_SIGNING:
        say(printable(f"verify: not verified: {out['recorded_before_signing']} of {n} active versions rest on "
                      f"decisions recorded before signing (no signature proves who approved them); "
                      f"{out['verified']} verified"))
    else:
        print(f"verify: OK: all {n} active versions reached through valid signed decisions under the policy")
    if out["safety"]["state"] != "none":  # a registry whose case nobody signed says nothing more
        say(printable(safety_line(out["safety"])))
    return status
