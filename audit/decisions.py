"""The decisions a change records (releases, approvals, review sign-offs), by whom, and whether they verify.

One adapter for `formula review-pr`: with the signed-governance module (`registry.signatures`) a
decision's signer is whoever holds the key that verifies it; without it, the registry holds only the
names people typed, which this module reports as "unsigned" (a typed name is a claim, not an identity).
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from registry.schema import Calculator, SignOff

State = Literal["verified", "recorded_before_signing", "invalid", "unsigned"]


class Decision(BaseModel):
    version: str
    decision: str  # released, approved, reviewed (or what the signatures module names)
    name: str | None  # as typed on the record; only a verified decision's name is vouched for by its key
    role: str | None
    date: str
    principal: str | None = None  # the key's principal (verified decisions only)
    fingerprint: str | None = None
    state: State
    why: str | None = None  # why it does not verify, or the decision's reason


def decisions(base_root: Path, head_root: Path, base: Calculator | None, head: Calculator | None) -> list[Decision]:
    """Decisions on the head not already on the base, in the registry's order."""
    if head is None:
        return []
    try:
        from registry.signatures import decision_views  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return typed(base, head)
    seen = {_key(v) for v in decision_views(base_root, head.slug)} if base is not None else set()
    return [Decision(version=v.version, decision=v.decision, name=v.name, role=v.role, date=str(v.date),
                     principal=v.principal, fingerprint=v.fingerprint, state=v.state, why=v.why)
            for v in decision_views(head_root, head.slug) if _key(v) not in seen]


def _key(v: object) -> tuple[object, ...]:
    return tuple(getattr(v, f, None) for f in ("version", "decision", "date", "fingerprint", "name", "role"))


def _typed(version: str, decision: str, s: SignOff) -> Decision:
    return Decision(version=version, decision=decision, name=s.who, role=s.role, date=s.date.isoformat(),
                    state="unsigned", why=s.reason)


def typed(base: Calculator | None, head: Calculator) -> list[Decision]:
    """What the registry records today: the names typed with `--by`/`--role`, none of them signed."""
    before = {v.version: v for v in base.versions} if base is not None else {}
    out: list[Decision] = []
    for v in head.versions:
        old = before.get(v.version)
        if v.released_by is not None and (old is None or old.released_by != v.released_by):
            out.append(_typed(v.version, "released", v.released_by))
        if v.approved_by is not None and (old is None or old.approved_by != v.approved_by):
            out.append(_typed(v.version, "approved", v.approved_by))
        known = old.signoffs if old is not None else []
        out += [_typed(v.version, "reviewed", s) for s in v.signoffs if s not in known]
    return out
