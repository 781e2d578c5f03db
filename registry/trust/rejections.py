"""Rejected drafts on record (formulas/drafts/rejected/<slug>.yaml), checked like every other decision.

`formula reject` moves a draft's decisions and the signed rejection into this file, with the content hash
they sign (the draft file is gone). Validation verifies each record: every signature, the chain inside it
(its first decision follows a decision of the calculator's log, or none), the draft decision first (when
the draft was signed) and the rejection last.
So a rejection cannot be edited, forged under another name or moved to another draft unnoticed.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from registry import codes
from registry.model import Problem, Registry
from registry.schema import Decision, Version
from registry.trust.decisionlog import Entry, Trust, check_signature, date_why, file_entries, trust_of
from registry.yamlio import YamlError, line_of, load_file

REJECTED_DIR = Path("drafts") / "rejected"  # under formulas/
MAX_DECISIONS = Version.model_fields["decisions"].metadata[0].max_length  # the schema's cap on a version's


def check(reg: Registry) -> None:
    """Validation's rule on the rejection records: each is an R-SIGNATURE problem naming file, record and why.
    (The trust files' own problems are the decision log's rule's to report.)"""
    from registry.versions import LOCK_FORMAT, lock_format, read_lock

    if not (reg.formulas_dir / REJECTED_DIR).is_dir():
        return  # nothing on record
    try:
        if lock_format(reg.lock_path) != LOCK_FORMAT:
            return  # hashes of an older scheme: `formula lock --rehash` first
        lock = read_lock(reg.lock_path) if reg.lock_path.exists() else {}
    except ValueError:
        return  # an unreadable lock is the lock rule's problem to report; nothing here can be checked against it
    t = trust_of(reg)
    for p in sorted((reg.formulas_dir / REJECTED_DIR).glob("*.yaml")):
        rel = reg.rel(p)
        for line, fld, why in _file(reg, t, p, lock):
            reg.problems.append(Problem(rel, line, fld, why, codes.SIGNATURE))


def _file(reg: Registry, t: Trust, p: Path, lock: dict[str, dict[str, str]]) -> list[tuple[int, str, str]]:
    c = reg.calculators.get(p.stem)
    if c is None:
        return [(1, "(rejections)", f"names no calculator: a rejection record is named after the calculator "
                                    f"whose draft was rejected ({p.stem}.yaml)")]
    try:
        data = load_file(p)
    except (YamlError, OSError, UnicodeDecodeError) as e:
        return [(1, "(rejections)", f"unreadable ({str(e).splitlines()[0]})")]
    if not isinstance(data, list):
        return [(getattr(data, "line", 1), "(rejections)", "must be a list of rejected drafts, as `formula reject` "
                                                            "writes it")]
    known = {e.hash() for e in file_entries(reg, c, lock.get(c.slug, {}))}
    out: list[tuple[int, str, str]] = []
    for i, rec in enumerate(data):
        out += _record(t, c.slug, reg.rel(p), data, i, rec, known)
    return out


def _record(t: Trust, slug: str, rel: str, data: Any, i: int, rec: Any,
            known: set[str]) -> list[tuple[int, str, str]]:
    """The problems of record `i`: (line, field, why)."""
    where = line_of(data, (i,))
    version = str(rec.get("version")) if isinstance(rec, dict) else "?"
    fld = f"rejection {i + 1} (version {version})"
    if not isinstance(rec, dict):
        return [(where, fld, "must be a mapping (version, changelog, effective, content, decisions)")]
    if "decisions" not in rec:
        if t.policy.require_signatures:
            return [(where, fld, "a typed rejection (rejected_by) is not a decision: under require_signatures "
                                 "rejections are signed (`formula reject --key ...`)")]
        return []
    entries, bad = _entries(slug, rel, data, i, rec, version)
    if bad:
        return [(where, fld, bad)]
    kinds = [e.d.decision for e in entries]
    if kinds[-1] != "reject" or kinds.count("reject") != 1 or (len(kinds) > 1 and kinds[0] != "draft"):
        return [(where, fld, "a rejection record holds the draft's decisions (its draft decision first; none when "
                             "the draft was typed) and one reject decision, last")]
    from registry import clock

    out, today = [], clock.today()
    for j, e in enumerate(entries):
        _, why = check_signature(t, e)
        if why is None:
            why = date_why(e, entries[j - 1] if j else None, today, t.seal_date())
        if why is None:
            why = _chain_why(entries, j, known)
        if why is not None:
            out.append((e.line, f"{fld} {e.d.decision} decision ({e.d.principal}, {e.d.date})", why))
    return out


def _entries(slug: str, rel: str, data: Any, i: int, rec: dict[str, Any],
             version: str) -> tuple[list[Entry], str | None]:
    """The record's decisions as log entries, or why they cannot be read."""
    content = rec.get("content")
    if not isinstance(content, str):
        return [], "records no content hash (content:): the decisions it holds cannot be verified"
    try:
        effective = rec.get("effective")
        day = effective if isinstance(effective, dt.date) else dt.date.fromisoformat(str(effective))
        raw = rec["decisions"] or []
        if isinstance(raw, list) and len(raw) > MAX_DECISIONS:  # each costs one ssh-keygen run, as on a version
            return [], f"holds {len(raw)} decisions, more than the {MAX_DECISIONS} a version may hold"
        ds = [Decision.model_validate(x) for x in raw]
    except (ValueError, TypeError, ValidationError) as e:
        return [], f"unreadable ({str(e).splitlines()[0]})"
    if not ds:
        return [], "holds no decisions"
    return [Entry(slug, version, day, content, d, rel, line_of(data, (i, "decisions", j)), True)
            for j, d in enumerate(ds)], None


def _chain_why(entries: list[Entry], j: int, known: set[str]) -> str | None:
    prev = entries[j].d.previous
    if j:
        if prev != entries[j - 1].hash():
            return ("the chain is broken: it does not follow the decision before it in the record (a decision was "
                    "deleted, reordered or edited)")
        return None
    if prev is not None and prev not in known:
        return ("the chain is broken: the draft's first decision follows no decision of the calculator's log (the "
                "record was moved here from another calculator or forged)")
    return None


def on_record(reg: Registry, slug: str) -> list[tuple[str, list[tuple[Decision, str | None, str | None, str | None,
                                                                      str | None]]]]:
    """Each signed rejected draft of `slug` on record, oldest first: its version and its decisions, each as
    (decision, verified principal, their name, key fingerprint, why it fails). A record that cannot be read
    is left out (validation names it)."""
    p = reg.formulas_dir / REJECTED_DIR / f"{slug}.yaml"
    if not p.is_file() or p.is_symlink():
        return []
    try:
        data = load_file(p)
    except (YamlError, OSError, UnicodeDecodeError):
        return []
    if not isinstance(data, list):
        return []
    t = trust_of(reg)
    out = []
    for i, rec in enumerate(data):
        if not isinstance(rec, dict) or "decisions" not in rec:
            continue
        version = str(rec.get("version"))
        entries, bad = _entries(slug, reg.rel(p), data, i, rec, version)
        if bad:
            continue
        checked = []
        for e in entries:
            fp, why = check_signature(t, e)
            person = t.person(e.d.principal) if why is None else None
            checked.append((e.d, e.d.principal if why is None else None, person.name if person else None, fp, why))
        out.append((version, checked))
    return out
