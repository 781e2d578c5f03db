"""`formula review-pr`'s safety section: what a change does to the hazard log and to the safety officer's sign-off.

Hazards added, changed, closed or removed (compared by id and digest), and the sign-off the change makes stale,
with the calculators it is stale for (registry.trust.safety_signoff: a release that moves a calculator's
content hash, or a change to a hazard naming it).
"""
from __future__ import annotations

from pydantic import BaseModel

from registry.hazards import Log, hazard_hash, read_log
from registry.loader import Registry


class Invalidated(BaseModel):
    by: str | None
    role: str | None
    date: str | None
    stale_for: list[str]  # every calculator the sign-off no longer covers as signed
    by_this_change: list[str]  # of them, those this change made stale (the base did not)


class SafetyReview(BaseModel):
    hazards_added: list[str] = []
    hazards_changed: list[str] = []
    hazards_closed: list[str] = []
    hazards_removed: list[str] = []
    sign_off_base: str = "none"  # signed | stale | invalid | none
    sign_off_head: str = "none"
    invalidated: Invalidated | None = None

    @property
    def empty(self) -> bool:
        return not (self.hazards_added or self.hazards_changed or self.hazards_closed or self.hazards_removed
                    or self.invalidated or self.sign_off_base != self.sign_off_head)


def _digests(log: Log | None) -> dict[str, tuple[str, str]]:
    hazards = log.entries.hazards if log is not None and log.entries else []
    return {h.id: (hazard_hash(log, h), h.status) for h in hazards} if log is not None else {}


def review_safety(base: Registry, head: Registry) -> SafetyReview:
    from registry.trust.safety_signoff import state

    a, b = _digests(read_log(base.root)), _digests(read_log(head.root))
    out = SafetyReview(
        hazards_added=sorted(set(b) - set(a)), hazards_removed=sorted(set(a) - set(b)),
        hazards_changed=sorted(h for h in set(a) & set(b) if a[h][0] != b[h][0]),
        hazards_closed=sorted(h for h in b if b[h][1] == "closed" and a.get(h, ("", ""))[1] != "closed"))
    before, after = state(base), state(head)
    out.sign_off_base, out.sign_off_head = before.state, after.state
    if after.state == "stale":
        out.invalidated = Invalidated(by=after.name or after.by, role=after.role, date=after.date,
                                      stale_for=after.stale_for,
                                      by_this_change=sorted(set(after.stale_for) - set(before.stale_for)))
    return out

