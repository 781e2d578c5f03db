"""The clinical safety officer's sign-off of the safety case: a signed decision, stored in formulas/safety/signoffs.yaml.

It is made with the machinery of every other decision (registry.trust.decisionlog: the key's identity in
allowed_signers and people:, `ssh-keygen -Y sign` in the formula-registry namespace, a chain of previous hashes,
a date never after today nor before the sign-off it follows). Its statement covers every active version by
content hash and the hazard log by its digest and each hazard's own, so a later release or log change is named:
the sign-off is then stale for exactly the calculators it touched (`state`).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from registry import clock
from registry import versions as ver
from registry.hazards import ALL, SIGNOFFS_FILE, Log, hazard_hash, read_log
from registry.model import Registry
from registry.schema import Strict
from registry.trust import decisionlog as sg
from registry.trust.policy import POLICY_FILE
from registry.yamlio import YamlError, load_file

STATEMENT_FORMAT = "formula-registry safety sign-off 1"
SIGNOFFS = f"formulas/{SIGNOFFS_FILE.as_posix()}"


class Covered(Strict):
    version: str
    content_hash: str


class SafetySignOff(Strict):
    """One signed sign-off as stored (a list of them, oldest first, is the file)."""

    principal: str = Field(max_length=200)
    name: str | None = Field(default=None, max_length=200)
    role: str = Field(max_length=200)
    date: dt.date
    reason: str = Field(max_length=4000)
    covers: dict[str, Covered]
    log: str = Field(pattern="^sha256:[0-9a-f]{64}$")
    hazards: dict[str, str] = Field(default_factory=dict, description="hazard id -> its digest when signed")
    previous: str | None = Field(default=None, pattern="^sha256:[0-9a-f]{64}$")
    signature: str = Field(max_length=4000)


class SignOffFile(Strict):
    signoffs: list[SafetySignOff] = Field(default_factory=list)


def statement(s: SafetySignOff) -> bytes:
    """The exact bytes a sign-off signs: canonical JSON of every field but the signature."""
    body = s.model_dump(mode="json", exclude={"signature"})
    body["format"] = STATEMENT_FORMAT
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def entry_hash(s: SafetySignOff) -> str:
    return "sha256:" + hashlib.sha256(statement(s)).hexdigest()


def coverage(reg: Registry) -> dict[str, Covered]:
    """Every active version of the registry with its content hash: what a sign-off covers."""
    lock = ver.read_lock(reg.lock_path)
    out = {}
    for slug, c in sorted(reg.calculators.items()):
        v = c.active
        out[slug] = Covered(version=v.version, content_hash=lock.get(slug, {}).get(v.version) or ver.active_hash(reg, slug))
    return out


def hazard_digests(log: Log) -> dict[str, str]:
    return {h.id: hazard_hash(log, h) for h in (log.entries.hazards if log.entries else [])}


def read_signoffs(root: Path) -> tuple[list[SafetySignOff], str | None]:
    """(the sign-offs, why the file cannot be read or None)."""
    path = root / "formulas" / SIGNOFFS_FILE
    if not path.is_file():
        return [], None
    try:
        data = load_file(path)
        return SignOffFile.model_validate(data or {}).signoffs, None
    except YamlError as e:
        return [], f"{SIGNOFFS}:{e.line}: {e.problem}"
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        return [], f"{SIGNOFFS}: {'.'.join(str(x) for x in err['loc'])}: {err['msg']}"


def check(t: sg.Trust, entries: list[SafetySignOff], today: dt.date) -> list[str | None]:
    """For each sign-off, why it fails (key, role, signature, chain, date) or None."""
    from registry.trust.sshsig import SigningError, fingerprint_of, signature_key, verify

    out: list[str | None] = []
    for i, s in enumerate(entries):
        before = entries[i - 1] if i else None
        why = _date_why(s, before, today) or _chain_why(s, before)
        if why is None:
            try:
                blob, namespace = signature_key(s.signature)
                why = _who_why(t, s, fingerprint_of(blob), namespace)
                why = why or verify(t.signers_text, s.principal, statement(s), s.signature, s.date)
            except (ValueError, SigningError) as err:
                why = f"the signature is unreadable: {err}"
        out.append(why)
    return out


def _date_why(s: SafetySignOff, before: SafetySignOff | None, today: dt.date) -> str | None:
    if s.date > today:
        return f"dated {s.date}, after today ({today}): a sign-off is dated the day it is made"
    if before is not None and s.date < before.date:
        return f"dated {s.date}, before the sign-off it follows ({before.date}): the dates never go back"
    return None


def _chain_why(s: SafetySignOff, before: SafetySignOff | None) -> str | None:
    want = entry_hash(before) if before is not None else None
    return None if s.previous == want else "the chain is broken: a sign-off was removed, moved or edited"


def _who_why(t: sg.Trust, s: SafetySignOff, fp: str, namespace: str) -> str | None:
    person = t.person(s.principal)
    if person is None:
        return f"{s.principal} is not a person of formulas/{POLICY_FILE.as_posix()} (people:)"
    if s.principal not in t.principals_of(fp):
        return f"signed with a key that is not {s.principal}'s in allowed_signers"
    if not any(k.valid_on(s.date) for k in t.keys_of(s.principal) if k.fingerprint == fp):
        return f"{s.principal}'s key is not valid on {s.date}"
    if s.role.casefold() not in {r.casefold() for r in person.roles}:
        return f"role {s.role!r} is not one of {s.principal}'s roles"
    if not t.policy.may_sign_safety(s.role):
        return f"role {s.role!r} may not sign the safety case (safety_officer_roles)"
    if namespace != "formula-registry":
        return f"signed for namespace {namespace!r}, not formula-registry"
    return None


@dataclass
class SignOffState:
    """The sign-off as the case reports it."""

    state: str = "none"  # signed | stale | invalid | none
    by: str | None = None
    name: str | None = None
    role: str | None = None
    date: str | None = None
    reason: str | None = None
    verified: bool = False
    covers: int = 0
    log: str | None = None
    stale_for: list[str] = field(default_factory=list)
    hazards_changed: list[str] = field(default_factory=list)
    why: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


def state(reg: Registry, log: Log | None = None) -> SignOffState:
    """The last sign-off, verified, and what changed since it: the calculators it is stale for."""
    log = log if log is not None else read_log(reg.root)
    entries, unreadable = read_signoffs(reg.root)
    if unreadable:
        return SignOffState(state="invalid", why=unreadable)
    if not entries:
        return SignOffState()
    last = entries[-1]
    why = check(sg.trust(reg.formulas_dir), entries, clock.today())[-1]
    out = SignOffState(state="signed", by=last.principal, name=last.name, role=last.role, date=last.date.isoformat(),
                       reason=last.reason, verified=why is None, covers=len(last.covers), log=last.log, why=why)
    if why is not None:
        out.state = "invalid"
        return out
    out.stale_for, out.hazards_changed = changed_since(reg, log, last)
    if out.stale_for or out.hazards_changed or (log is not None and log.digest != last.log):
        out.state = "stale"
    return out


def changed_since(reg: Registry, log: Log | None, s: SafetySignOff) -> tuple[list[str], list[str]]:
    """(calculators whose active version or content changed, or that a changed hazard names; the changed hazards)."""
    now = coverage(reg)
    slugs = {slug for slug in set(now) | set(s.covers) if now.get(slug) != s.covers.get(slug)}
    digests = hazard_digests(log) if log is not None else {}
    hazards = sorted(h for h in set(digests) | set(s.hazards) if digests.get(h) != s.hazards.get(h))
    for h in (log.entries.hazards if log is not None and log.entries else []):
        if h.id in hazards:
            slugs |= set(reg.calculators) if h.calculators == ALL else set(h.calculators)
    return sorted(slugs), hazards


__all__ = ["SafetySignOff", "SignOffState", "check", "coverage", "read_signoffs", "state", "statement"]
