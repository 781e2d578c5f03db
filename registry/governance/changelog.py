"""The registry-wide changelog: every released version, with who, why, what changed and sign-offs.

`changelog(reg, since)` is the one source for `formula changelog` and the site's changelog page.
"""
from __future__ import annotations

import datetime as dt
import subprocess
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from registry import jsontext
from registry.loader import Registry
from registry.schema import SignOff, VersionStatus, semver_key
from registry.versioned import content_changes, version_content


class ChangelogEntry(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built when first used, not at import

    slug: str
    name: str
    version: str
    status: str
    effective: dt.date
    released_by: str | None = None
    role: str | None = None
    reason: str
    changes: list[str]
    signoffs: list[SignOff]
    approved_by: str | None = None
    approved_role: str | None = None
    approved: dt.date | None = None
    approval_reason: str | None = None
    signing: str = Field(default="not signed", description="verified (every decision's signature holds), recorded "
                         "before signing, invalid (a signature fails: `formula verify`), or not signed (typed)")
    fingerprints: list[str] = Field(default_factory=list, description="the keys of the verified decisions")
    bulk: bool = Field(default=False, description="one of several versions released together for one reason "
                       "(a migration): listed after the substantive changes of its date, grouped")


class ChangelogGroup(BaseModel):
    """What the changelog shows as one entry: a substantive version, or a bulk migration's versions together."""

    model_config = ConfigDict(defer_build=True)  # built when first used, not at import

    effective: dt.date
    reason: str
    entries: list[ChangelogEntry]

    @property
    def bulk(self) -> bool:
        return len(self.entries) > 1


class ChangelogError(Exception):
    pass


def _locked_at(reg: Registry, ref: str) -> dict[str, dict[str, str]]:
    """The lock file as it was at a git ref: the versions released by then."""
    rel = reg.rel(reg.lock_path)
    try:
        blob = subprocess.run(["git", "show", f"{ref}:{rel}"], cwd=reg.root, capture_output=True, text=True,
                              check=True).stdout
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        msg = (getattr(e, "stderr", "") or str(e)).strip()
        raise ChangelogError(f"--since {ref!r} is neither a date YYYY-MM-DD nor a git ref holding {rel}: {msg}") from None
    try:
        if len(blob) > jsontext.LOCK_MAX:
            raise jsontext.JsonError(f"over {jsontext.LOCK_MAX:,} bytes, more than a lock holds")
        data = jsontext.loads(blob, strict=True)
    except jsontext.JsonError as e:
        raise ChangelogError(f"{rel} at {ref!r} is not JSON ({e})") from None
    calcs = data.get("calculators") if isinstance(data, dict) else None
    if not isinstance(calcs, dict):
        raise ChangelogError(f"{rel} at {ref!r} is not a lock file (no 'calculators' mapping)")
    return calcs


def changelog(reg: Registry, since: dt.date | str | None = None) -> list[ChangelogEntry]:
    """Released versions (active, superseded, retired), newest first.

    `since` is a date (versions effective on or after it) or a git ref (versions not in that
    commit's REGISTRY.lock).
    """
    before: dict[str, dict[str, str]] | None = None
    day: dt.date | None = None
    if isinstance(since, dt.date):
        day = since
    elif isinstance(since, str):
        try:
            day = dt.date.fromisoformat(since)
        except ValueError:
            before = _locked_at(reg, since)
    from registry.governance import signatures as sg

    trust = sg.trust_of(reg)
    entries: list[ChangelogEntry] = []
    for slug, c in reg.calculators.items():
        prev: dict[str, Any] | None = None
        views = sg.views(reg, c, trust)
        for v in c.versions:
            if v.status == VersionStatus.draft:
                continue
            data = version_content(reg, c, v.version)
            changes = content_changes(prev, data) if data is not None else ["content not recorded"]
            prev = data if data is not None else prev
            if day is not None and v.effective < day:
                continue
            if before is not None and v.version in before.get(slug, {}):
                continue
            signed = [x for x in views if x.version == v.version and x.principal is not None]
            mine = [x for x in views if x.version == v.version]
            if signed or any(x.state == "invalid" for x in mine):
                entries.append(_signed_entry(c.name, v, changes, mine))
                continue
            entries.append(ChangelogEntry(
                slug=slug, name=c.name, version=v.version, status=v.status.value, effective=v.effective,
                released_by=v.released_by.who if v.released_by else None,
                role=v.released_by.role if v.released_by else None, reason=v.changelog, changes=changes,
                signoffs=list(v.signoffs), approved_by=v.approved_by.who if v.approved_by else None,
                approved_role=v.approved_by.role if v.approved_by else None,
                approved=v.approved if v.approved_by else None,  # a date nobody approved is no approval
                approval_reason=v.approved_by.reason if v.approved_by else None,
                signing="recorded before signing" if any(x.state == "recorded_before_signing" for x in mine)
                else "not signed"))
    return _ordered(entries)


def _signed_entry(name: str, v: Any, changes: list[str], views: list[Any]) -> ChangelogEntry:
    """A version whose decisions are signed: names, roles and reasons only from verified decisions (people:)."""
    ok = [x for x in views if x.state == "verified"]
    author = next((x for x in ok if x.decision in ("release", "draft")), None)
    approvals = [x for x in ok if x.decision == "approve"]
    reviews = [SignOff(who=x.name or x.principal or "", role=x.role or "", date=dt.date.fromisoformat(x.date))
               for x in ok if x.decision == "review"]
    invalid = any(x.state == "invalid" for x in views)
    return ChangelogEntry(
        slug=views[0].slug, name=name, version=v.version, status=v.status.value, effective=v.effective,
        released_by=author.name if author else None, role=author.role if author else None, reason=v.changelog,
        changes=changes, signoffs=reviews,
        approved_by=", ".join(x.name or x.principal or "" for x in approvals) or None,
        approved_role=", ".join(x.role or "" for x in approvals) or None,
        approved=dt.date.fromisoformat(approvals[-1].date) if approvals else None,
        approval_reason="; ".join(x.reason for x in approvals if x.reason) or None,
        signing="invalid" if invalid else "verified", fingerprints=[x.fingerprint for x in ok if x.fingerprint])


BULK_MIN = 3  # this many versions released on one day for one reason are a migration, shown as one entry


def _ordered(entries: list[ChangelogEntry]) -> list[ChangelogEntry]:
    """Newest date first; within a date, substantive changes (by slug) before bulk migrations."""
    counts: dict[tuple[dt.date, str], int] = {}
    for e in entries:
        counts[(e.effective, e.reason)] = counts.get((e.effective, e.reason), 0) + 1
    for e in entries:
        e.bulk = counts[(e.effective, e.reason)] >= BULK_MIN
    entries.sort(key=lambda e: (-e.effective.toordinal(), e.bulk, e.reason if e.bulk else "", e.slug,
                                tuple(-k for k in semver_key(e.version))))
    return entries


def grouped(entries: list[ChangelogEntry]) -> list[ChangelogGroup]:
    """The entries as the changelog shows them: each bulk migration folded into one group."""
    out: list[ChangelogGroup] = []
    for e in entries:
        last = out[-1] if out else None
        if e.bulk and last is not None and last.entries[0].bulk and (last.effective, last.reason) == (e.effective,
                                                                                                    e.reason):
            last.entries.append(e)
        else:
            out.append(ChangelogGroup(effective=e.effective, reason=e.reason, entries=[e]))
    return out


def people(e: ChangelogEntry) -> list[str]:
    """Who released and approved a version, only as far as it is recorded, and whether signatures prove it."""
    out = [{"verified": "Signed and verified (keys " + ", ".join(e.fingerprints) + ").",
            "invalid": "A signature of this version fails verification (`formula verify`).",
            "recorded before signing": "Recorded before signing (not verified).",
            }.get(e.signing, "Not signed (typed, not verified).")]
    if e.released_by:
        out.append(f"Released by {e.released_by}" + (f" ({e.role})" if e.role else "") + ".")
    if e.approved_by:
        why = f": {e.approval_reason}" if e.approval_reason else ""
        if e.signing == "verified":  # the words the site's version history uses for a signed approval
            out.append(f"Approved {e.approved} ({e.approved_by}, {e.approved_role}), verified{why}.")
        else:
            out.append(f"Approved by {e.approved_by} ({e.approved_role}) on {e.approved}{why}.")
    return out


def markdown(entries: list[ChangelogEntry]) -> str:
    if not entries:
        return "No released version in this range.\n"
    lines = ["# Registry changelog", ""]
    for g in grouped(entries):
        if g.bulk:
            lines.append(f"## {len(g.entries)} calculators, effective {g.effective} (one change released together)")
            lines.append("")
            lines.append(f"Why: {g.reason}")
            lines.append("")
            lines.append("- " + ", ".join(f"{e.slug} {e.version}" for e in g.entries))
            lines.append("")
            continue
        e = g.entries[0]
        lines.append(f"## {e.name} ({e.slug}) {e.version}, {e.status}, effective {e.effective}")
        lines.append("")
        lines.append(f"Why: {e.reason}")
        lines.extend(people(e))
        lines.append("")
        lines.extend(f"- {ch}" for ch in e.changes)
        for s in e.signoffs:
            lines.append(f"- review sign-off: {s.who} ({s.role}), {s.date}")
        lines.append("")
    return "\n".join(lines)
