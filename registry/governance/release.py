"""`formula release` and `formula fix`: an edited calculator becomes a new version (or a draft of one).

Every command here checks its arguments before it touches a file, holds the registry lock, edits YAML
round-trip (comments and order kept) and writes all its files as one transaction. A new version can be a
draft (`formulas/drafts/<slug>.yaml`, a copy of the file with the draft version appended, invisible to the
library) that becomes active through `formula approve` (registry.governance.approving); a version whose
effective date lies in the future waits there, approved, until `formula activate` on or after that day.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from registry import clock, plain_files
from registry import versions as ver
from registry.counted_nouns import agree, counted
from registry.errors import ReleaseError
from registry.governance.acting import identity_of, intact, policy_of, signed_record, signoff
from registry.governance.arguments import parse_assignments, parse_date, parse_labels, reason_of, who_of
from registry.governance.deciding import main_head, signing
from registry.governance.writeplan import (
    Plan,
    active_index,
    after_checks,
    calculator,
    dependants,
    draft_path,
    loaded,
    plain,
    released_file,
    restore_text,
    validated,
    view,
    writing,
)
from registry.loader import Registry
from registry.schema import Calculator, Decision, VersionStatus, constant_problem
from registry.texts import TEXTS_DIR
from registry.trust.policy import POLICY_FILE, Policy
from registry.versioned import unreleased
from registry.yamlio import rt_dump, rt_load

if TYPE_CHECKING:
    pass


def _apply_sets(calc: Calculator, rt: Any, assignments: dict[str, int | float], names: dict[str, str],
                formula_name: str | None = None, publication: dict[str, Any] | None = None) -> None:
    """Set constants (and their labels, the formula's name and its cited publication) in a round-trip file, each
    checked first."""
    slug = calc.slug
    if formula_name is not None:
        rt["formula"]["name"] = formula_name
    if publication is not None:
        rt["formula"]["publication"] = publication
    consts = rt.get("constants") or {}
    for name, value in assignments.items():
        if name not in consts:
            raise ReleaseError(f"{slug} has no constant {name!r}; constants: {', '.join(consts) or 'none'}")
        problem = constant_problem(calc.constants[name], value)
        if problem:
            raise ReleaseError(f"--set {name}={value!r}: {problem} (formulas/{slug}.yaml constants.{name})")
        consts[name]["value"] = value
        label = calc.constants[name].label
        if label and name not in names:
            raise ReleaseError(f"--set {name}: this constant's value is the {label!r} (texts show the name beside "
                               f"the number); say what the new value is called with --label {name}=NAME (or "
                               f"--label {name}={label!r} to keep it)")
    for name, text in names.items():
        if name not in consts:
            raise ReleaseError(f"--label: {slug} has no constant {name!r}")
        consts[name]["label"] = text


@dataclasses.dataclass
class _Deciding:
    """Who makes a release and what it becomes: signed (a draft under four eyes) or typed (no signatures required)."""

    who: tuple[str, str] | None
    signer: tuple[Any, str] | None
    kind: str
    forced: bool
    self_approved: bool
    draft: bool


def _deciders(reg: Registry, pol: Policy, targets: list[str], signer: tuple[str | Path | None, str | None, str | None],
              draft: bool, effective: dt.date, today: dt.date) -> _Deciding:
    key, by, role = signer
    if signing(pol, key):
        t, ident, acting = identity_of(reg, key, by, role, today)
        for s in targets:
            intact(reg, reg.calculators[s], t)
        direct = not pol.four_eyes and pol.role_allowed(acting) and all(pol.required(s) == 1 for s in targets)
        forced = not draft and not direct
        return _Deciding((f"{ident.person.name} ({ident.principal})", acting), (ident, acting),
                         "draft" if draft or forced else "release", forced, False, draft or forced)
    who = who_of(by, role)
    if draft and who is None:
        raise ReleaseError("--draft needs --by and --role: the draft records its author, so that someone else "
                           "approves it")
    if effective > today and not draft and who is None:
        raise ReleaseError(f"--date {effective} is in the future: the version waits until that day; give --by and "
                           "--role (who makes it), then someone else approves it with `formula approve`")
    self_approved = effective > today and not draft and who is not None and not pol.four_eyes \
        and pol.role_allowed(who[1])
    return _Deciding(who, None, "release", False, self_approved, draft or (effective > today and not self_approved))


@dataclasses.dataclass(frozen=True)
class _Request:
    """What a release or fix asks for, its arguments checked before anything is read or written."""

    reason: str
    part: str
    effective: dt.date
    today: dt.date
    assignments: Any
    names: Any
    formula_name: str | None = None
    publication: dict[str, Any] | None = None  # the formula's new cited publication, checked (schema.Citation)


class ReleaseRequest(BaseModel):
    """What `formula release` or `formula fix` asks for, as typed (checked before anything is read or written).

    `sets`: constant values (`NAME=VALUE`); `labels`: their new names (`NAME=LABEL`); `name`: the formula's new
    name, for a fix whose new label the old name contradicts (registry.labels: the fix warns when a name or text
    keeps the old label); `publication`: a YAML file with its new cited publication, for a rename whose old citation
    no longer matches. With `draft`, the version waits in formulas/drafts/ for `formula approve`; under four
    eyes every version does (the author's key cannot approve it). With a future effective `date`, an approved
    version waits there until `formula activate`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    calculator: str
    reason: str
    part: str = "minor"
    date: str | None = None
    by: str | None = None
    role: str | None = None
    sets: list[str] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)
    name: str | None = None
    draft: bool = False
    with_dependants: bool = False
    key: str | None = None
    publication: str | None = None  # a YAML file holding the formula's new cited publication (schema.Citation)


def release(root: Path | str | None, ask: ReleaseRequest) -> str:
    """Release a calculator's edited content (or `ask.sets`, constant values) as a new version."""
    reason = reason_of(ask.reason)
    if ask.part not in ("major", "minor", "patch"):
        raise ReleaseError(f"--part must be major, minor or patch, got {ask.part!r}")
    req = _Request(reason, ask.part, parse_date(ask.date, "--date"), clock.today(), parse_assignments(ask.sets),
                   parse_labels(ask.labels), _formula_name(ask.name), _publication(ask.publication))
    with writing(root) as base:
        reg = loaded(base, "releasing")
        pol = policy_of(reg)
        c = calculator(reg, ask.calculator)
        targets = [c.slug] + (dependants(reg, c.slug) if ask.with_dependants else [])
        dirty = _releasable(reg, c, targets, req)
        _apply_sets(c, rt_load(reg.paths[c.slug]), req.assignments, req.names, req.formula_name,
                    req.publication)  # refused before who decides
        d = _deciders(reg, pol, targets, (ask.key, ask.by, ask.role), ask.draft, req.effective, req.today)
        plan = Plan(reg)
        released: list[str] = []
        tried: dict[str, Calculator] = {}  # each target as this release makes it (a draft's content included)
        for slug in targets:
            tried[slug] = _release_one(reg, plan, c, slug, req, d, dirty)
            released.append(f"{slug} {tried[slug].versions[-1].version}")
        plan.finish(targets)
        plan.commit()
        checked = after_checks(reg, {**reg.calculators, **tried}, targets)
    _warn_old_labels(c, tried[c.slug], req)
    return _released_message(c, released, d, pol, req) + checked


def _formula_name(name: str | None) -> str | None:
    if name is None:
        return None
    if not name.strip() or len(name) > 300 or any(ord(ch) < 32 for ch in name):
        raise ReleaseError("--name must be the formula's name on one line (at most 300 characters)")
    return name.strip()


def _publication(path: str | Path | None) -> dict[str, Any] | None:
    """The citation in the YAML file `path` (--publication), checked as the schema checks a formula's publication."""
    if path is None:
        return None
    from pydantic import ValidationError

    from registry.schema import Citation
    from registry.yamlio import YamlError, load_file

    try:
        data = load_file(Path(path))
    except (YamlError, OSError) as e:
        raise ReleaseError(f"--publication {path}: cannot be read ({e})") from None
    try:
        cited = Citation.model_validate(data)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        where = ".".join(str(x) for x in err["loc"]) or "(file)"
        raise ReleaseError(f"--publication {path}: {where}: {err['msg']} (a citation: authors, title, journal or "
                           "body, year; doi, pmid, url where certain)") from None
    return cited.model_dump(mode="json", exclude_none=True, exclude_defaults=True)


def _warn_old_labels(before: Calculator, after: Calculator, req: _Request) -> None:
    """A name, text or citation that keeps a label (or name) the fix replaced: a warning naming --name or
    --publication (registry.labels)."""
    import sys

    from registry.labels import citation_leftovers, distinctive, leftovers

    changed: dict[str, tuple[str, str]] = {}
    for n, new in req.names.items():
        old = before.constants[n].label if n in before.constants else None
        if old and old.casefold() != new.casefold():
            changed[n] = (old, new)
    found = leftovers(after, changed)
    was, now = before.formula.name, after.formula.name
    if was.casefold() != now.casefold() and not any(f == "formula.publication" for _, f, _ in found):
        found += citation_leftovers(after, distinctive(was, now), f"its old name {was!r}; it is now {now!r}")
    for _, fld, what in found:
        fix = {"formula.name": "--name NAME renames the formula in the same release",
               "formula.publication": "--publication FILE cites the new source in the same release"}.get(
                   fld, "edit it and release again")
        print(f"warning: formulas/{after.slug}.yaml {fld}: {what}: {fix} [R-LABEL-NAME]", file=sys.stderr)


def _releasable(reg: Registry, c: Calculator, targets: list[str], req: _Request) -> dict[str, str]:
    """The unreleased edits (slug -> why), refusing a release that would carry other changes than its own,
    a fix over hand edits, a second draft or a date before the active version's."""
    dirty = unreleased(reg)
    others = {s: why for s, why in dirty.items()
              if s not in targets and not ver.only_guidelines_moved(reg, reg.calculators[s])}
    if others and set(others) <= set(dependants(reg, c.slug)):
        raise ReleaseError(f"{', '.join(sorted(others))} depend on {c.slug}, so this change moves their answers too: "
                           "add --with-dependants to release them with it")
    if others:
        raise ReleaseError("other calculators have unreleased edits; release or undo them first, so that this "
                           "release carries only its own change: "
                           + "; ".join(f"{s} ({why})" for s, why in others.items()))
    if req.assignments and c.slug in dirty:
        raise ReleaseError(f"{c.slug} has unreleased hand edits ({dirty[c.slug]}): release them with "
                           "`formula release` or undo them before `formula fix`")
    pending = [s for s in targets if draft_path(reg, s).exists()]
    if pending:
        raise ReleaseError("a draft version is waiting for approval for " + ", ".join(pending)
                           + ": approve it (`formula approve`) or remove formulas/drafts/<slug>.yaml first")
    if req.effective < c.active.effective:
        raise ReleaseError(f"--date {req.effective} is before {c.slug} {c.active.version}'s effective date "
                           f"{c.active.effective}")
    return dirty


def _new_entry(rt: Any, version: str, note: str, req: _Request, d: _Deciding) -> dict[str, Any]:
    """The new version's entry: a draft until promoted, with a typed record only where signatures are not required."""
    entry: dict[str, Any] = {"version": version, "status": VersionStatus.draft.value, "effective": req.effective,
                             "text": rt["versions"][active_index(rt)]["text"], "changelog": note}
    if d.who and d.signer is None:  # a typed record, where the policy does not require signatures
        entry["released_by"] = signoff(d.who, req.today)
    if d.self_approved and d.who:  # only where the policy file allows an author to approve their own change
        entry["approved_by"] = signoff(d.who, req.today, "released with a future effective date; the policy "
                                        "allows the author to approve")
        entry["approved"] = req.today
    return entry


def _release_one(reg: Registry, plan: Plan, c: Calculator, slug: str, req: _Request, d: _Deciding,
                 dirty: dict[str, str]) -> Calculator:
    """Add the new version of one target to `plan` (promoted, or waiting as a draft); returns it as proposed."""
    calc = reg.calculators[slug]
    old = calc.active
    if req.effective < old.effective:
        raise ReleaseError(f"--date {req.effective} is before {slug} {old.version}'s effective date {old.effective}")
    path = reg.paths[slug]
    rt = rt_load(path)
    if slug == c.slug:
        _apply_sets(calc, rt, req.assignments, req.names, req.formula_name, req.publication)
    new_version = ver.bump(old.version, req.part)
    note = req.reason if slug == c.slug else f"{req.reason} (released with its dependency {c.slug})"
    entry = _new_entry(rt, new_version, note, req, d)
    snap = ver.read_snapshot(reg.formulas_dir, slug, old.version)
    if snap is None or old.version not in plan.lock.get(slug, {}):
        raise ReleaseError(f"{slug} {old.version} was never locked; run `formula lock` first")
    restore_text(rt["versions"][active_index(rt)], snap["text"])
    rt["versions"].append(entry)
    text = rt_dump(rt)
    proposed = validated(text, path)
    new_data = ver.released_content(view(reg, {**plan.calcs, slug: proposed}), proposed, proposed.versions[-1])
    if (slug == c.slug and ver.content_hash(dict(new_data, version=old.version)) == plan.lock[slug][old.version]
            and not ver.order_changes(proposed, snap)):  # a new order alone is a change a person reads
        raise ReleaseError(f"{slug}: nothing to release, the content equals version {old.version}")
    if d.signer is not None:
        rt["versions"][-1]["decisions"] = [signed_record(
            d.signer[0], d.signer[1], slug=slug, version=new_version, content=ver.content_hash(new_data),
            effective=req.effective, decision=d.kind, day=req.today, reason=note, previous=main_head(reg, calc))]
        text = rt_dump(rt)
        proposed = _with_decision(proposed, rt["versions"][-1]["decisions"][0])  # the version was validated above
    if d.draft or req.effective > req.today:
        plan.changes[draft_path(reg, slug)] = text
        if slug in dirty:  # the hand edits move to the draft; the live file returns to the released content
            plan.changes[path] = released_file(reg, calc, plan.lock[slug][old.version])
    else:
        plan.promote(slug, rt)
    return proposed


def _with_decision(calc: Calculator, rec: Any) -> Calculator:
    """`calc` with the signed decision `rec` on its last version, the record checked alone (`Decision`): the rest
    of the file was validated a moment ago, so a version is validated once per release."""
    last = calc.versions[-1]
    last = last.model_copy(update={"decisions": [Decision.model_validate(plain(rec))]})
    return calc.model_copy(update={"versions": [*calc.versions[:-1], last]})


def _released_message(c: Calculator, released: list[str], d: _Deciding, pol: Policy, req: _Request) -> str:
    """What the release did: drafted under four eyes, drafted, approved and waiting for its date, or released."""
    was, new, effective = c.active.version, released[0].split()[-1], req.effective
    author = d.who[0] if d.who else "its author"
    if d.forced:
        return (f"{c.slug}: drafted {new}, not active: under four eyes (formulas/{POLICY_FILE.as_posix()}) it needs "
                f"{counted(pol.required(c.slug), 'signed approval')} by someone other than {author}; {was} stays active. "
                f"Review it with `formula diff {c.slug} {was} {new}`, then `formula approve {c.slug} {new} --key ...` "
                "(`formula pending` lists what waits)"
                + (f"; effective {effective} once approved" if effective > req.today else ""))
    if d.draft:
        when = f", effective {effective} once approved" if effective > req.today else ""
        return (f"{c.slug}: drafted {new}{when} (active stays {was}); it awaits approval by someone other than "
                f"{author}: review it with `formula diff {c.slug} {was} {new}`, then `formula approve` "
                "(`formula pending` lists what waits)")
    if effective > req.today:
        return (f"{c.slug}: {new} approved, effective {effective}; {was} stays active until then "
                "(run `formula activate` on or after that day)")
    extra = f" with {', '.join(released[1:])}" if len(released) > 1 else ""
    return f"{c.slug}: released {new} (was {was}){extra}: {req.reason}; re-rendered formulas/{TEXTS_DIR}"


def sign_new_versions(reg: Registry, new: list[tuple[Calculator, str, str]], key: str | Path | None,
                      changes: dict[Path, str | None]) -> str:
    """`formula lock` of a new calculator: its first version gets the locker's signed release decision (it is active
    from now; under four eyes `formula validate` names it until someone else approves it). Returns a note."""
    pol = policy_of(reg)
    if not new or not signing(pol, key):
        return ""
    t, ident, acting = identity_of(reg, key, None, None, clock.today())
    for c, version, content in new:
        path = reg.paths[c.slug]
        original = plain_files.read_text(path)
        rt = rt_load(path)
        item = next(x for x in rt["versions"] if x.get("version") == version)
        v = next(x for x in c.versions if x.version == version)
        item.setdefault("decisions", []).append(signed_record(
            ident, acting, slug=c.slug, version=version, content=content, effective=v.effective, decision="release",
            day=clock.today(), reason=v.changelog, previous=main_head(reg, c)))
        text = rt_dump(rt, original)
        validated(text, path)
        changes[path] = text
    need = [f"{c.slug} {version}" for c, version, _ in new if pol.four_eyes or pol.required(c.slug) > 1]
    return (f"; signed as released by {ident.person.name} ({ident.principal})"
            + (f"; under the policy {', '.join(need)} {agree(len(need), 'needs', 'need')} approval by someone else: `formula approve SLUG "
               "VERSION --key ...` (until then `formula validate` names them)" if need else ""))

