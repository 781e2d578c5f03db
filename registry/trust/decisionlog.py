"""The decision log: the statement each decision signs, the chain they form, and what the policy asks of them.

A decision (release, draft, approve, reject, review) is stored on its version entry as a
`registry.schema.Decision`: its fields and an SSHSIG signature (registry.trust.sshsig) of the canonical JSON
statement built here, which also names the calculator, the version, its content hash and effective
date, and the hash of the previous decision in the calculator's log (the versions of its file in
order, each version's decisions in order, then a waiting draft's). So a decision cannot be edited,
moved to another version, deleted from the middle or reordered without failing verification.

The shipped registry's releases predate signing: they are listed, sealed, in
`formulas/policy/recorded_before_signing.yaml` (content hash and a hash of the version record), and
shown as "recorded before signing", never as verified.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Literal

from registry import codes
from registry.counted_nouns import agree
from registry.model import Problem, Registry
from registry.schema import Calculator, Decision, Version, VersionStatus
from registry.trust.policy import POLICY_FILE, Person, Policy, PolicyError, read_policy
from registry.trust.sshsig import (
    SIGNERS_FILE,
    Signer,
    SigningError,
    fingerprint_of,
    keygen_problems,
    parse_signers,
    signature_key,
    verify,
)
from registry.yamlio import YamlError, line_of

LEGACY_FILE = Path("policy") / "recorded_before_signing.yaml"
STATEMENT_FORMAT = "formula-registry decision 1"
TYPED_FIELDS = ("released_by", "approved_by", "approved", "signoffs")  # the honour-system records signing replaces
State = Literal["verified", "recorded_before_signing", "invalid"]


# ---------------------------------------------------------------------- statements and the log


def statement(slug: str, version: str, content: str | None, effective: dt.date, d: Decision) -> bytes:
    """The exact bytes a decision signs: canonical JSON, sorted keys, no spaces."""
    body: dict[str, Any] = {"format": STATEMENT_FORMAT, "slug": slug, "version": version, "content": content,
                            "effective": effective.isoformat(), "decision": d.decision, "principal": d.principal,
                            "role": d.role, "date": d.date.isoformat(), "reason": d.reason, "previous": d.previous}
    if d.next_review is not None:
        body["next_review"] = d.next_review.isoformat()
    if d.name is not None:  # recorded since issue 37: an older statement, without it, still verifies
        body["name"] = d.name
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@dataclasses.dataclass
class Entry:
    """A decision in its place: the version it is on, the content that version has, where it is written."""

    slug: str
    version: str
    effective: dt.date
    content: str | None
    d: Decision
    path: str
    line: int
    in_draft: bool = False

    def statement(self) -> bytes:
        return statement(self.slug, self.version, self.content, self.effective, self.d)

    def hash(self) -> str:
        """What the next decision's `previous` names: the statement and its signature."""
        h = hashlib.sha256(self.statement())
        h.update(b"\0" + self.d.signature.strip().encode("utf-8"))
        return "sha256:" + h.hexdigest()

    def field(self) -> str:
        return f"versions {self.version} {self.d.decision} decision ({self.d.principal}, {self.d.date})"


def file_entries(reg: Registry, c: Calculator, lock: dict[str, str]) -> list[Entry]:
    """The decisions of a calculator's file, in log order."""
    raw = reg.raw.get(c.slug)
    rel = reg.rel(reg.paths[c.slug]) if c.slug in reg.paths else f"formulas/{c.slug}.yaml"
    out = []
    for i, v in enumerate(c.versions):
        for j, d in enumerate(v.decisions):
            out.append(Entry(c.slug, v.version, v.effective, lock.get(v.version), d, rel,
                             line_of(raw, ("versions", i, "decisions", j)) if raw is not None else 1))
    return out


