"""What the deciding commands (release, fix, approve, reject, review) share: who the key is, and signing.

Each command resolves its identity from `--key` (or `$FORMULA_SIGNING_KEY`) before anything is written,
under the registry lock, and appends a signed `registry.schema.Decision` whose `previous` is the
head of the calculator's log as it stands under that lock (so concurrent approvals chain in turn).
"""
from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

from registry.model import Registry
from registry.schema import Calculator
from registry.trust import decisionlog as sg
from registry.trust.policy import POLICY_FILE, Policy
from registry.trust.sshsig import SIGNERS_FILE, SigningError

KEY_ENV = "FORMULA_SIGNING_KEY"


class DecisionRefused(Exception):
    """A decision the keys or the policy do not allow (the command says why; nothing was written)."""


def key_path(key: str | Path | None) -> Path | None:
    chosen = key if key not in (None, "") else os.environ.get(KEY_ENV) or None
    return Path(chosen).expanduser() if chosen is not None else None


def signing(pol: Policy, key: str | Path | None) -> bool:
    """Whether this decision is signed: always when the policy requires it, and whenever a key is given."""
    return pol.require_signatures or key_path(key) is not None


def identity(reg: Registry, key: str | Path | None, by: str | None, role: str | None,
             day: dt.date) -> tuple[sg.Trust, sg.Identity, str]:
    """The trust files, the key's identity and the role it acts in; DecisionRefused when it may not decide."""
    path = key_path(key)
    if path is None:
        raise DecisionRefused(f"this decision is signed: give --key PATH (your OpenSSH key, or its .pub with the key in "
                              f"ssh-agent) or set ${KEY_ENV}; formulas/{POLICY_FILE.as_posix()} requires signatures")
    t = sg.trust(reg.formulas_dir)
    if t.policy_error is not None:
        raise DecisionRefused(f"{t.policy_error}; decisions are refused until it is fixed")
    if t.problems:
        f, line, why = t.problems[0]
        raise DecisionRefused(f"{f}:{line}: {why}; decisions are refused until the keys are in order")
    try:
        ident, chosen = sg.identify(t, path, by, role, day)
    except SigningError as e:
        raise DecisionRefused(str(e)) from None
    return t, ident, chosen


def sign(ident: sg.Identity, role: str, **kw: Any) -> dict[str, Any]:
    try:
        return sg.decide(ident, role, **kw)
    except SigningError as e:
        raise DecisionRefused(str(e)) from None


def main_head(reg: Registry, c: Calculator) -> str | None:
    """The hash a decision on the calculator's file (or a new draft of it) chains to."""
    from registry.versions import read_lock

    return sg.head(sg.file_entries(reg, c, read_lock(reg.lock_path).get(c.slug, {})))


def require_intact(a: sg.Audit, slug: str) -> None:
    """Refuse a decision that would chain onto a log that does not verify (a forged or edited decision)."""
    if a.problems:
        raise DecisionRefused(f"{a.problems[0]}\n{slug}'s decisions must verify before a new one joins them "
                              "(`formula verify`)")


def approvals_needed(t: sg.Trust, slug: str, counted: list[str]) -> int:
    return max(0, t.policy.required(slug) - len(counted))


def check_approver(t: sg.Trust, mine: list[sg.Checked], slug: str, version: str, ident: sg.Identity,
                   role: str) -> None:
    """Refuse an approval the policy does not allow: of a version (its decisions `mine`) whose decisions fail, by
    its author (principal or key), twice by one principal, or in a role that may not approve."""
    pol = t.policy
    broken = [x for x in mine if x.why]
    if broken:
        raise DecisionRefused(f"{slug} {version}: its {broken[0].entry.d.decision} decision fails verification "
                              f"({broken[0].why}); remove the draft and make it again")
    if not mine or mine[0].entry.d.decision not in ("release", "draft"):
        raise DecisionRefused(f"{slug} {version} has no signed draft decision; remove the draft and make it again")
    author = mine[0]
    if pol.four_eyes and (ident.principal == author.entry.d.principal or ident.fingerprint == author.fingerprint):
        raise DecisionRefused(f"{ident.principal} cannot approve {slug} {version}: {author.entry.d.principal} made it "
                              "with this key, and four eyes needs someone else's (whatever --by says); set "
                              f"four_eyes: false in formulas/{POLICY_FILE.as_posix()} only if your governance "
                              "allows self-approval")
    if any(x.entry.d.decision == "approve" and (x.entry.d.principal == ident.principal
                                                 or x.fingerprint == ident.fingerprint) for x in mine):
        raise DecisionRefused(f"{ident.principal} has already approved {slug} {version}; another approver is needed")
    if not pol.role_allowed(role):
        raise DecisionRefused(f"{ident.principal} acts as {role!r}, which may not approve under "
                              f"formulas/{POLICY_FILE.as_posix()}; roles allowed: " + ", ".join(pol.approver_roles))


__all__ = ["DecisionRefused", "KEY_ENV", "SIGNERS_FILE", "identity", "sign", "signing", "main_head",
           "check_approver", "approvals_needed", "key_path", "require_intact"]
