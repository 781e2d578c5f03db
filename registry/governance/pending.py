"""The queue of changes that wait: drafts awaiting approval and approved versions awaiting their date.

One source for `formula pending`, the pending line of `history` and `show`, and the site's
"Awaiting approval" sections. A draft lives in formulas/drafts/<slug>.yaml (registry.governance.release).
"""
from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ConfigDict

from registry.model import Registry
from registry.schema import Calculator, SignOff, VersionStatus
from registry.versioned import draft_version, version_content


class Pending(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built when first used, not at import

    slug: str
    name: str
    version: str
    base: str  # the active version it was drafted from
    state: str  # "awaiting approval" or "approved, awaiting its effective date"
    effective: dt.date
    drafted_by: SignOff | None = None
    approved_by: SignOff | None = None  # the last approval
    approvals: list[SignOff] = []  # every approval that counts under the policy (signed: verified ones only)
    needed: int = 1  # approvals the policy requires
    signing: str = "not signed"  # verified | invalid: WHY | not signed (typed, where the policy allows it)
    problems: list[str] = []  # every reason a decision on the draft does not count (validate's warnings)
    keys: dict[str, str] = {}  # who -> the fingerprint of the key their verified decision was signed with
    reason: str
    changes: list[str]
    scoring_changed: bool

    @property
    def since(self) -> dt.date | None:
        return self.drafted_by.date if self.drafted_by else None


def pending_one(reg: Registry, c: Calculator) -> Pending | None:
    from registry.diffing import diff, scoring_changes

    found = draft_version(reg, c.slug)
    if found is None:
        return None
    d, v = found
    base = next((x.version for x in d.versions if x.status == VersionStatus.active), c.active.version)
    old, new = version_content(reg, c, base), version_content(reg, c, v.version)
    changes = diff(old, new) if new is not None else []
    common = dict(slug=c.slug, name=c.name, version=v.version, base=base, effective=v.effective, reason=v.changelog,
                  changes=[ch.line() for ch in changes], scoring_changed=bool(scoring_changes(changes)))
    if v.decisions:
        return _signed(reg, c, common)
    state = "approved, awaiting its effective date" if v.approved_by else "awaiting approval"
    return Pending(**common, state=state, drafted_by=v.released_by, approved_by=v.approved_by,
                   approvals=[v.approved_by] if v.approved_by else [])


def _signed(reg: Registry, c: Calculator, common: dict[str, Any]) -> Pending:
    """A draft with signed decisions: who drafted and approved it only as far as their signatures verify."""
    from registry.trust import decisionlog as sg

    t = sg.trust_of(reg)
    a = sg.audit(reg, c, t)
    mine = [x for x in a.checked if x.entry.in_draft]
    counted, need, why = sg.draft_state(t, a, c.slug)

    def signoff(x: sg.Checked) -> SignOff:
        person = t.person(x.entry.d.principal)
        who = x.entry.d.name or (person.name if person else x.entry.d.principal)  # the name signed, where recorded
        return SignOff(who=who, role=x.entry.d.role, date=x.entry.d.date,
                       reason=x.entry.d.reason or None)

    ok = [x for x in mine if x.why is None]
    author = next((signoff(x) for x in ok[:1] if x.entry.d.decision in ("release", "draft")), None)
    approvals = [signoff(x) for x in ok if x.entry.d.decision == "approve" and x.entry.d.principal in counted]
    if why:
        state = "signature invalid: " + why[0]
    elif len(counted) >= need:
        state = "approved, awaiting its effective date"
    else:
        state = f"awaiting approval ({len(counted)} of {need})"
    keys = {signoff(x).who: x.fingerprint or "" for x in ok}
    return Pending(**common, state=state, drafted_by=author, approved_by=approvals[-1] if approvals else None,
                   approvals=approvals, needed=need, signing="invalid: " + why[0] if why else "verified", keys=keys,
                   problems=why)


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
            "approved_by": "; ".join(f"{a.who} ({a.role})" for a in p.approvals),
            "approvals": f"{len(p.approvals)} of {p.needed}", "signing": p.signing, "keys": p.keys,
            "reason": p.reason, "changes": p.changes, "scoring_changed": p.scoring_changed}