def draft_entries(reg: Registry, slug: str) -> tuple[Calculator, list[Entry]] | None:
    """The waiting draft of `slug` and the decisions on its draft version (the log's tail), or None."""
    from registry.versioned import DRAFTS_DIR, draft_version
    from registry.versions import content_hash, released_content

    found = draft_version(reg, slug)
    if found is None:
        return None
    d, v = found
    view = dataclasses.replace(reg, calculators={**reg.calculators, slug: d}, problems=[], hashes={})
    try:
        content: str | None = content_hash(released_content(view, d, v))
    except Exception:  # noqa: BLE001 - a draft that does not compute is reported by the draft rule
        content = None
    rel = reg.rel(reg.formulas_dir / DRAFTS_DIR / f"{slug}.yaml")
    return d, [Entry(slug, v.version, v.effective, content, x, rel, 1, True) for x in v.decisions]


def head(entries: list[Entry]) -> str | None:
    """What a new decision's `previous` must be."""
    return entries[-1].hash() if entries else None


# ---------------------------------------------------------------------- what is trusted


@dataclasses.dataclass
class Trust:
    """The policy, the keys and the sealed history, read once per check."""

    policy: Policy
    signers_text: str
    signers: list[Signer]
    problems: list[tuple[str, int, str]]  # (file, line, problem) in the trust files themselves
    legacy: dict[str, dict[str, dict[str, Any]]]
    seal: dict[str, str] | None = None  # what REGISTRY.lock fixes of the seal: {"digest", "date"}
    sealed: bool = False  # whether the seal file exists
    policy_error: str | None = None  # the policy file is not valid: what depends on it is not checked (R-POLICY)

    def seal_date(self) -> dt.date | None:
        """The day the history before signing was sealed: no signed decision is dated before it."""
        try:
            return dt.date.fromisoformat(self.seal["date"]) if self.seal else None
        except (KeyError, ValueError):
            return None

    def keys_of(self, principal: str) -> list[Signer]:
        return [s for s in self.signers if s.principal == principal]

    def principals_of(self, fingerprint: str) -> set[str]:
        return {s.principal for s in self.signers if s.fingerprint == fingerprint}

    def person(self, principal: str) -> Person | None:
        return self.policy.people.get(principal)


def trust_of(reg: Registry) -> Trust:
    """The trust files of this loaded registry, read once for it (readers and validation). The validated
    snapshot keeps them, and its key covers their bytes, so it never stands for other files: a warm `history`
    read them in 52 ms of its 0.28 s. Writers read them afresh with `trust`."""
    if reg.trust_memo is None:
        reg.trust_memo = trust(reg.formulas_dir)
    memo: Trust = reg.trust_memo
    return memo


def trust(formulas_dir: Path) -> Trust:
    from registry.yamlio import load_file

    problems: list[tuple[str, int, str]] = []
    policy_error = None
    try:
        pol = read_policy(formulas_dir)
    except PolicyError as e:
        pol, policy_error = Policy(), str(e)  # reported by the policy rule; the strict defaults hold meanwhile
    path = formulas_dir / SIGNERS_FILE
    rel = f"formulas/{SIGNERS_FILE.as_posix()}"
    from registry.plain_files import FileRefused, read_text

    try:
        text = read_text(path, 1 << 20) if os.path.lexists(path) else ""
    except FileRefused as e:
        problems.append((rel, 1, e.why))
        text = ""
    except (OSError, UnicodeDecodeError) as e:
        problems.append((rel, 1, f"cannot be read ({e})"))
        text = ""
    signers, bad = parse_signers(text)
    problems += [(rel, n, why) for n, why in bad]
    refused = {n for n, _ in bad}  # ssh-keygen reads the file too: a line it cannot parse is named here
    problems += [(rel, n, f"ssh-keygen cannot read this line ({why}): every decision by its key would fail")
                 for n, why in keygen_problems(text) if n not in refused]
    by_key: dict[str, set[str]] = {}
    for s in signers:
        by_key.setdefault(s.fingerprint, set()).add(s.principal)
        if s.principal not in pol.people and policy_error is None:
            problems.append((rel, s.line, f"principal {s.principal} has no entry in people: of "
                                          f"formulas/{POLICY_FILE.as_posix()} (a name and roles)"))
    problems += _shared_names(pol)
    for fp, who in sorted(by_key.items()):
        if len(who) > 1:
            line = min(s.line for s in signers if s.fingerprint == fp)
            problems.append((rel, line, f"key {fp} is listed for several principals ({', '.join(sorted(who))}): one "
                                        "key is one person, or four eyes cannot tell them apart"))
    legacy: dict[str, dict[str, dict[str, Any]]] = {}
    lpath = formulas_dir / LEGACY_FILE
    if lpath.exists():
        try:
            data = load_file(lpath)
            legacy = {str(k): {str(v): dict(e) for v, e in dict(vs).items()} for k, vs in dict(data or {}).items()}
        except (YamlError, TypeError, ValueError, AttributeError):
            problems.append((f"formulas/{LEGACY_FILE.as_posix()}", 1, "unreadable: a mapping slug -> version -> "
                                                                     "{content, record}"))
    from registry.model import LOCK_FILE
    from registry.versions import lock_seal

    try:
        seal = lock_seal(formulas_dir / LOCK_FILE)
    except ValueError:
        seal = None  # an unreadable lock is the lock rule's problem
    return Trust(pol, text, signers, problems, legacy, seal, os.path.lexists(lpath), policy_error)


