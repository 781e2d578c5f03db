"""The registry-wide changelog: every released version, with who, why, what changed and sign-offs.

`changelog(reg, since)` is the one source for `formula changelog` and the site's changelog page.
"""
from __future__ import annotations

import datetime as dt
import json
import subprocess
from typing import Any

from pydantic import BaseModel

from registry.governance import content_changes, version_content
from registry.loader import Registry
from registry.schema import SignOff, VersionStatus, semver_key


class ChangelogEntry(BaseModel):
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
    return json.loads(blob).get("calculators", {})


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
    entries: list[ChangelogEntry] = []
    for slug, c in reg.calculators.items():
        prev: dict[str, Any] | None = None
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
            entries.append(ChangelogEntry(
                slug=slug, name=c.name, version=v.version, status=v.status.value, effective=v.effective,
                released_by=v.released_by.who if v.released_by else None,
                role=v.released_by.role if v.released_by else None, reason=v.changelog, changes=changes,
                signoffs=list(v.signoffs), approved_by=v.approved_by.who if v.approved_by else None,
                approved_role=v.approved_by.role if v.approved_by else None, approved=v.approved))
    entries.sort(key=lambda e: (e.effective, e.slug, semver_key(e.version)), reverse=True)
    return entries


def markdown(entries: list[ChangelogEntry]) -> str:
    if not entries:
        return "No released version in this range.\n"
    lines = ["# Registry changelog", ""]
    for e in entries:
        who = f" by {e.released_by} ({e.role})" if e.released_by else ""
        lines.append(f"## {e.name} ({e.slug}) {e.version}, {e.status}, effective {e.effective}")
        lines.append("")
        lines.append(f"Released{who}: {e.reason}")
        if e.approved_by:
            lines.append(f"Approved by {e.approved_by} ({e.approved_role}) on {e.approved}.")
        lines.append("")
        lines.extend(f"- {ch}" for ch in e.changes)
        for s in e.signoffs:
            lines.append(f"- review sign-off: {s.who} ({s.role}), {s.date}")
        lines.append("")
    return "\n".join(lines)
