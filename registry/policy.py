"""The registry's approval policy (`formulas/policy/governance.yaml`): who may approve a draft.

Without the file the strict defaults hold: four eyes (the approver is never the draft's author)
and any role may approve. The file is untrusted like every registry file, so it is validated
(unknown fields, wrong types) and a broken one refuses approvals instead of loosening them.
"""
from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError

from registry.schema import Strict
from registry.yamlio import YamlError, load_file

POLICY_FILE = Path("policy") / "governance.yaml"


class PolicyError(Exception):
    pass


class Policy(Strict):
    """What an approval must satisfy."""

    four_eyes: bool = Field(default=True, description="the approver must be someone other than the draft's author")
    approver_roles: list[str] = Field(
        default_factory=list, description="roles allowed to approve (compared ignoring case); empty: any role")

    def role_allowed(self, role: str) -> bool:
        allowed = {r.strip().casefold() for r in self.approver_roles}
        return not allowed or role.strip().casefold() in allowed


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
        raise PolicyError(f"{rel}:{e.line}: {e.problem}") from None
    if data is None:
        return Policy()
    if not isinstance(data, dict):
        raise PolicyError(f"{rel}: expected a mapping (four_eyes, approver_roles)")
    try:
        return Policy.model_validate(data)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        where = ".".join(str(x) for x in err["loc"]) or "(file)"
        msg = "unknown field (four_eyes, approver_roles)" if err["type"] == "extra_forbidden" else err["msg"]
        raise PolicyError(f"{rel}: {where}: {msg}") from None
