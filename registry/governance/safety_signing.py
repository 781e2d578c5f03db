"""`formula safety sign-off`: the clinical safety officer signs the case (registry.trust.safety_signoff).

Every argument and permission is checked before anything is written, under the registry lock: the reason, the
key's identity (allowed_signers, people:), the role (safety_officer_roles of the policy), the registry's
validity (the hazard log included) and the sign-offs before it (they must verify, as a decision chains only onto
a log that does). The new sign-off is appended atomically (journal, temp file, rename).
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from registry import clock
from registry.atomic import commit
from registry.counted_nouns import counted
from registry.errors import ReleaseError
from registry.governance.acting import identity_of
from registry.governance.deciding import DecisionRefused
from registry.governance.writeplan import loaded, writing
from registry.hazards import SIGNOFFS_FILE, read_log
from registry.trust import decisionlog as sg
from registry.trust.policy import POLICY_FILE
from registry.trust.safety_signoff import (
    SIGNOFFS,
    SafetySignOff,
    check,
    coverage,
    entry_hash,
    hazard_digests,
    read_signoffs,
    statement,
)
from registry.yamlio import block, rt_dump

HEADER = ("# Signed sign-offs of the clinical safety case, oldest first (`formula safety sign-off`; never edit by hand:\n"
          "# each is signed and chained to the one before it, and `formula verify` checks them).\n")


def sign_off(root: Path | str | None, key: str | Path | None, reason: str, role: str | None = None) -> str:
    """Record the safety officer's signed sign-off of the case as it stands; ReleaseError, nothing written, when refused."""
    reason = (reason or "").strip()
    if not reason:
        raise ReleaseError("--reason must say what the sign-off rests on (e.g. 'hazard log reviewed with the committee')")
    today = clock.today()
    with writing(root) as base:
        reg = loaded(base, "signing the safety case")
        log = read_log(base)
        if log is None or log.entries is None:
            raise ReleaseError("this registry has no hazard log (formulas/safety/hazards.yaml): there is no case to sign")
        t, ident, acting = identity_of(reg, key, None, role, today)
        acting = officer_role(t, ident, role)
        try:
            refuse_unless_officer(t, ident, acting)
        except DecisionRefused as e:
            raise ReleaseError(str(e)) from None
        before, unreadable = read_signoffs(base)
        if unreadable:
            raise ReleaseError(f"{unreadable}; sign-offs are refused until the file reads")
        broken = [w for w in check(t, before, today) if w]
        if broken:
            raise ReleaseError(f"{SIGNOFFS}: an earlier sign-off fails verification ({broken[0]}); a new one chains "
                               "only onto sign-offs that verify")
        s = SafetySignOff(principal=ident.principal, name=ident.person.name, role=acting, date=today, reason=reason,
                          covers=coverage(reg), log=log.digest, hazards=hazard_digests(log),
                          previous=entry_hash(before[-1]) if before else None, signature="-")
        signed = s.model_copy(update={"signature": _sign(ident.key, statement(s))})
        text = HEADER + rt_dump({"signoffs": [_plain(x) for x in [*before, signed]]})
        commit(base, {base / "formulas" / SIGNOFFS_FILE: text})
    return (f"safety case signed by {ident.person.name} ({acting}) on {today}: "
            f"{counted(len(s.covers), 'active version')} and {counted(len(s.hazards), 'hazard')} covered")


def _sign(key: Path, data: bytes) -> str:
    from registry.trust.sshsig import SigningError, sign

    try:
        return sign(key, data)
    except SigningError as e:
        raise ReleaseError(str(e)) from None


def _plain(s: SafetySignOff) -> dict[str, Any]:
    out: dict[str, Any] = s.model_dump(mode="json", exclude_none=True)
    out["date"] = dt.date.fromisoformat(out["date"])
    out["signature"] = block(s.signature)
    return out


def refuse_unless_officer(t: sg.Trust, ident: sg.Identity, role: str) -> None:
    if not t.policy.may_sign_safety(role):
        raise DecisionRefused(f"{ident.principal} acts as {role!r}, which may not sign the clinical safety case under "
                              f"formulas/{POLICY_FILE.as_posix()}; roles allowed (safety_officer_roles): "
                              + ", ".join(t.policy.safety_officer_roles))


def officer_role(t: sg.Trust, ident: sg.Identity, role: str | None) -> str:
    """The role the key signs in: the one given, else the first of the person's roles the policy allows."""
    if role is not None:
        return role
    return next((r for r in ident.person.roles if t.policy.may_sign_safety(r)), ident.person.roles[0])
