"""The queue of changes that wait: drafts awaiting approval and approved versions awaiting their date.

One source for `formula pending`, the pending line of `history` and `show`, and the site's
"Awaiting approval" sections. A draft lives in formulas/drafts/<slug>.yaml (registry.release).
"""
from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ValidationError

from registry.governance import DRAFTS_DIR, version_content
from registry.model import Registry
from registry.schema import Calculator, SignOff, Version, VersionStatus
from registry.yamlio import YamlError


class Pending(BaseModel):
    slug: str
    name: str
    version: str
    base: str  # the active version it was drafted from
    state: str  # "awaiting approval" or "approved, awaiting its effective date"
    effective: dt.date
    drafted_by: SignOff | None = None
    approved_by: SignOff | None = None
    reason: str
    changes: list[str]
    scoring_changed: bool

    @property
    def since(self) -> dt.date | None:
        return self.drafted_by.date if self.drafted_by else None


def draft_version(reg: Registry, slug: str) -> tuple[Calculator, Version] | None:
    """The waiting draft of a calculator (its file and last version), or None; an unreadable draft is None
    (validation reports it)."""
    from registry.yamlio import load_file

    p = reg.formulas_dir / DRAFTS_DIR / f"{slug}.yaml"
    if not p.exists():
        return None
    try:
        d = Calculator.model_validate(load_file(p))
    except (YamlError, ValidationError, TypeError):
        return None
    return d, d.versions[-1]


def pending_one(reg: Registry, c: Calculator) -> Pending | None:
    from registry.diffing import diff, scoring_changes

    found = draft_version(reg, c.slug)
    if found is None:
        return None
    d, v = found
    base = next((x.version for x in d.versions if x.status == VersionStatus.active), c.active.version)
    old, new = version_content(reg, c, base), version_content(reg, c, v.version)
    changes = diff(old, new) if new is not None else []
    state = "approved, awaiting its effective date" if v.approved_by else "awaiting approval"
    return Pending(slug=c.slug, name=c.name, version=v.version, base=base, state=state, effective=v.effective,
                   drafted_by=v.released_by, approved_by=v.approved_by, reason=v.changelog,
                   changes=[ch.line() for ch in changes], scoring_changed=bool(scoring_changes(changes)))


def pending(reg: Registry) -> list[Pending]:
    """Everything waiting, oldest draft first (the one that has waited longest heads the queue)."""
    out = [p for c in reg.calculators.values() if (p := pending_one(reg, c)) is not None]
    out.sort(key=lambda p: (p.since or dt.date.min, p.slug))
    return out


def row(p: Pending) -> dict[str, Any]:
    """A flat row for tables and JSON."""
    return {"slug": p.slug, "version": p.version, "base": p.base, "state": p.state,
            "effective": p.effective.isoformat(),
            "drafted_by": f"{p.drafted_by.who} ({p.drafted_by.role})" if p.drafted_by else "not recorded",
            "since": p.since.isoformat() if p.since else "not recorded",
            "approved_by": f"{p.approved_by.who} ({p.approved_by.role})" if p.approved_by else "",
            "reason": p.reason, "changes": p.changes, "scoring_changed": p.scoring_changed}
