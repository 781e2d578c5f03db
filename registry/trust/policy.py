"""The registry's governance policy (`formulas/policy/governance.yaml`): who decides, and what a change needs.

Without the file the strict defaults hold: decisions are signed, four eyes (an approver is never the
draft's author), one approval, any listed person's role may approve. People are principals of
`formulas/policy/allowed_signers` (their keys) with a name and the roles they may act in; a role typed
on the command line only picks one of those. The file is untrusted like every registry file, so it is
validated (unknown fields, wrong types) and a broken one refuses decisions instead of loosening them.
"""
from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, ValidationError, field_validator

from registry.schema import Strict
from registry.yamlio import YamlError, load_file

POLICY_FILE = Path("policy") / "governance.yaml"
PRINCIPAL_RE = r"^[A-Za-z0-9][A-Za-z0-9._+-]*(@[A-Za-z0-9][A-Za-z0-9.-]*)?$"  # no patterns: one principal, literally
FIELDS = ("require_signatures, four_eyes, approver_roles, approvals_required, approvals_required_for, "
          "safety_officer_roles, people")


class PolicyError(Exception):
    """The policy file is not valid: `line` and `field` say where, `problem` what (str(e) says all three)."""

    def __init__(self, message: str, line: int = 1, field: str = "(file)", problem: str | None = None) -> None:
        super().__init__(message)
        self.line, self.field, self.problem = line, field, problem or message


class Person(Strict):
    """A principal of allowed_signers: the name shown beside their decisions and the roles they may act in."""

    name: str = Field(min_length=1, max_length=200)
    roles: list[str] = Field(min_length=1, description="the first is the default; --role picks another")


class Policy(Strict):
    """What a decision must satisfy."""

    require_signatures: bool = Field(default=True, description="every decision is signed with the decider's key "
                                     "(false: typed --by/--role records, never shown as verified)")
    four_eyes: bool = Field(default=True, description="approvers are principals (and keys) other than the author")
    approver_roles: list[str] = Field(
        default_factory=list, description="roles allowed to approve (compared ignoring case); empty: any role")
    approvals_required: int = Field(default=1, ge=1, le=20, description="distinct approving principals a version "
                                    "needs before it becomes active (k of n)")
    approvals_required_for: dict[str, int] = Field(
        default_factory=dict, description="per calculator slug, a different number (e.g. scores that steer treatment)")
    safety_officer_roles: list[str] = Field(
        default_factory=lambda: ["clinical safety officer"], min_length=1,
        description="roles allowed to sign the clinical safety case (`formula safety sign-off`; compared ignoring case)")
    people: dict[str, Person] = Field(default_factory=dict, description="principal -> name and roles")

    @field_validator("people")
    @classmethod
    def _principals(cls, v: dict[str, Person]) -> dict[str, Person]:
        for p in v:
            if not re.match(PRINCIPAL_RE, p):
                raise ValueError(f"principal {p!r} must be one literal identity such as ana@example.org "
                                 "(letters, digits, . _ + - and one @; no patterns)")
        return v

    @field_validator("approvals_required_for")
    @classmethod
    def _counts(cls, v: dict[str, int]) -> dict[str, int]:
        for slug, n in v.items():
            if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 20:
                raise ValueError(f"{slug}: approvals required must be a whole number from 1 to 20")
        return v

    def role_allowed(self, role: str) -> bool:
        allowed = {r.strip().casefold() for r in self.approver_roles}
        return not allowed or role.strip().casefold() in allowed

    def may_sign_safety(self, role: str) -> bool:
        return role.strip().casefold() in {r.strip().casefold() for r in self.safety_officer_roles}

    def required(self, slug: str) -> int:
        return self.approvals_required_for.get(slug, self.approvals_required)


def policy_path(formulas_dir: Path) -> Path:
    return formulas_dir / POLICY_FILE


def read_policy(formulas_dir: Path) -> Policy:
    """The policy in force; PolicyError (naming the file and field) when the file is not valid."""
    p = policy_path(formulas_dir)
    if not p.exists():
        return Policy()
    rel = f"formulas/{POLICY_FILE.as_posix()}"
    try:
        data = load_file(p)
    except YamlError as e:
        raise PolicyError(f"{rel}:{e.line}: {e.problem}", e.line, "(file)", e.problem) from None
    if data is None:
        return Policy()
    if not isinstance(data, dict):
        raise PolicyError(f"{rel}: expected a mapping ({FIELDS})", 1, "(file)", f"expected a mapping ({FIELDS})")
    from registry.yamlio import line_of

    people = data.get("people")
    for who in people if isinstance(people, dict) else {}:
        if not isinstance(who, str) or not re.match(PRINCIPAL_RE, who):  # said at the principal's own line
            msg = (f"principal {who!r} must be one literal identity such as ana@example.org (letters, digits, "
                   ". _ + - and one @; no patterns)")
            raise PolicyError(f"{rel}: people: {msg}", line_of(data, ("people", who)), "people", msg)
    try:
        return Policy.model_validate(data)
    except ValidationError as e:

        err = sorted(e.errors(include_url=False), key=lambda x: x["type"] != "extra_forbidden")[0]  # a typo first
        where = ".".join(str(x) for x in err["loc"]) or "(file)"
        known = "name, roles" if err["loc"][:1] == ("people",) else FIELDS
        msg = f"unknown field ({known})" if err["type"] == "extra_forbidden" else err["msg"]
        raise PolicyError(f"{rel}: {where}: {msg}", line_of(data, tuple(err["loc"])), where, msg) from None
