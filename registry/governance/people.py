"""`formula people add|rotate|retire`: who may decide, edited as one change of the trust root.

A person is two entries that must agree: their key line in `formulas/policy/allowed_signers` and their name
and roles under `people:` of `formulas/policy/governance.yaml`. Editing one by hand (`echo >>` into the trust
root) leaves the other behind, and a typo becomes a key nobody can use. These commands check every argument
first (the key as ssh-keygen reads it, the principal, the roles, the dates), build both files in memory
(the policy round-trip: its comments and order kept), check the result as `validate` would, and write both
in one journalled change under the registry lock, touching nothing else.

Nothing is ever deleted: a person's past decisions are verified with their key and roles for ever, so
rotating a key closes the old key's window (`valid-before`) and retiring a person closes their last one.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path
from typing import Any

from registry import clock
from registry.counted_nouns import counted
from registry.errors import ReleaseError
from registry.trust.policy import POLICY_FILE, PRINCIPAL_RE, Policy, read_policy
from registry.trust.sshsig import NAMESPACE, SIGNERS_FILE, Signer, keygen_problems, parse_signers

SIGNERS_REL = f"formulas/{SIGNERS_FILE.as_posix()}"
POLICY_REL = f"formulas/{POLICY_FILE.as_posix()}"


class PeopleError(ReleaseError):
    """A people command cannot go ahead; nothing was written."""


@dataclasses.dataclass(frozen=True)
class Key:
    """A public key read from a .pub file and accepted by ssh-keygen."""

    keytype: str
    blob: str
    comment: str
    path: Path


@dataclasses.dataclass(frozen=True)
class Edit:
    """The two files a people command writes (their new text) and the lines it prints."""

    signers: str
    policy: str
    lines: list[str]


# ---------------------------------------------------------------------- arguments, checked before any I/O


def read_key(path: Path) -> Key:
    """The public key at `path` (or beside a private key), refused unless ssh-keygen itself reads it."""
    from registry.governance.init import InitError, read_public_key
    from registry.trust.sshsig import SigningError, key_problem

    try:
        keytype, blob, comment = read_public_key(path)
        why = key_problem(keytype, blob)
    except (InitError, SigningError) as e:
        raise PeopleError(str(e)) from None
    if why is not None:
        raise PeopleError(f"--key {path}: ssh-keygen cannot read it ({why}); give the .pub file "
                          "`ssh-keygen -t ed25519` wrote")
    return Key(keytype, blob, comment, path)


def check_principal(principal: str) -> str:
    if not re.match(PRINCIPAL_RE, principal or ""):
        raise PeopleError(f"principal {principal!r} must be one literal identity such as ana@example.org "
                          "(letters, digits, . _ + - and one @)")
    return principal


def check_name(name: str) -> str:
    if not name or not name.strip():
        raise PeopleError("--name: give the person's name as decisions should show it (e.g. 'B. Pharmacist')")
    if len(name) > 200 or any(not ch.isprintable() for ch in name):
        raise PeopleError("--name: at most 200 printable characters")
    return " ".join(name.split())


def check_roles(policy: Policy, roles: list[str], new_roles: list[str]) -> list[str]:
    """The person's roles: each a role the committee knows (held by someone, or allowed to approve), or one
    declared new with --new-role; a typo never becomes a role nobody else holds."""
    known = {r.strip().casefold(): r.strip() for r in policy.approver_roles}
    for person in policy.people.values():
        known.update({r.strip().casefold(): r.strip() for r in person.roles})
    out: list[str] = []
    for role in roles:
        r = role.strip()
        if r.casefold() not in known:
            listed = ", ".join(sorted(known.values())) or "none yet"
            raise PeopleError(f"--role {r!r} is not a role of this committee (known: {listed}); check its "
                              "spelling, or give --new-role to add a role no one holds yet")
        out.append(known[r.casefold()])
    for role in new_roles:
        r = role.strip()
        if not r or len(r) > 100 or any(not ch.isprintable() for ch in r):
            raise PeopleError(f"--new-role {role!r}: a role is 1 to 100 printable characters")
        if r.casefold() in known:
            raise PeopleError(f"--new-role {r!r} is already a role of this committee: give it with --role")
        out.append(r)
    if not out:
        raise PeopleError("give at least one role: --role ROLE (a role the committee knows) or --new-role ROLE")
    if len({r.casefold() for r in out}) != len(out):
        raise PeopleError("a role is given twice; give each once")
    return out


def check_day(text: str | None, flag: str) -> dt.date:
    """A day that is today or later: a key window opened or closed in the past would rewrite what decisions
    already signed rest on."""
    today = clock.today()
    if text is None:
        return today
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise PeopleError(f"{flag} must be a real date YYYY-MM-DD, got {text!r}") from None
    if day < today:
        raise PeopleError(f"{flag} {day} is in the past (today is {today}): a key's validity changes from today "
                          "on, never backwards, or decisions already signed would change meaning")
    return day


# ---------------------------------------------------------------------- the allowed_signers lines


def signer_line(principal: str, key: Key | Signer, after: str | None = None, before: str | None = None) -> str:
    keytype, blob = (key.keytype, key.blob) if isinstance(key, Key) else (key.keytype, key.key)
    options = [f'namespaces="{NAMESPACE}"'] + ([f'valid-after="{after}"'] if after else []) + \
        ([f'valid-before="{before}"'] if before else [])
    return f"{principal} {','.join(options)} {keytype} {blob}"


def _stamp(day: dt.date) -> str:
    return day.strftime("%Y%m%d")


def _closed(signers_text: str, principal: str, before: dt.date) -> tuple[str, int]:
    """`signers_text` with every open key line of `principal` valid only before `before` (a window already
    closed earlier is kept); the other lines byte for byte. Returns the text and how many lines changed."""
    signers, _ = parse_signers(signers_text)
    by_line = {s.line: s for s in signers if s.principal == principal}
    lines = signers_text.splitlines()
    changed = 0
    for n, s in by_line.items():
        if s.valid_before is not None and s.valid_before[:8] <= _stamp(before):
            continue
        lines[n - 1] = signer_line(principal, s, s.valid_after, _stamp(before))
        changed += 1
    return "".join(line + "\n" for line in lines), changed


def _appended(signers_text: str, line: str) -> str:
    return signers_text + ("" if not signers_text or signers_text.endswith("\n") else "\n") + line + "\n"


# ---------------------------------------------------------------------- the three edits


@dataclasses.dataclass(frozen=True)
class Current:
    """The trust files as they stand: the allowed_signers text, the policy (validated) and its round-trip form."""

    signers_text: str
    signers: list[Signer]
    policy: Policy
    policy_rt: Any


def current(formulas_dir: Path) -> Current:
    """The trust root read once; refused when it is broken (fix it by hand first: `formula validate` says how)."""
    from registry.trust.policy import PolicyError
    from registry.yamlio import rt_load

    path = formulas_dir / SIGNERS_FILE
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    signers, bad = parse_signers(text)
    if bad:
        raise PeopleError(f"{SIGNERS_REL}:{bad[0][0]}: {bad[0][1]}; fix it first (`formula validate` lists it)")
    try:
        policy = read_policy(formulas_dir)
    except PolicyError as e:
        raise PeopleError(f"{e}; fix it first") from None
    if not (formulas_dir / POLICY_FILE).is_file():
        raise PeopleError(f"{POLICY_REL} is missing: `formula init` makes it, with the first person")
    rt = rt_load(formulas_dir / POLICY_FILE)
    if not rt.get("people"):  # absent, null or `{}`: a block mapping, one person under another, as init writes
        from ruamel.yaml.comments import CommentedMap

        rt["people"] = CommentedMap()
    return Current(text, signers, policy, rt)


def _person_entry(name: str, roles: list[str]) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    return CommentedMap([("name", name), ("roles", CommentedSeq(roles))])  # block style, as `init` writes it


def plan_add(cur: Current, principal: str, key: Key, name: str, roles: list[str], new_roles: list[str]) -> Edit:
    from registry.yamlio import rt_dump

    check_principal(principal)
    if principal in cur.policy.people or any(s.principal == principal for s in cur.signers):
        raise PeopleError(f"{principal} is already a person of this registry ({POLICY_REL}, {SIGNERS_REL}): a "
                          f"new key is `formula people rotate {principal}`; another person needs their own principal")
    taken = [s.principal for s in cur.signers if (s.keytype, s.key) == (key.keytype, key.blob)]
    if taken:
        raise PeopleError(f"--key {key.path} is already the key of {taken[0]}: one key is one person")
    same = [p for p, who in cur.policy.people.items() if who.name.casefold() == name.casefold()]
    if same:
        raise PeopleError(f"--name {name!r} is already the name of {same[0]}: one name is one person")
    roles = check_roles(cur.policy, roles, new_roles)
    cur.policy_rt["people"][principal] = _person_entry(name, roles)
    return Edit(_appended(cur.signers_text, signer_line(principal, key)), rt_dump(cur.policy_rt),
                [f"added {principal}: {name} ({', '.join(roles)})",
                 f"{SIGNERS_REL}: their key {_fingerprint(key)}",
                 f"{POLICY_REL}: people: {principal}"])


def plan_rotate(cur: Current, principal: str, key: Key, day: dt.date) -> Edit:
    """The new key valid from `day`, the old ones up to and including `day` (a decision signed that day with
    either stays valid)."""
    from registry.yamlio import rt_dump

    _known(cur, principal)
    taken = [s.principal for s in cur.signers if (s.keytype, s.key) == (key.keytype, key.blob)]
    if taken:
        raise PeopleError(f"--key {key.path} is already a key of {taken[0]}: rotate to a new key "
                          "(`ssh-keygen -t ed25519 -f NEWPATH`)")
    text, closed = _closed(cur.signers_text, principal, day + dt.timedelta(days=1))
    if not closed:
        raise PeopleError(f"{principal} has no key open after {day}: they are retired; `formula people add` "
                          "with a new principal brings them back")
    text = _appended(text, signer_line(principal, key, _stamp(day)))
    return Edit(text, rt_dump(cur.policy_rt),
                [f"rotated the key of {principal}: {_fingerprint(key)} from {day}",
                 f"{SIGNERS_REL}: {counted(closed, 'old key line')} valid up to {day} (decisions they signed "
                 "stay valid)"])


def plan_retire(cur: Current, principal: str, day: dt.date) -> Edit:
    """Their keys valid up to and including `day`; their name and roles kept, so their decisions stay verified."""
    from registry.yamlio import rt_dump

    _known(cur, principal)
    text, closed = _closed(cur.signers_text, principal, day + dt.timedelta(days=1))
    if not closed:
        raise PeopleError(f"{principal} is already retired: no key of theirs is valid after {day}")
    cur.policy_rt["people"].yaml_add_eol_comment(f"retired: keys valid up to {day}", principal)
    return Edit(text, rt_dump(cur.policy_rt),
                [f"retired {principal}: their keys are valid up to {day}",
                 f"{POLICY_REL}: {principal} kept, so the decisions they signed stay verified"])


def _known(cur: Current, principal: str) -> None:
    check_principal(principal)
    if principal not in cur.policy.people:
        listed = ", ".join(sorted(cur.policy.people)) or "none"
        raise PeopleError(f"{principal} is not a person of this registry (people: {listed}); "
                          "`formula people add` adds one")


def _fingerprint(key: Key) -> str:
    import base64

    from registry.trust.sshsig import fingerprint_of

    return fingerprint_of(base64.b64decode(key.blob))


# ---------------------------------------------------------------------- checked, then written as one change


def checked(edit: Edit) -> Edit:
    """The new files pass what `validate` asks of the trust root (both parse; every key line has a person;
    ssh-keygen reads every line), or nothing is written."""
    from pydantic import ValidationError

    from registry.yamlio import load_text

    signers, bad = parse_signers(edit.signers)
    bad += keygen_problems(edit.signers)
    if bad:
        raise PeopleError(f"the new {SIGNERS_REL} would not be valid (line {bad[0][0]}: {bad[0][1]}); "
                          "nothing was written")
    try:
        policy = Policy.model_validate(load_text(edit.policy))
    except ValidationError as e:
        raise PeopleError(f"the new {POLICY_REL} would not be valid ({e.errors()[0]['msg']}); nothing was "
                          "written") from None
    orphans = sorted({s.principal for s in signers} - set(policy.people))
    if orphans:
        raise PeopleError(f"{SIGNERS_REL} lists {', '.join(orphans)} with no entry in people: of {POLICY_REL}; "
                          "fix it first")
    return edit


def apply(root: Path | None, make: Any) -> str:
    """Run `make(current)` -> Edit under the registry lock, check it, and write both files in one change."""
    from registry.atomic import commit
    from registry.governance.writeplan import writing

    with writing(root) as base:
        formulas_dir = base / "formulas"
        edit = checked(make(current(formulas_dir)))
        commit(base, {formulas_dir / SIGNERS_FILE: edit.signers, formulas_dir / POLICY_FILE: edit.policy})
    return "\n".join(edit.lines + ["next: commit formulas/policy/ as a change of its own (CODEOWNERS review)"])