def _shared_names(pol: Policy) -> list[tuple[str, int, str]]:
    """Two principals under one name: a reader could not tell who decided, and one person holding two principals
    (and two keys) could approve their own draft under the other."""
    by_name: dict[str, list[str]] = {}
    for principal, person in pol.people.items():
        by_name.setdefault(" ".join(person.name.split()).casefold(), []).append(principal)
    return [(f"formulas/{POLICY_FILE.as_posix()}", 1, f"principals {', '.join(sorted(who))} share the name "
             f"{pol.people[who[0]].name!r}: one name is one person (people:); give each their own")
            for who in by_name.values() if len(who) > 1]


def seal_digest(data: Any) -> str:
    """The digest REGISTRY.lock fixes the seal's entries by (their data: comments may change, entries never)."""
    blob = json.dumps(data or {}, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


def seal_day(reg: Registry, data: Any) -> str:
    """The latest effective date of the versions `data` seals: the seal's date when no lock recorded one."""
    days = [v.effective for slug, vs in dict(data or {}).items() if slug in reg.calculators
            for v in reg.calculators[slug].versions if v.version in dict(vs or {})]
    return max(days).isoformat() if days else "1970-01-01"


def seal_problems(reg: Registry, t: Trust) -> list[Problem]:
    """The seal is closed: REGISTRY.lock fixes its entries by digest and date, and no version it lists came later."""
    rel = f"formulas/{LEGACY_FILE.as_posix()}"
    lock = reg.rel(reg.lock_path)
    if not t.sealed:
        if t.seal is None:
            return []
        return [Problem(rel, 1, "(seal)", f"is missing, but {lock} fixes a seal of the history before signing "
                        f"(sealed_before_signing, {t.seal.get('date')}): history is never deleted", codes.SIGNATURE)]
    if t.seal is None:
        return [Problem(rel, 1, "(seal)", f"is not fixed by {lock} (sealed_before_signing: digest and date): the "
                        "history before signing is closed when signing begins; restore the lock's record",
                        codes.SIGNATURE)]
    out = []
    if t.seal.get("digest") != seal_digest(t.legacy):
        out.append(Problem(rel, 1, "(seal)", f"holds other entries than the seal {lock} fixed on "
                           f"{t.seal.get('date')} (sealed_before_signing.digest): the history before signing is "
                           "closed, so nothing is added to it (a version added there would pass as released "
                           "without a signed decision); release it with signed decisions instead",
                           codes.SIGNATURE))
    day = t.seal_date()
    for slug, versions in sorted(t.legacy.items()) if day is not None else []:
        c = reg.calculators.get(slug)
        for v in c.versions if c is not None else []:
            if v.version not in versions or day is None:
                continue
            where = (reg.rel(reg.paths[slug]), line_of(reg.raw.get(slug), ("versions",)), f"versions {v.version}")
            if v.effective > day:
                out.append(Problem(*where, f"is effective {v.effective}, after the seal of history before signing "
                                   f"({day}), yet listed in {rel}: it needs signed decisions", codes.SIGNATURE))
            late = sorted(d for d in typed_dates(v) if d > day)
            if late:
                out.append(Problem(*where, f"records a decision dated {late[-1]}, after the seal of history before "
                                   f"signing ({day}), yet is listed in {rel}: what was decided after the seal needs "
                                   "signed decisions", codes.SIGNATURE))
    return out


def typed_dates(v: Version) -> list[dt.date]:
    """The dates of a version's typed records (release, approval, sign-offs): what was decided before signing."""
    out = [s.date for s in (v.released_by, v.approved_by) if s is not None] + [s.date for s in v.signoffs]
    return out + ([v.approved] if v.approved is not None else [])


def resealed(formulas_dir: Path, before: dict[str, dict[str, str]], after: dict[str, dict[str, str]]) -> str | None:
    """The sealed history with the content hashes `formula lock --rehash` rewrote; None when nothing sealed moved.

    Rehash verifies every released version under the old scheme first, so the content sealed is the content
    rehashed. Signed decisions name lock hashes too: rehash before signing."""
    from registry.yamlio import dump, load_file

    path = formulas_dir / LEGACY_FILE
    if not path.exists():
        return None
    data = load_file(path) or {}
    moved = False
    for slug, versions in data.items():
        for version, entry in (versions or {}).items():
            old, new = before.get(slug, {}).get(version), after.get(slug, {}).get(version)
            if isinstance(entry, dict) and new is not None and new != old and entry.get("content") != new:
                entry["content"] = new
                moved = True
    if not moved:
        return None
    from registry.plain_files import read_text

    header = "".join(line for line in read_text(path).splitlines(keepends=True)
                     if line.startswith("#"))
    return header + dump(data)


def record_hash(v: Version) -> str:
    """A hash of a version's record as recorded before signing: who, when, why (status, decisions and reviews may
    move later; the text is content, which the seal's content hash and the lock rules cover). Kept per version
    object, and in the snapshot (registry.snapshot_extras): every audit of a sealed version asks for it."""
    from registry.model_memo import kept

    return kept("record", v, _record_hash)


def _record_hash(v: Version) -> str:
    from registry.versions import content_hash

    return content_hash(v.model_dump(mode="json", exclude_defaults=True,
                                      exclude={"status", "decisions", "last_review", "next_review", "text"}))


def legacy_seal(reg: Registry) -> dict[str, dict[str, dict[str, Any]]]:
    """The seal of every released version as it stands (run once, when a registry starts signing)."""
    from registry.versions import read_lock, released

    lock = read_lock(reg.lock_path)
    return {slug: {v.version: {"content": lock.get(slug, {}).get(v.version), "record": record_hash(v),
                               "last_review": v.last_review.isoformat() if v.last_review else None,
                               "next_review": v.next_review.isoformat() if v.next_review else None}
                   for v in released(c)}
            for slug, c in sorted(reg.calculators.items())}


# ---------------------------------------------------------------------- checking one calculator


@dataclasses.dataclass
class Checked:
    entry: Entry
    fingerprint: str | None
    why: str | None


@dataclasses.dataclass
class Audit:
    """What checking a calculator found: each decision with its verdict, the problems, its active version's state."""

    checked: list[Checked]
    problems: list[Problem]
    legacy: set[str]  # versions recorded before signing
    active: str | None  # the active version
    active_state: State
    approvals: dict[str, list[str]]  # version -> the principals whose approvals count


def check_signature(t: Trust, e: Entry) -> tuple[str | None, str | None]:
    """(fingerprint, why it fails or None) for one decision's signature, identity and role."""
    d = e.d
    try:
        blob, namespace = signature_key(d.signature)
    except ValueError as err:
        return None, f"the signature is unreadable: {err}"
    fp = fingerprint_of(blob)
    person = t.person(d.principal)
    if person is None:
        return fp, f"{d.principal} is not a person of formulas/{POLICY_FILE.as_posix()} (people:)"
    holders = t.principals_of(fp)
    if not holders:
        return fp, f"unknown key {fp}: it is not in formulas/{SIGNERS_FILE.as_posix()}"
    if d.principal not in holders:
        return fp, f"signed with the key of {', '.join(sorted(holders))}, not of {d.principal}"
    if len(holders) > 1:
        return fp, f"key {fp} is listed for several principals ({', '.join(sorted(holders))})"
    lines = [s for s in t.keys_of(d.principal) if s.fingerprint == fp]
    if not any(s.valid_on(d.date) for s in lines):
        return fp, f"key {fp} of {d.principal} is not valid on {d.date} ({lines[0].window()})"
    if d.role.casefold() not in {r.casefold() for r in person.roles}:
        return fp, f"role {d.role!r} is not one of {d.principal}'s roles ({', '.join(person.roles)})"
    if e.content is None:
        return fp, f"{e.version} has no content hash (REGISTRY.lock) for the statement to match"
    if namespace != "formula-registry":
        return fp, f"signed for namespace {namespace!r}, not formula-registry"
    try:
        refused = verify(t.signers_text, d.principal, e.statement(), d.signature, d.date)
    except SigningError as err:
        return fp, str(err)
    if refused is not None:
        return fp, ("the signature does not match the statement: a signed field, the content or the version was "
                    f"changed, or the signature was moved here from another decision ({refused})")
    return fp, None


def date_why(e: Entry, before: Entry | None, today: dt.date, floor: dt.date | None = None) -> str | None:
    """Why a decision's date cannot be true, or None: never after today, never before the decision it follows.

    The key's window is checked at this date (check_signature), so a date moved back into an expired key's
    window, or forward into a key valid only later, must also break the order of the log or pass today."""
    if e.d.date > today:
        return f"dated {e.d.date}, after today ({today}): a decision is dated the day it is made"
    if floor is not None and e.d.date < floor:
        return (f"dated {e.d.date}, before signing began (the history before signing was sealed on {floor}, "
                f"formulas/{LEGACY_FILE.as_posix()}): a signed decision is never older than the seal")
    if before is not None and e.d.date < before.d.date:
        return (f"dated {e.d.date}, before the decision it follows ({before.d.decision} by {before.d.principal} "
                f"on {before.d.date}): a log's dates never go back")
    return None


def _dates(entries: list[Entry], verdicts: dict[int, str | None], floor: dt.date | None) -> None:
    """A date that cannot be true is the first thing said of a decision (its signature may be fine)."""
    from registry import clock

    today = clock.today()
    for i, e in enumerate(entries):
        verdicts[i] = date_why(e, entries[i - 1] if i else None, today, floor) or verdicts.get(i)


def _chain(entries: list[Entry], verdicts: dict[int, str | None]) -> None:
    for i, e in enumerate(entries):
        want = entries[i - 1].hash() if i else None
        if e.d.previous != want and verdicts.get(i) is None:
            verdicts[i] = ("the chain is broken: it does not follow the decision before it in the log (a decision was "
                           "deleted, reordered or edited)" if i else
                           "the chain is broken: the first decision of the log names a previous one (one was deleted)")


def tally(t: Trust, slug: str, version: list[Checked]) -> tuple[list[str], list[tuple[Checked, str]]]:
    """The principals whose approvals count for one version, and what breaks the policy."""
    pol = t.policy
    bad: list[tuple[Checked, str]] = []
    if not version:
        return [], []
    first = version[0]
    if first.entry.d.decision not in ("release", "draft"):
        bad.append((first, f"a version's first decision is its release or draft, not {first.entry.d.decision}"))
        return [], bad
    author, author_fp = first.entry.d.principal, first.fingerprint
    counted: list[str] = []
    keys: set[str | None] = set()
    if first.entry.d.decision == "release" and first.why is None and not pol.four_eyes \
            and pol.role_allowed(first.entry.d.role):
        counted.append(author)
        keys.add(author_fp)
    for x in version[1:]:
        d = x.entry.d
        if d.decision != "approve" or x.why is not None:
            continue
        if pol.four_eyes and d.principal == author:
            bad.append((x, f"self-approval: {author} made this version and cannot approve it (four eyes)"))
        elif pol.four_eyes and x.fingerprint == author_fp:
            bad.append((x, f"approved with the author's key ({author}) under another principal (four eyes)"))
        elif not pol.role_allowed(d.role):
            bad.append((x, f"role {d.role!r} may not approve under formulas/{POLICY_FILE.as_posix()} (approver_roles: "
                           + ", ".join(pol.approver_roles) + ")"))
        elif d.principal not in counted and x.fingerprint not in keys:
            counted.append(d.principal)
            keys.add(x.fingerprint)
    return counted, bad


def audit(reg: Registry, c: Calculator, t: Trust, lock: dict[str, str] | None = None) -> Audit:
    """Check every decision of one calculator: signatures, the chain, the policy, the sealed history."""
    from registry.versions import read_lock

    if lock is None:
        lock = read_lock(reg.lock_path).get(c.slug, {})
    entries = file_entries(reg, c, lock)
    draft = draft_entries(reg, c.slug)
    if draft is not None:
        entries += draft[1]
    verdicts: dict[int, str | None] = {}
    fps: dict[int, str | None] = {}
    for i, e in enumerate(entries):
        fps[i], verdicts[i] = check_signature(t, e)
    _dates(entries, verdicts, t.seal_date())
    _chain(entries, verdicts)
    checked = [Checked(e, fps[i], verdicts[i]) for i, e in enumerate(entries)]
    out = Audit(checked, [], set(), None, "invalid", {})
    problems: list[tuple[str, int, str, str]] = [(x.entry.path, x.entry.line, x.entry.field(), x.why)
                                                 for x in checked if x.why]
    _versions(reg, c, t, lock, out, problems)
    out.problems = [Problem(p, line, f, why, codes.SIGNATURE) for p, line, f, why in problems]
    return out


def _versions(reg: Registry, c: Calculator, t: Trust, lock: dict[str, str], out: Audit,
              problems: list[tuple[str, int, str, str]]) -> None:
    """The rules on each version: sealed history, no typed sign-offs, reviews signed, active approved."""
    sealed = t.legacy.get(c.slug, {})
    rel = reg.rel(reg.paths[c.slug]) if c.slug in reg.paths else f"formulas/{c.slug}.yaml"
    raw = reg.raw.get(c.slug)
    pol = t.policy
    for i, v in enumerate(c.versions):
        mine = [x for x in out.checked if x.entry.version == v.version and not x.entry.in_draft]
        where = line_of(raw, ("versions", i)) if raw is not None else 1
        seal = sealed.get(v.version)
        if seal is not None:
            if seal.get("content") != lock.get(v.version) or seal.get("record") != record_hash(v):
                problems.append((rel, where, f"versions {v.version}", "differs from the record sealed before signing "
                                 f"(formulas/{LEGACY_FILE.as_posix()}): a field recorded then (approved_by, changelog, "
                                 "dates, content) was edited"))
            else:
                out.legacy.add(v.version)
        elif pol.require_signatures and v.status != VersionStatus.draft:
            for f in TYPED_FIELDS:
                if getattr(v, f):
                    problems.append((rel, where, f"versions {v.version} {f}", f"a typed {f} is not a decision: "
                                     "decisions are signed (`formula approve --key ...`); remove it"))
            if not any(x.entry.d.decision in ("release", "draft") for x in mine):
                problems.append((rel, where, f"versions {v.version}", "has no signed release or draft decision and "
                                 "was not recorded before signing"))
        _reviews(v, mine, seal, rel, where, problems)
        if v.status == VersionStatus.active:
            out.active = v.version
            if v.version in out.legacy:
                out.active_state = "recorded_before_signing"
            elif seal is None:
                out.active_state = _approved(t, c.slug, v, mine, out, problems, rel, where)


def _approved(t: Trust, slug: str, v: Version, mine: list[Checked], out: Audit,
              problems: list[tuple[str, int, str, str]], rel: str, where: int) -> State:
    counted, bad = tally(t, slug, [x for x in mine if x.entry.d.decision != "review"])
    out.approvals[v.version] = counted
    problems += [(x.entry.path, x.entry.line, x.entry.field(), why) for x, why in bad]
    need = t.policy.required(slug)
    if t.policy.require_signatures and len(counted) < need:
        problems.append((rel, where, f"versions {v.version}", f"too few approvers: {len(counted)} of {need} "
                         f"required ({', '.join(counted) or 'none'}); a version becomes active only through "
                         "signed approvals that satisfy the policy"))
    ok = not bad and len(counted) >= need and all(x.why is None for x in mine) and bool(mine)
    return "verified" if ok else "invalid"


def _reviews(v: Version, mine: list[Checked], seal: dict[str, Any] | None, rel: str, where: int,
             problems: list[tuple[str, int, str, str]]) -> None:
    """last_review and next_review say what the last signed review signed (or what was sealed before signing)."""
    reviews = [x.entry.d for x in mine if x.entry.d.decision == "review"]
    want: tuple[str | None, str | None]
    if reviews:
        want = (reviews[-1].date.isoformat(), reviews[-1].next_review.isoformat() if reviews[-1].next_review else None)
    elif seal is not None:
        want = (seal.get("last_review"), seal.get("next_review"))
    else:
        want = (None, None)
    have = (v.last_review.isoformat() if v.last_review else None, v.next_review.isoformat() if v.next_review else None)
    if have != want:
        problems.append((rel, where, f"versions {v.version} last_review/next_review",
                         f"say {have[0]}/{have[1]}, but the last signed review says {want[0]}/{want[1]}: review "
                         "dates are set by `formula review --key ...`, not typed"))


def draft_state(t: Trust, a: Audit, slug: str) -> tuple[list[str], int, list[str]]:
    """(principals whose approvals count, approvals required, problems) for the waiting draft in `a`."""
    mine = [x for x in a.checked if x.entry.in_draft]
    counted, bad = tally(t, slug, mine)
    why = [w for _, w in bad] + [x.why for x in mine if x.why]
    return counted, t.policy.required(slug), why


# ---------------------------------------------------------------------- the whole registry


def check(reg: Registry) -> None:
    """Validation's signature rule: every decision's signature and chain, the policy on active versions."""
    from registry.versions import read_lock

    t = trust_of(reg)
    for f, line, why in t.problems:
        reg.problems.append(Problem(f, line, "(signers)", why, codes.SIGNATURE))
    reg.problems.extend(seal_problems(reg, t))
    if t.policy_error is not None:
        return  # the policy rule's one problem says so: decisions are judged by a policy that reads
    from registry.versions import LOCK_FORMAT, lock_format

    try:
        lock = read_lock(reg.lock_path) if reg.lock_path.exists() else {}
        if lock_format(reg.lock_path) != LOCK_FORMAT:
            return  # hashes of an older scheme cannot match what was sealed or signed: `formula lock --rehash` first
    except ValueError:
        return  # an unreadable lock is the lock rule's problem to report; nothing here can be checked against it
    for slug, sealed in sorted(t.legacy.items()):
        c = reg.calculators.get(slug)
        gone = sorted(set(sealed) - {v.version for v in c.versions}) if c is not None else []
        if gone:
            what = f"{agree(len(gone), 'version', 'versions')} {', '.join(gone)}"
            reg.problems.append(Problem(reg.rel(reg.paths[slug]), 1, "versions", f"{what} recorded before signing "
                                        f"(formulas/{LEGACY_FILE.as_posix()}) {agree(len(gone), 'is', 'are')} "
                                        "missing: history is never deleted", codes.SIGNATURE))
    for slug, c in sorted(reg.calculators.items()):
        try:
            reg.problems.extend(audit(reg, c, t, lock.get(slug, {})).problems)
        except (ValueError, StopIteration):
            continue  # a calculator without an active version: the versions rule reports it


# ---------------------------------------------------------------------- making a decision


def not_future(day: dt.date) -> None:
    """SigningError when `day` has not come on this machine's clock ($FORMULA_TODAY may replay a past day only)."""
    from registry import clock

    real = clock.real_today()
    if day > real:
        raise SigningError(f"the decision would be dated {day} (${clock.ENV}), after this machine's clock ({real}): "
                           f"a decision is signed on the day it is made; unset ${clock.ENV} or set it to a day that "
                           "has come")


@dataclasses.dataclass(frozen=True)
class Identity:
    """Who a signing key is: its principal in allowed_signers, their entry in people:, the key's fingerprint."""

    key: Path
    principal: str
    person: Person
    fingerprint: str
    signer: Signer


def identify(t: Trust, key: Path, by: str | None, role: str | None, day: dt.date) -> tuple[Identity, str]:
    """The identity of `key` and the role it acts in; SigningError when the key may not decide."""
    import base64

    from registry.trust.sshsig import public_key

    not_future(day)
    _, blob = public_key(key)
    fp = fingerprint_of(base64.b64decode(blob))
    holders = t.principals_of(fp)
    signers = f"formulas/{SIGNERS_FILE.as_posix()}"
    if not holders:
        raise SigningError(f"the key {key} ({fp}) is not in {signers}: a committee member adds it (user "
                           "guide, docs/guide/committee.md, People, keys and the policy)")
    if len(holders) > 1:
        raise SigningError(f"the key {key} ({fp}) is listed for several principals ({', '.join(sorted(holders))}) "
                           f"in {signers}: fix that file first")
    principal = holders.pop()
    if by is not None and by.strip() != principal:
        raise SigningError(f"--by {by.strip()!r} is not who this key is: it is {principal}'s key ({fp}); the "
                           "identity recorded is the key's")
    person = t.person(principal)
    if person is None:
        raise SigningError(f"{principal} has no entry in people: of formulas/{POLICY_FILE.as_posix()}")
    signer = next(s for s in t.signers if s.fingerprint == fp)
    if not signer.valid_on(day):
        raise SigningError(f"{principal}'s key {fp} is not valid on {day} ({signer.window()})")
    if role is None:
        return Identity(key, principal, person, fp, signer), person.roles[0]
    chosen = next((r for r in person.roles if r.casefold() == role.strip().casefold()), None)
    if chosen is None:
        raise SigningError(f"--role {role.strip()!r} is not one of {principal}'s roles ({', '.join(person.roles)}) "
                           f"in formulas/{POLICY_FILE.as_posix()}")
    return Identity(key, principal, person, fp, signer), chosen


def decide(ident: Identity, role: str, *, slug: str, version: str, content: str, effective: dt.date,
           decision: str, day: dt.date, reason: str, previous: str | None,
           next_review: dt.date | None = None) -> dict[str, Any]:
    """A signed decision, as the plain mapping written to the version entry; never dated after the machine's clock
    ($FORMULA_TODAY replays a day that has come, it cannot sign one that has not)."""
    from registry.trust.sshsig import sign

    not_future(day)

    d = Decision(decision=decision, principal=ident.principal, role=role, name=ident.person.name, date=day,
                 reason=reason, previous=previous, next_review=next_review, signature="-")
    sig = sign(ident.key, statement(slug, version, content, effective, d))
    out: dict[str, Any] = {"decision": decision, "principal": ident.principal, "role": role,
                           "name": ident.person.name, "date": day, "reason": reason}
    if previous is not None:
        out["previous"] = previous
    if next_review is not None:
        out["next_review"] = next_review
    out["signature"] = sig
    return out
