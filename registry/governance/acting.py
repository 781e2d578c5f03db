"""Who acts in a deciding command, as the commands see it: the policy, the key's identity, a signed record,
four eyes; each refusal a `ReleaseError` saying why (nothing is written)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from registry.errors import ReleaseError
from registry.governance.deciding import DecisionRefused
from registry.governance.writeplan import (
    plain,
)
from registry.loader import Registry
from registry.schema import Calculator
from registry.trust.policy import POLICY_FILE, Policy, PolicyError, read_policy
from registry.yamlio import block

if TYPE_CHECKING:
    from registry.trust import decisionlog as sg


def signoff(who: tuple[str, str] | None, when: dt.date, reason: str | None = None) -> dict[str, Any] | None:
    if who is None:
        return None
    out: dict[str, Any] = {"who": who[0], "role": who[1], "date": when}
    if reason:
        out["reason"] = reason
    return out


def policy_of(reg: Registry) -> Policy:
    try:
        return read_policy(reg.formulas_dir)
    except PolicyError as e:
        raise ReleaseError(f"{e}: fix the policy file first (approvals are refused while it is invalid)") from None


def identity_of(reg: Registry, key: str | Path | None, by: str | None, role: str | None,
              day: dt.date) -> tuple["sg.Trust", "sg.Identity", str]:
    from registry.governance.deciding import identity

    try:
        return identity(reg, key, by, role, day)
    except DecisionRefused as e:
        raise ReleaseError(str(e)) from None


def intact(reg: Registry, c: Calculator, t: "sg.Trust") -> "sg.Audit":
    """The calculator's decision log, checked; ReleaseError when it does not verify."""
    from registry.governance.deciding import require_intact
    from registry.trust import decisionlog as sg

    a = sg.audit(reg, c, t)
    try:
        require_intact(a, c.slug)
    except DecisionRefused as e:
        raise ReleaseError(str(e)) from None
    return a


def signed_record(ident: "sg.Identity", role: str, **kw: Any) -> dict[str, Any]:
    from registry.governance.deciding import sign

    try:
        rec = sign(ident, role, **kw)
    except DecisionRefused as e:
        raise ReleaseError(str(e)) from None
    rec["signature"] = block(rec["signature"])
    return rec


def four_eyes(pol: Policy, slug: str, version: str, entry: Any, who: tuple[str, str]) -> None:
    """Refuse an approval the policy does not allow: by the draft's author, or by a role not listed."""
    author = (plain(entry.get("released_by")) or {}).get("who")
    if pol.four_eyes and author is None:
        raise ReleaseError(f"{slug} {version} records no author, so four eyes cannot be checked: remove the draft and "
                           "make it again with --by and --role")
    if pol.four_eyes and author is not None and str(author).strip().casefold() == who[0].casefold():
        raise ReleaseError(f"{who[0]} drafted {slug} {version} and cannot also approve it: the approver must be "
                           f"someone other than the author ({author}); set four_eyes: false in "
                           f"formulas/{POLICY_FILE.as_posix()} only if your governance allows self-approval")
    if not pol.role_allowed(who[1]):
        raise ReleaseError(f"role {who[1]!r} may not approve under formulas/{POLICY_FILE.as_posix()}; roles allowed: "
                           + ", ".join(pol.approver_roles))

