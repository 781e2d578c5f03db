"""Signed decisions as readers see them: `DecisionView` (the contract displays, `formula verify` and the pull
request report read), `decision_views`, and `formula verify`'s report.

The statements, the chain, the checks and the signing live in `registry.trust.decisionlog` (which validation
runs); this module adds what needs the loader and validation on top of it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from registry.model import Registry
from registry.schema import Calculator
from registry.trust.decisionlog import Checked, State, Trust, audit, trust, trust_of

__all__ = ["BEFORE_SIGNING", "INVALID", "VERIFIED", "DecisionView", "State", "Trust", "decision_views", "last_of",
           "report", "signed_phrase", "trust", "trust_of", "views"]


class DecisionView(BaseModel):
    """One decision as a reader sees it (the contract `formula verify`, displays and the PR report use)."""

    # Built from values the decision log has already checked, so `views` uses `model_construct`: validating them
    # again would first build this model's validator, 23 ms of a warm `formula history` (measured 2026-12-03,
    # `formula history meld-na` on 100 signed decisions, bench/cli.py --signed 100).
    model_config = ConfigDict(frozen=True, defer_build=True)  # built when first used, not at import

    slug: str
    version: str
    decision: str  # release | draft | approve | reject | review
    principal: str | None  # the verified principal; None when not signed
    name: str | None  # from governance.yaml people:
    role: str | None
    date: str  # ISO date
    fingerprint: str | None  # SHA256:... of the key
    state: State
    why: str | None  # the R-SIGNATURE reason when invalid
    reason: str | None = None  # the reason the decision signed (a verified decision's is vouched for by its key)
    next_review: str | None = None  # a review's signed next due date

    def plain(self) -> dict[str, str | None]:
        """The fields as a dict, as `model_dump()` gives them (every field is a string or None) without building
        the model's serializer, which would cost a warm `formula history` what `model_construct` saved."""
        return dict(self)


def views(reg: Registry, c: Calculator, t: Trust | None = None) -> list[DecisionView]:
    """Every decision of a calculator in log order, the history before signing included, as readers see it."""
    t = t or trust_of(reg)
    a = audit(reg, c, t)
    out: list[DecisionView] = []
    for v in c.versions:
        if v.version in a.legacy:
            out.append(DecisionView.model_construct(
                slug=c.slug, version=v.version, decision="release", principal=None, name=None, role=None,
                date=v.effective.isoformat(), fingerprint=None, state="recorded_before_signing", why=None))
        out += [_view(t, x) for x in a.checked if x.entry.version == v.version and not x.entry.in_draft]
    out += [_view(t, x) for x in a.checked if x.entry.in_draft]
    return out


def _view(t: Trust, x: Checked) -> DecisionView:
    d = x.entry.d
    ok = x.why is None
    person = t.person(d.principal)
    return DecisionView.model_construct(
        slug=x.entry.slug, version=x.entry.version, decision=d.decision, principal=d.principal if ok else None,
        name=(d.name or (person.name if person else None)) if ok else None,  # the name signed
        role=d.role, date=d.date.isoformat(), fingerprint=x.fingerprint, state="verified" if ok else "invalid",
        why=x.why, reason=d.reason or None, next_review=d.next_review.isoformat() if d.next_review else None)


def last_of(decided: list[DecisionView], version: str, decision: str) -> DecisionView | None:
    """The last `decision` (approve, review, ...) signed on `version` that verifies: what a display may call
    "approved" or "reviewed" (an invalid one is shown as invalid, never as the approval)."""
    found = [d for d in decided if d.version == version and d.decision == decision and d.state == "verified"]
    return found[-1] if found else None


def signed_phrase(verb: str, d: DecisionView) -> str:
    """'approved 2026-12-02 (Dr A. Chair, chair), verified': a verified decision in one line of words."""
    return f"{verb} {d.date} ({d.name or d.principal}, {d.role}), verified"


def decision_views(root: Path, slug: str) -> list[DecisionView]:
    """The decisions of one calculator of the registry at `root` (holding formulas/ and guidelines/), in log order."""
    from registry.loader import load

    reg = load(Path(root))
    return views(reg, reg.get(slug))


# ---------------------------------------------------------------------- formula verify

VERIFIED, BEFORE_SIGNING, INVALID = 0, 3, 1  # exit statuses of `formula verify`


def report(reg: Registry) -> tuple[int, dict[str, Any]]:
    """(exit status, the report): 0 only when every active version rests on valid signed decisions under the policy
    and the registry validates; 3 when nothing is invalid but some rest on history recorded before signing."""
    from registry.validate import validate

    if not reg.validated:
        validate(reg)
    t = trust_of(reg)
    rows = []
    for slug, c in sorted(reg.calculators.items()):
        try:
            a = audit(reg, c, t)
        except (ValueError, StopIteration):
            continue
        rows.append({"slug": slug, "version": a.active, "state": a.active_state,
                     "approved_by": a.approvals.get(a.active or "", []),
                     "decisions": len([x for x in a.checked if not x.entry.in_draft])})
    problems = [str(p) for p in reg.problems]
    from registry.trust.safety_signoff import SIGNOFFS, state

    safety = state(reg).to_json()  # the safety officer's sign-off: stale is reported, a forged one fails
    if safety["state"] == "invalid":
        problems.append(f"{SIGNOFFS}: the safety case's sign-off does not verify: {safety['why']}")
    states = {s: sum(r["state"] == s for r in rows) for s in ("verified", "recorded_before_signing", "invalid")}
    status = INVALID if problems or states["invalid"] else BEFORE_SIGNING if states["recorded_before_signing"] \
        else VERIFIED
    return status, {"ok": status == VERIFIED, "active_versions": len(rows), **states, "problems": problems,
                    "versions": rows, "safety": safety}
