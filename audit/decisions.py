"""The decisions a change records (releases, approvals, reviews), by whom, and whether they verify.

One adapter for `formula review-pr` over the signed governance (`registry.governance.signatures`): a signed
decision names its signer through the key that verifies it ("verified"), or says why it does not
("invalid"); releases before signing began are "recorded_before_signing". Where the policy does not
require signatures, the registry holds only names people typed: those are "unsigned" (a typed name is
a claim, not an identity).
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from registry.model import Registry
from registry.schema import Calculator, SignOff, Version, VersionStatus

State = Literal["verified", "recorded_before_signing", "invalid", "unsigned"]


class Decision(BaseModel):
    version: str
    decision: str  # release, draft, approve, reject, review (registry.governance.signatures' names)
    name: str | None  # as typed on the record; only a verified decision's name is vouched for by its key
    role: str | None
    date: str
    principal: str | None = None  # the key's principal (verified decisions only)
    fingerprint: str | None = None
    state: State
    why: str | None = None  # why it does not verify (None when it does, or when it is unsigned)
    reason: str | None = None  # the reason the decision gives (signed with it, or typed)


def decisions(base: Registry, head: Registry, a: Calculator | None, b: Calculator | None) -> list[Decision]:
    """Decisions on the head's calculator `b` not already on the base's `a`: the signed ones with their verdict
    (registry.governance.signatures), then the names typed where the policy does not require signatures ("unsigned")."""
    if b is None:
        return []
    seen = {_key(v) for v in _signed(base, a)}
    out = [Decision(version=v.version, decision=v.decision, name=v.name, role=v.role, date=str(v.date),
                    principal=v.principal, fingerprint=v.fingerprint, state=v.state, why=v.why, reason=v.reason)
           for v in _signed(head, b) if _key(v) not in seen]
    return out + typed(a, b) + typed_draft(base, head, b.slug) + rejected(base, head, b.slug)


def rejected(base: Registry, head: Registry, slug: str) -> list[Decision]:
    """The decisions of drafts rejected in the head and not in the base (formulas/drafts/rejected/): each rejected
    draft's own decisions and its signed rejection, verified as validation verifies them."""
    from registry.trust.rejections import on_record

    known = len(on_record(base, slug))
    out: list[Decision] = []
    for version, checked in on_record(head, slug)[known:]:
        for d, principal, name, fingerprint, why in checked:
            out.append(Decision(version=version, decision=d.decision, name=name, role=d.role, date=d.date.isoformat(),
                                principal=principal, fingerprint=fingerprint, state="invalid" if why else "verified",
                                why=why, reason=d.reason or None))
    return out


def _signed(reg: Registry, c: Calculator | None) -> list[Any]:
    """registry.governance.signatures' view of a calculator's decisions. `decision_views(root, slug)` is this on a registry
    it loads itself; the review has both registries loaded already, so it asks `views` (one trust per side)."""
    from registry.governance.signatures import trust, views

    if c is None:
        return []
    t = _TRUST.get(id(reg))
    if t is None or t[0] is not reg:
        if len(_TRUST) >= 4:  # a review holds two registries; older ones are not asked again
            _TRUST.clear()
        t = _TRUST[id(reg)] = (reg, trust(reg.formulas_dir))
    return views(reg, c, t[1])


_TRUST: dict[int, tuple[Registry, Any]] = {}


def _key(v: object) -> tuple[object, ...]:
    return tuple(getattr(v, f, None) for f in ("version", "decision", "date", "fingerprint", "name", "role"))


def _typed(version: str, decision: str, s: SignOff) -> Decision:
    return Decision(version=version, decision=decision, name=s.who, role=s.role, date=s.date.isoformat(),
                    state="unsigned", reason=s.reason)


def typed(base: Calculator | None, head: Calculator) -> list[Decision]:
    """What the registry records as typed names (`--by`/`--role` where signatures are not required): unsigned."""
    before = {v.version: v for v in base.versions} if base is not None else {}
    out: list[Decision] = []
    for v in head.versions:
        out += _typed_new(before.get(v.version), v)
    return out


def typed_draft(base: Registry, head: Registry, slug: str) -> list[Decision]:
    """The typed names on a waiting draft (formulas/drafts/) the base does not hold: its author, its approvals."""
    from registry.versioned import draft_version

    found = draft_version(head, slug)
    if found is None:
        return []
    was = draft_version(base, slug)
    return _typed_new(was[1] if was is not None and was[1].version == found[1].version else None, found[1])


def _typed_new(old: Version | None, v: Version) -> list[Decision]:
    out: list[Decision] = []
    if v.released_by is not None and (old is None or old.released_by != v.released_by):
        made = _typed(v.version, "release" if v.status != VersionStatus.draft else "draft", v.released_by)
        out.append(made if made.reason else made.model_copy(update={"reason": v.changelog}))  # its reason: the changelog
    if v.approved_by is not None and (old is None or old.approved_by != v.approved_by):
        out.append(_typed(v.version, "approve", v.approved_by))
    known = old.signoffs if old is not None else []
    return out + [_typed(v.version, "review", s) for s in v.signoffs if s not in known]
