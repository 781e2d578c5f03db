"""What a review must not take from the change itself: its rules of trust, its released history, its own file list.

A pull request may edit the policy, the allowed signers, the lock and the seal as well as the calculators, so
what the head says of itself proves nothing. These checks judge the head by the base instead, and each finding
is a blocking warning of `formula review-pr` (exit 1), even when the head validates on its own terms:

- `base_rules`: every decision the change adds is checked again under the base's policy (people, roles,
  approver roles, four eyes, counts, whether signatures are required) and the base's allowed_signers (keys and
  their validity windows); one that counts only under the head's rules is named.
- `rewritten`: a version released on the base whose content hash differs on the head (or is gone), whatever
  the head's own lock says: a released version never changes.
- `seal_moved`: any change to the seal of the history before signing (its entries, or the digest and date the
  lock fixes it by).
- `unread`: a path the change touches that the review did not read (outside the registry folders, say).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from registry.model import Registry


def base_rules(base: Registry, head: Registry, slugs: Iterable[str], new_keys: set[str]) -> list[str]:
    """Decisions of the head that count only under the head's own rules (a key the change adds is said elsewhere:
    `new_keys`)."""
    from registry.trust.decisionlog import trust_of

    tb, th = trust_of(base), trust_of(head)
    judge = dataclasses.replace(tb, legacy=th.legacy, seal=th.seal, sealed=th.sealed)  # the seal is `seal_moved`'s
    out: list[str] = []
    for slug in sorted(slugs):
        c = head.calculators.get(slug)
        if c is not None:
            out += _one(base, head, slug, (tb, th, judge), new_keys)
    return out


def _one(base: Registry, head: Registry, slug: str, trusts: tuple[Any, Any, Any], new_keys: set[str]) -> list[str]:
    from registry.trust.decisionlog import audit, draft_state

    tb, th, judge = trusts
    try:
        own, under_base = audit(head, head.calculators[slug], th), audit(head, head.calculators[slug], judge)
        before = audit(base, base.calculators[slug], tb).problems if slug in base.calculators else []
    except (ValueError, StopIteration, LookupError):
        return []
    out, said = [], set()
    for mine, theirs in zip(own.checked, under_base.checked):
        d = theirs.entry.d
        said.add((theirs.entry.field(), theirs.why))
        if mine.why is None and theirs.why is not None and mine.fingerprint not in new_keys:
            out.append(f"{slug} {theirs.entry.version}: the {d.decision} by {d.principal} on {d.date} counts only "
                       f"under this change's own rules; under the base's it does not: {theirs.why}")
    known = {(p.field, p.problem) for p in own.problems} | {(p.field, p.problem) for p in before} | said
    keyed = {x.entry.version for x in own.checked if x.fingerprint in new_keys}  # said with the new key already
    out += [f"{slug}: {p.field}: under the base's rules, {p.problem} (the change loosens the rules it is judged by)"
            for p in under_base.problems if (p.field, p.problem) not in known
            and not (p.field.startswith("versions ") and p.field.split()[1] in keyed)]
    if any(x.entry.in_draft for x in own.checked):
        counted, need, _ = draft_state(th, own, slug)
        counted_b, need_b, _ = draft_state(judge, under_base, slug)
        if len(counted) >= need and len(counted_b) < need_b:
            out.append(f"{slug}: its draft is approved only under this change's own rules: {len(counted_b)} of "
                       f"{need_b} approvals count under the base's ({', '.join(counted_b) or 'none'})")
    return out


def rewritten(base: Registry, head: Registry) -> list[str]:
    """Released versions of the base whose content hash the head changes or drops (lock and content both)."""
    from registry import versions as ver

    try:
        a, b = ver.read_lock(base.lock_path), ver.read_lock(head.lock_path)
        fa, fb = ver.lock_format(base.lock_path), ver.lock_format(head.lock_path)
    except (ValueError, OSError):
        return []  # an unreadable lock is a validation problem of its side
    if fa != fb:
        return [f"{head.rel(head.lock_path)}: the change rehashes the lock (format {fa} to {fb}): every released "
                "version's hash moves, so none can be compared with the base; rehash in a change of its own"]
    out = []
    for slug, c in sorted(base.calculators.items()):
        for v in ver.released(c):
            was = a.get(slug, {}).get(v.version)
            if was is None:
                continue  # the base's own lock rule reports it
            now = _hashes_on(head, slug, v.version, b.get(slug, {}).get(v.version))
            if now != {was}:
                shown = ", ".join(sorted(h[:19] for h in now if h)) or "none"
                out.append(f"{slug} {v.version}: released on the base with content {was[:19]}, but the head "
                           f"{'drops it' if not now else f'has {shown}'}: a released version never changes, "
                           "whatever the head's lock says; release a new version instead")
    return out


def _hashes_on(reg: Registry, slug: str, version: str, locked: str | None) -> set[str]:
    """Every content hash the head gives a released version: its lock entry and (active) its live content's. Its
    snapshot is tied to that lock entry by the head's own validation (R-SNAPSHOT), whose problems block already.
    Empty when the head no longer has it released."""
    from registry import versions as ver
    from registry.schema import VersionStatus

    c = reg.calculators.get(slug)
    v = next((x for x in ver.released(c) if x.version == version), None) if c is not None else None
    if c is None or v is None:
        return {locked} if locked else set()
    out = {locked or "none"}
    if v.status == VersionStatus.active:
        try:
            out.add(ver.active_hash(reg, slug))
        except (ValueError, LookupError, StopIteration, TypeError):
            out.add("unreadable")
    return out


def seal_moved(base: Registry, head: Registry) -> list[str]:
    """Any change to the seal of the history before signing: its entries, or what the lock fixes of it."""
    from registry.trust.decisionlog import LEGACY_FILE, trust_of

    tb, th = trust_of(base), trust_of(head)
    out = []
    if tb.legacy != th.legacy or tb.sealed != th.sealed:
        added = sorted(f"{s} {v}" for s, vs in th.legacy.items() for v in vs if v not in tb.legacy.get(s, {}))
        what = f" (it adds {', '.join(added[:5])}{' and more' if len(added) > 5 else ''})" if added else ""
        out.append(f"formulas/{LEGACY_FILE.as_posix()}: the change edits the seal of the history before signing"
                   f"{what}: the seal is closed; a version joins the registry through signed decisions")
    if tb.seal != th.seal:
        out.append(f"{head.rel(head.lock_path)}: the change moves the seal's record (sealed_before_signing: "
                   f"{tb.seal} to {th.seal}): the seal's digest and date never change")
    return out


def unread(touched: Iterable[Any]) -> list[str]:
    """Each path the change touches that the review did not read: what it says cannot be judged here."""
    return [f"{t.path}: the change {_verb(t.status)} this path, which the review did not read (only the registry "
            "folders formulas/, guidelines/ and results/ are reviewed): move it to a change of its own"
            for t in touched if not t.read]


def _verb(status: str) -> str:
    return {"A": "adds", "D": "deletes", "R": "renames", "C": "copies", "T": "changes the type of"}.get(status,
                                                                                                    "modifies")
