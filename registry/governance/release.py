"""Make an edited calculator a new version: supersede the old one, lock and snapshot the new one.

The maintainer edits constants, tables, inputs or the active version's text in place (by hand
or with `formula fix`), then releases. The previous version's text comes back from its
snapshot, so the file keeps every version's text and the lock keeps every version's hash; the
text catalogue (formulas/texts/) is rendered again, so the diff shows every text that changed.

Every command here checks its arguments before it touches a file, holds the registry lock,
edits YAML round-trip (comments and order kept) and writes all its files as one transaction
(registry/atomic.py). A new version can be a draft (`formulas/drafts/<slug>.yaml`, a copy of the
file with the draft version appended, invisible to the library) that becomes active through
`formula approve`; a version whose effective date lies in the future waits there, approved,
until `formula activate` on or after that day.
"""
from __future__ import annotations

import copy
import dataclasses
import datetime as dt
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from pydantic import ValidationError

from registry import clock
from registry import versions as ver
from registry.atomic import JournalRefused, LockBusy, WriteInterrupted, commit, recover, registry_lock
from registry.governance.deciding import DecisionRefused, check_approver, main_head, signing
from registry.governance.policy import POLICY_FILE, Policy, PolicyError, read_policy
from registry.governance.rejections import REJECTED_DIR
from registry.loader import Registry, clear_cache, default_root, load
from registry.schema import Calculator, VersionStatus, constant_problem
from registry.texts import TEXTS_DIR, TextError, catalogue_files
from registry.versioned import DRAFTS_DIR, unreleased  # noqa: E402,F401
from registry.yamlio import YamlError, block, load_text, rt_dump, rt_load

if TYPE_CHECKING:
    from registry.governance import decisionlog as sg


class ReleaseError(Exception):
    pass


# Checks run after a version is made (the audit layer registers the reference-case check): each gets the
# registry before and as it stands with the new versions, and the slugs released, and returns lines to print.
ReleaseCheck = Callable[[Registry, Registry, list[str]], list[str]]
AFTER_RELEASE: list[ReleaseCheck] = []


def on_release(check: ReleaseCheck) -> ReleaseCheck:
    if check not in AFTER_RELEASE:
        AFTER_RELEASE.append(check)
    return check


def _checks(before: Registry, calcs: dict[str, Calculator], slugs: list[str]) -> str:
    """The lines of every registered check, on the registry as the release leaves it (validated: its lock is new)."""
    after = dataclasses.replace(before, calculators=calcs, problems=[], hashes={}, validated=True)
    was = dataclasses.replace(before, problems=[], hashes={}, validated=True)  # it validated before the change
    lines = [line for check in AFTER_RELEASE for line in check(was, after, slugs)]
    return "".join("\n" + line for line in lines)


# ---------------------------------------------------------------------- argument checks (no I/O)


def parse_date(text: str | None, flag: str, default: dt.date | None = None) -> dt.date:
    if text is None:
        return default or clock.today()
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise ReleaseError(f"{flag} must be a real date YYYY-MM-DD, got {text!r}") from None


def _number(name: str, text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ReleaseError(f"--set {name}: {text!r} is not a number") from None


def parse_assignments(assignments: list[str]) -> dict[str, int | float]:
    """`NAME=VALUE` pairs, all checked together; a name given twice is refused."""
    out: dict[str, int | float] = {}
    for a in assignments:
        if "=" not in a:
            raise ReleaseError(f"--set expects CONSTANT=VALUE, got {a!r}")
        name, value = (s.strip() for s in a.split("=", 1))
        if not name:
            raise ReleaseError(f"--set expects CONSTANT=VALUE, got {a!r}")
        if name in out:
            raise ReleaseError(f"--set {name} is given twice; give each constant once")
        out[name] = _number(name, value)
    return out


def parse_labels(labels: list[str]) -> dict[str, str]:
    """`NAME=TEXT` pairs for --label: the name a constant's new value goes by (shown in texts)."""
    out: dict[str, str] = {}
    for a in labels:
        name, _, text = (s.strip() for s in a.partition("="))
        if not name or not text or "=" not in a:
            raise ReleaseError(f"--label expects CONSTANT=NAME (e.g. correction=Katz factor), got {a!r}")
        if name in out:
            raise ReleaseError(f"--label {name} is given twice; give each constant once")
        out[name] = text
    return out


def _who(by: str | None, role: str | None, flag: str = "--by") -> tuple[str, str] | None:
    if by is None and role is None:
        return None
    if not (by or "").strip() or not (role or "").strip():
        raise ReleaseError(f"{flag} and --role go together: name the person and their role")
    return by.strip(), role.strip()  # type: ignore[union-attr]


def _reason(reason: str) -> str:
    if not reason or not reason.strip():
        raise ReleaseError("--reason must say what changed and why")
    return reason.strip()


# ---------------------------------------------------------------------- shared helpers


@contextmanager
def writing(root: Path | str | None) -> Iterator[Path]:
    """Hold the registry lock; roll back whatever an interrupted command left half-done first."""
    base = Path(root) if root is not None else default_root()
    try:
        with registry_lock(base / "formulas"):
            restored = recover(base)
            if restored:
                import sys

                print(f"note: rolled back an interrupted change to {len(restored)} file(s): "
                      + ", ".join(restored), file=sys.stderr)
            clear_cache()
            yield base
    except (LockBusy, JournalRefused) as e:
        raise ReleaseError(str(e)) from None
    except KeyboardInterrupt as e:
        if isinstance(e, WriteInterrupted):  # the commit rolled its files back and says so
            raise
        raise WriteInterrupted("interrupted before anything was written; the registry is unchanged") from None
    finally:
        clear_cache()


def _apply_sets(calc: Calculator, rt: Any, assignments: dict[str, int | float], names: dict[str, str]) -> None:
    """Set constants (and their labels) in a round-trip file, each checked against the constant's rules first."""
    slug = calc.slug
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


def _loaded(root: Path, doing: str) -> Registry:
    reg = load(root)
    if reg.problems:
        from registry.validate import first_fix

        advice = first_fix(reg.problems)
        raise ReleaseError("\n".join(map(str, reg.problems)) + f"\nfix these before {doing}"
                           + (f"; {advice}" if advice else ""))
    if ver.lock_format(reg.lock_path) != ver.LOCK_FORMAT:
        raise ReleaseError(f"{reg.rel(reg.lock_path)} is in an older format: run `formula lock --rehash` first")
    return reg


def _calc(reg: Registry, ref: str) -> Calculator:
    try:
        return reg.get(ref)
    except KeyError:
        from registry.suggest import unknown_calculator

        raise ReleaseError(unknown_calculator(reg, ref)) from None


def dependants(reg: Registry, slug: str) -> list[str]:
    """Every calculator that depends on `slug`, directly or not, dependencies before dependants."""
    found: list[str] = []

    def visit(s: str) -> None:
        for other, c in sorted(reg.calculators.items()):
            if s in c.depends_on and other not in found:
                found.append(other)
                visit(other)

    visit(slug)
    order: list[str] = []

    def place(s: str) -> None:
        if s in order:
            return
        for d in reg.calculators[s].depends_on:
            if d in found:
                place(d)
        order.append(s)

    for s in found:
        place(s)
    return order


def draft_path(reg: Registry, slug: str) -> Path:
    return reg.formulas_dir / DRAFTS_DIR / f"{slug}.yaml"


def _validated(text: str, path: Path) -> Calculator:
    try:
        return Calculator.model_validate(load_text(text, path))
    except ValidationError as e:
        raise ReleaseError(f"{path}: the edited file does not validate:\n{e}") from None
    except YamlError as e:
        raise ReleaseError(str(e)) from None


def _active_index(rt: Any) -> int:
    return next(i for i, v in enumerate(rt["versions"]) if v.get("status") == VersionStatus.active.value)


def _released_file(reg: Registry, calc: Calculator, recorded: str) -> str:
    """The calculator's file with its hand-edited content put back to the active version's snapshot."""
    path = reg.paths[calc.slug]
    original = path.read_text(encoding="utf-8")
    rt = rt_load(path)
    snap = ver.read_snapshot(reg.formulas_dir, calc.slug, calc.active.version) or {}
    now = ver.content(calc, calc.active, None)  # dumped as the snapshot is (defaults left out)
    for f in ver.covered_fields():
        if f in snap and snap[f] != now.get(f):
            rt[f] = _assign(rt[f], snap[f], now.get(f)) if f in rt else snap[f]
        elif f not in snap and f in now and f in rt and ver.MIGRATED_KEY not in snap:
            del rt[f]  # set since the release; it was at its default then
    _restore_text(rt["versions"][_active_index(rt)], snap.get("text", ""))
    text = rt_dump(rt, original)
    back = _validated(text, path)
    if ver.content_hash(ver.released_content(_view(reg, {**reg.calculators, calc.slug: back}), back,
                                             back.active)) != recorded:
        raise ReleaseError(f"{calc.slug}: cannot put the file back to {calc.active.version} automatically; "
                           "undo the hand edits and use `formula fix --set ... --draft`, or release them now")
    return text


def _assign(node: Any, target: Any, current: Any) -> Any:
    """Make a round-trip node hold `target` (a plain dump), changing only what differs from `current` (its dump now).

    Keys the schema filled with defaults stay absent; comments on untouched parts stay.
    """
    if isinstance(node, dict) and isinstance(target, dict) and isinstance(current, dict):
        for k in [k for k in node if k in current and k not in target]:
            del node[k]
        for k, v in target.items():
            if k in current and current[k] == v:
                continue
            node[k] = _assign(node[k], v, current.get(k)) if k in node else v
        return node
    if (isinstance(node, list) and isinstance(target, list) and isinstance(current, list)
            and len(node) == len(target) == len(current)):
        for i, v in enumerate(target):
            if current[i] != v:
                node[i] = _assign(node[i], v, current[i])
        return node
    if isinstance(target, float) and target.is_integer() and isinstance(node, int) and not isinstance(node, bool):
        return int(target)  # a range written 3000 comes back from the schema as 3000.0
    return block(target) if isinstance(target, str) else target


def _restore_text(item: Any, released: str) -> None:
    """Put a version's released text back (texts are compared as the schema reads them, whitespace-stripped)."""
    if str(item["text"]).strip() != released.strip():
        item["text"] = block(released if released.endswith("\n") else released + "\n")


def _signoff(who: tuple[str, str] | None, when: dt.date, reason: str | None = None) -> dict[str, Any] | None:
    if who is None:
        return None
    out: dict[str, Any] = {"who": who[0], "role": who[1], "date": when}
    if reason:
        out["reason"] = reason
    return out


def _policy(reg: Registry) -> Policy:
    try:
        return read_policy(reg.formulas_dir)
    except PolicyError as e:
        raise ReleaseError(f"{e}: fix the policy file first (approvals are refused while it is invalid)") from None


def _identity(reg: Registry, key: str | Path | None, by: str | None, role: str | None,
              day: dt.date) -> tuple["sg.Trust", "sg.Identity", str]:
    from registry.governance.deciding import identity

    try:
        return identity(reg, key, by, role, day)
    except DecisionRefused as e:
        raise ReleaseError(str(e)) from None


def _intact(reg: Registry, c: Calculator, t: "sg.Trust") -> "sg.Audit":
    """The calculator's decision log, checked; ReleaseError when it does not verify."""
    from registry.governance import decisionlog as sg
    from registry.governance.deciding import require_intact

    a = sg.audit(reg, c, t)
    try:
        require_intact(a, c.slug)
    except DecisionRefused as e:
        raise ReleaseError(str(e)) from None
    return a


def _sign(ident: "sg.Identity", role: str, **kw: Any) -> dict[str, Any]:
    from registry.governance.deciding import sign

    try:
        rec = sign(ident, role, **kw)
    except DecisionRefused as e:
        raise ReleaseError(str(e)) from None
    rec["signature"] = block(rec["signature"])
    return rec


def _four_eyes(pol: Policy, slug: str, version: str, entry: Any, who: tuple[str, str]) -> None:
    """Refuse an approval the policy does not allow: by the draft's author, or by a role not listed."""
    author = (_plain(entry.get("released_by")) or {}).get("who")
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


def _catalogue(reg: Registry, calcs: dict[str, Calculator]) -> dict[Path, str]:
    try:
        files = catalogue_files(calcs, reg.units)
    except TextError as e:
        raise ReleaseError(f"a text does not render: {e}") from None
    return {reg.formulas_dir / TEXTS_DIR / name: text for name, text in files.items()}


def _view(reg: Registry, calcs: dict[str, Calculator]) -> Registry:
    """The registry as it would stand with `calcs`: dependency hashes are computed afresh from them."""
    return dataclasses.replace(reg, calculators=calcs, problems=[], hashes={})


class _Plan:
    """The files one command will write, built in memory and committed at once."""

    def __init__(self, reg: Registry):
        self.reg = reg
        self.changes: dict[Path, str | None] = {}
        self.calcs: dict[str, Calculator] = dict(reg.calculators)
        self.lock = ver.read_lock(reg.lock_path)
        self.promoted: list[str] = []

    def promote(self, slug: str, draft_rt: Any) -> str:
        """Make the draft version at the end of `draft_rt` the active one of `slug`; returns the version."""
        reg = self.reg
        c = reg.calculators[slug]
        path = reg.paths[slug]
        original = path.read_text(encoding="utf-8")
        main = rt_load(path)
        for f in ver.covered_fields():
            if _plain(main.get(f)) != _plain(draft_rt.get(f)):
                if f in draft_rt:
                    main[f] = copy.deepcopy(draft_rt[f])
                else:
                    del main[f]
        entry = copy.deepcopy(draft_rt["versions"][-1])
        entry["status"] = VersionStatus.active.value
        old = c.active
        snap = ver.read_snapshot(reg.formulas_dir, slug, old.version)
        if snap is None or old.version not in self.lock.get(slug, {}):
            raise ReleaseError(f"{slug} {old.version} was never locked; run `formula lock` first")
        idx = _active_index(main)
        main["versions"][idx]["status"] = VersionStatus.superseded.value
        _restore_text(main["versions"][idx], snap["text"])
        main["versions"].append(entry)
        text = rt_dump(main, original)
        new = _validated(text, path)
        data = ver.released_content(_view(reg, {**self.calcs, slug: new}), new, new.active)
        self.lock.setdefault(slug, {})[new.active.version] = ver.content_hash(data)
        self.changes[path] = text
        self.changes[ver.snapshot_path(reg.formulas_dir, slug, new.active.version)] = ver.snapshot_text(data)
        self.calcs[slug] = new
        self.promoted.append(slug)
        return new.active.version

    def finish(self, targets: list[str]) -> None:
        """Lock and catalogue for what was promoted; refuse if another calculator's content moved with it."""
        if not self.promoted:
            return
        after = _view(self.reg, self.calcs)
        moved = {s: why for s, why in _unreleased_with(after, self.lock).items()
                 if s not in targets and not ver.only_guidelines_moved(after, after.calculators[s])}
        if moved:
            raise ReleaseError("this release changes the content of calculators that depend on it: "
                               + ", ".join(sorted(moved)) + "; add --with-dependants to release them too")
        self.changes[self.reg.lock_path] = ver.lock_text(self.lock)
        self.changes.update(_catalogue(self.reg, self.calcs))

    def commit(self) -> None:
        commit(self.reg.root, self.changes)


def _unreleased_with(reg: Registry, lock: dict[str, dict[str, str]]) -> dict[str, str]:
    out = {}
    for slug, c in reg.calculators.items():
        v = c.active
        recorded = lock.get(slug, {}).get(v.version)
        if recorded is None or ver.content_hash(ver.released_content(reg, c, v)) != recorded:
            out[slug] = "content differs from its lock entry"
    return out


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (dt.date,)):
        return x.isoformat()
    if isinstance(x, str):
        return str(x)
    return x


# ---------------------------------------------------------------------- release and fix


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
        t, ident, acting = _identity(reg, key, by, role, today)
        for s in targets:
            _intact(reg, reg.calculators[s], t)
        direct = not pol.four_eyes and pol.role_allowed(acting) and all(pol.required(s) == 1 for s in targets)
        forced = not draft and not direct
        return _Deciding((f"{ident.person.name} ({ident.principal})", acting), (ident, acting),
                         "draft" if draft or forced else "release", forced, False, draft or forced)
    who = _who(by, role)
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


def release(root: Path | str | None, ref: str, reason: str, *, part: str = "minor", date: str | None = None,
            by: str | None = None, role: str | None = None, sets: list[str] | None = None, draft: bool = False,
            with_dependants: bool = False, labels: list[str] | None = None, key: str | Path | None = None) -> str:
    """Release a calculator's edited content (or `sets`, constant values) as a new version.

    With `draft`, the version waits in formulas/drafts/ for `formula approve`; under four eyes every
    version does (the author's key cannot approve it). With a future effective date, an approved
    version waits there until `formula activate`.
    """
    reason = _reason(reason)
    if part not in ("major", "minor", "patch"):
        raise ReleaseError(f"--part must be major, minor or patch, got {part!r}")
    req = _Request(reason, part, parse_date(date, "--date"), clock.today(), parse_assignments(sets or []),
                   parse_labels(labels or []))
    with writing(root) as base:
        reg = _loaded(base, "releasing")
        pol = _policy(reg)
        c = _calc(reg, ref)
        targets = [c.slug] + (dependants(reg, c.slug) if with_dependants else [])
        dirty = _releasable(reg, c, targets, req)
        _apply_sets(c, rt_load(reg.paths[c.slug]), req.assignments, req.names)  # bad values refused before who decides
        d = _deciders(reg, pol, targets, (key, by, role), draft, req.effective, req.today)
        plan = _Plan(reg)
        released: list[str] = []
        tried: dict[str, Calculator] = {}  # each target as this release makes it (a draft's content included)
        for slug in targets:
            tried[slug] = _release_one(reg, plan, c, slug, req, d, dirty)
            released.append(f"{slug} {tried[slug].versions[-1].version}")
        plan.finish(targets)
        plan.commit()
        checked = _checks(reg, {**reg.calculators, **tried}, targets)
    return _released_message(c, released, d, pol, req) + checked


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
                             "text": rt["versions"][_active_index(rt)]["text"], "changelog": note}
    if d.who and d.signer is None:  # a typed record, where the policy does not require signatures
        entry["released_by"] = _signoff(d.who, req.today)
    if d.self_approved and d.who:  # only where the policy file allows an author to approve their own change
        entry["approved_by"] = _signoff(d.who, req.today, "released with a future effective date; the policy "
                                        "allows the author to approve")
        entry["approved"] = req.today
    return entry


def _release_one(reg: Registry, plan: _Plan, c: Calculator, slug: str, req: _Request, d: _Deciding,
                 dirty: dict[str, str]) -> Calculator:
    """Add the new version of one target to `plan` (promoted, or waiting as a draft); returns it as proposed."""
    calc = reg.calculators[slug]
    old = calc.active
    if req.effective < old.effective:
        raise ReleaseError(f"--date {req.effective} is before {slug} {old.version}'s effective date {old.effective}")
    path = reg.paths[slug]
    rt = rt_load(path)
    if slug == c.slug:
        _apply_sets(calc, rt, req.assignments, req.names)
    new_version = ver.bump(old.version, req.part)
    note = req.reason if slug == c.slug else f"{req.reason} (released with its dependency {c.slug})"
    entry = _new_entry(rt, new_version, note, req, d)
    snap = ver.read_snapshot(reg.formulas_dir, slug, old.version)
    if snap is None or old.version not in plan.lock.get(slug, {}):
        raise ReleaseError(f"{slug} {old.version} was never locked; run `formula lock` first")
    _restore_text(rt["versions"][_active_index(rt)], snap["text"])
    rt["versions"].append(entry)
    text = rt_dump(rt)
    proposed = _validated(text, path)
    new_data = ver.released_content(_view(reg, {**plan.calcs, slug: proposed}), proposed, proposed.versions[-1])
    if (slug == c.slug and ver.content_hash(dict(new_data, version=old.version)) == plan.lock[slug][old.version]
            and not ver.order_changes(proposed, snap)):  # a new order alone is a change a person reads
        raise ReleaseError(f"{slug}: nothing to release, the content equals version {old.version}")
    if d.signer is not None:
        rt["versions"][-1]["decisions"] = [_sign(
            d.signer[0], d.signer[1], slug=slug, version=new_version, content=ver.content_hash(new_data),
            effective=req.effective, decision=d.kind, day=req.today, reason=note, previous=main_head(reg, calc))]
        text = rt_dump(rt)
        proposed = _validated(text, path)
    if d.draft or req.effective > req.today:
        plan.changes[draft_path(reg, slug)] = text
        if slug in dirty:  # the hand edits move to the draft; the live file returns to the released content
            plan.changes[path] = _released_file(reg, calc, plan.lock[slug][old.version])
    else:
        plan.promote(slug, rt)
    return proposed


def _released_message(c: Calculator, released: list[str], d: _Deciding, pol: Policy, req: _Request) -> str:
    """What the release did: drafted under four eyes, drafted, approved and waiting for its date, or released."""
    was, new, effective = c.active.version, released[0].split()[-1], req.effective
    author = d.who[0] if d.who else "its author"
    if d.forced:
        return (f"{c.slug}: drafted {new}, not active: under four eyes (formulas/{POLICY_FILE.as_posix()}) it needs "
                f"{pol.required(c.slug)} signed approval(s) by someone other than {author}; {was} stays active. "
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


# ---------------------------------------------------------------------- approve and activate



def _waiting_draft(reg: Registry, slug: str, version: str) -> tuple[Path, Any]:
    """The draft file of `slug` and its round-trip data, refused unless a draft of `version` is waiting."""
    dpath = draft_path(reg, slug)
    if not dpath.exists():
        raise ReleaseError(f"{slug} has no draft waiting for approval")
    drt = rt_load(dpath)
    found = drt["versions"][-1].get("version")
    if found != version:
        raise ReleaseError(f"{slug}'s draft is version {found}, not {version!r}")
    return dpath, drt

def approve(root: Path | str | None, ref: str, version: str, by: str | None = None, role: str | None = None, *,
            date: str | None = None, reason: str = "", key: str | Path | None = None) -> str:
    """Approve a draft: it becomes active once its approvals satisfy the policy, now or on its effective date
    (then `formula activate`).

    Four eyes: an approver's principal and key differ from the draft's author's unless the policy file says
    otherwise; k of n: the policy's number of distinct approving principals.
    """
    if not reason or not reason.strip():
        raise ReleaseError("--reason must say why the change is approved (it is recorded with the approval)")
    today = clock.today()
    when = parse_date(date, "--date")
    if when > today:
        raise ReleaseError(f"--date {when} is in the future: an approval is recorded when it is given")
    with writing(root) as base:
        reg = _loaded(base, "approving")
        c = _calc(reg, ref)
        pol = _policy(reg)
        if signing(pol, key) and version == c.active.version and not draft_path(reg, c.slug).exists():
            return _approve_active(reg, c, (key, by, role), when, reason.strip())
        dpath, drt = _waiting_draft(reg, c.slug, version)
        if signing(pol, key):
            return _approve_signed(reg, c, version, (dpath, drt), (key, by, role), when, reason.strip())
        who = _who(by, role)
        if who is None:
            raise ReleaseError("--by and --role must name who approves and their role")
        entry = drt["versions"][-1]
        if entry.get("approved_by"):
            raise ReleaseError(f"{c.slug} {version} is already approved; it becomes active on {entry['effective']}")
        _base_checks(reg, c, drt)
        _four_eyes(_policy(reg), c.slug, version, entry, who)
        released_on = _plain(entry.get("released_by", {}) or {}).get("date")
        if released_on and when.isoformat() < released_on:
            raise ReleaseError(f"--date {when} is before the draft was made ({released_on})")
        entry["approved_by"] = _signoff(who, when, reason.strip())
        entry["approved"] = when
        _validated(rt_dump(drt), dpath)
        plan = _Plan(reg)
        effective = dt.date.fromisoformat(_plain(entry["effective"]))
        if effective > today:
            plan.changes[dpath] = rt_dump(drt)
            plan.commit()
            return (f"{c.slug} {version}: approved by {who[0]} ({who[1]}) on {when}; {c.active.version} stays active "
                    f"until {effective} (run `formula activate` on or after that day)")
        plan.promote(c.slug, drt)
        plan.changes[dpath] = None
        plan.finish([c.slug])
        plan.commit()
        checked = _checks(reg, plan.calcs, [c.slug])
    return (f"{c.slug} {version}: approved by {who[0]} ({who[1]}) on {when}; now active (was {c.active.version})"
            + checked)


def _base_checks(reg: Registry, c: Calculator, drt: Any) -> None:
    base_active = drt["versions"][_active_index(drt)]["version"]
    if base_active != c.active.version:
        raise ReleaseError(f"the draft was made from {base_active}, but {c.active.version} is active now: "
                           "remove the draft and make it again")
    if c.slug in unreleased(reg):
        raise ReleaseError(f"{c.slug} has unreleased hand edits; release or undo them before approving")


def _approve_signed(reg: Registry, c: Calculator, version: str, draft: tuple[Path, Any],
                    signer: tuple[str | Path | None, str | None, str | None], when: dt.date, reason: str) -> str:
    """A signed approval, under the registry lock: counted once per principal and key; promoted at k of n."""
    from registry.governance import decisionlog as sg

    dpath, drt = draft
    _base_checks(reg, c, drt)
    t, ident, acting = _identity(reg, *signer, when)
    a = _intact(reg, c, t)
    try:
        check_approver(t, [x for x in a.checked if x.entry.in_draft], c.slug, version, ident, acting)
    except DecisionRefused as e:
        raise ReleaseError(str(e)) from None
    mine = [x for x in a.checked if x.entry.in_draft]
    if when < mine[0].entry.d.date:
        raise ReleaseError(f"--date {when} is before the draft was made ({mine[0].entry.d.date})")
    effective = dt.date.fromisoformat(_plain(drt["versions"][-1]["effective"]))
    content = mine[0].entry.content or ""
    rec = _sign(ident, acting, slug=c.slug, version=version, content=content, effective=effective,
                decision="approve", day=when, reason=reason, previous=sg.head([x.entry for x in a.checked]))
    drt["versions"][-1].setdefault("decisions", []).append(rec)
    _validated(rt_dump(drt), dpath)
    new = sg.Checked(sg.Entry(c.slug, version, effective, content, sg.Decision.model_validate(_plain(rec)), "", 1,
                              True), ident.fingerprint, None)
    counted, _ = sg.tally(t, c.slug, [*mine, new])
    need = t.policy.required(c.slug)
    plan = _Plan(reg)
    said = f"{c.slug} {version}: approved by {ident.person.name} ({ident.principal}, {acting}) on {when}"
    if len(counted) < need:
        plan.changes[dpath] = rt_dump(drt)
        plan.commit()
        return (f"{said}; {len(counted)} of {need} approvals, so it waits for {need - len(counted)} more "
                f"(by principals other than {mine[0].entry.d.principal}); {c.active.version} stays active")
    if effective > clock.today():
        plan.changes[dpath] = rt_dump(drt)
        plan.commit()
        return (f"{said}; {c.active.version} stays active until {effective} (run `formula activate` on or after "
                "that day)")
    plan.promote(c.slug, drt)
    plan.changes[dpath] = None
    plan.finish([c.slug])
    plan.commit()
    return f"{said}; now active (was {c.active.version})" + _checks(reg, plan.calcs, [c.slug])


def _approve_active(reg: Registry, c: Calculator, signer: tuple[str | Path | None, str | None, str | None],
                    when: dt.date, reason: str) -> str:
    """A further signed approval of the active version: how a version meets a policy made stricter after it."""
    from registry.governance import decisionlog as sg

    v = c.active
    t, ident, acting = _identity(reg, *signer, when)
    a = sg.audit(reg, c, t)
    bad = [x for x in a.checked if x.why]
    if bad:
        raise ReleaseError(f"{bad[0].entry.path}:{bad[0].entry.line}: {bad[0].why}; {c.slug}'s decisions must verify "
                           "before a new one joins them (`formula verify`)")
    if v.version in a.legacy:
        raise ReleaseError(f"{c.slug} {v.version} was recorded before signing: a signed approval cannot attach to an "
                           "unsigned release; release a new version (`formula fix`/`formula release`) instead")
    mine = [x for x in a.checked if x.entry.version == v.version and x.entry.d.decision != "review"]
    try:
        check_approver(t, mine, c.slug, v.version, ident, acting)
    except DecisionRefused as e:
        raise ReleaseError(str(e)) from None
    path = reg.paths[c.slug]
    original = path.read_text(encoding="utf-8")
    rt = rt_load(path)
    content = ver.read_lock(reg.lock_path).get(c.slug, {}).get(v.version) or ""
    rec = _sign(ident, acting, slug=c.slug, version=v.version, content=content, effective=v.effective,
                decision="approve", day=when, reason=reason, previous=main_head(reg, c))
    rt["versions"][_active_index(rt)].setdefault("decisions", []).append(rec)
    text = rt_dump(rt, original)
    _validated(text, path)
    new = sg.Checked(sg.Entry(c.slug, v.version, v.effective, content, sg.Decision.model_validate(_plain(rec)), "", 1),
                     ident.fingerprint, None)
    counted, _ = sg.tally(t, c.slug, [*mine, new])
    plan = _Plan(reg)
    plan.changes[path] = text
    plan.commit()
    return (f"{c.slug} {v.version} (active): approved by {ident.person.name} ({ident.principal}, {acting}) on "
            f"{when}; {len(counted)} of {t.policy.required(c.slug)} approvals required")


def _draft_approved(reg: Registry, slug: str, entry: Any) -> bool:
    """Whether a waiting draft's approvals satisfy the policy (signed), or it records an approval (typed)."""
    if not entry.get("decisions"):
        return bool(entry.get("approved_by"))
    from registry.governance import decisionlog as sg

    t = sg.trust(reg.formulas_dir)
    counted, need, why = sg.draft_state(t, sg.audit(reg, reg.calculators[slug], t), slug)
    return not why and len(counted) >= need


def activate(root: Path | str | None, *, on: str | None = None) -> str:
    """Make every approved draft whose effective date has come the active version."""
    day = parse_date(on, "--on")
    if day > clock.today():
        raise ReleaseError(f"--on {day} is in the future: a version becomes active on its day, not before")
    with writing(root) as base:
        reg = _loaded(base, "activating")
        plan = _Plan(reg)
        done = []
        for dpath in sorted((reg.formulas_dir / DRAFTS_DIR).glob("*.yaml")):
            slug = dpath.stem
            drt = rt_load(dpath)
            entry = drt["versions"][-1]
            if slug not in reg.calculators:
                raise ReleaseError(f"{reg.rel(dpath)} names no calculator of the registry")
            if dt.date.fromisoformat(_plain(entry["effective"])) > day or not _draft_approved(reg, slug, entry):
                continue
            done.append(f"{slug} {plan.promote(slug, drt)}")
            plan.changes[dpath] = None
        plan.finish([s.split()[0] for s in done])
        plan.commit()
        checked = _checks(reg, plan.calcs, [s.split()[0] for s in done])
    return ("activated " + ", ".join(done) + checked) if done else f"no approved version is due to become active on {day}"


# ---------------------------------------------------------------------- review


MAX_INTERVAL_DAYS = 3653  # a review falls due within ten years; past that a date is a typo (and dates end at 9999)


def review(root: Path | str | None, ref: str, who: str | None = None, role: str | None = None, *,
           date: str | None = None, next_due: str | None = None, interval_days: int = 365,
           key: str | Path | None = None) -> str:
    """Record a review sign-off on the active version: governance metadata, not content (no new version).

    Signed, it is a `review` decision whose statement carries the next review date."""
    today = clock.today()
    when = parse_date(date, "--date")
    if when > today:
        raise ReleaseError(f"--date {when} is in the future: record a review once it has happened")
    if not 1 <= interval_days <= MAX_INTERVAL_DAYS:
        raise ReleaseError(f"--interval-days must be between 1 and {MAX_INTERVAL_DAYS} (ten years), "
                           f"got {interval_days}")
    due = parse_date(next_due, "--next-due", when + dt.timedelta(days=interval_days))
    if due <= when:
        raise ReleaseError(f"the next review ({due}) must come after this one ({when})")
    with writing(root) as base:
        reg = _loaded(base, "recording a review")
        c = _calc(reg, ref)
        v = c.active
        if when < v.effective:
            raise ReleaseError(f"--date {when} is before {c.slug} {v.version} took effect ({v.effective}): "
                               "a review signs off a version in force")
        if v.last_review and when < v.last_review:
            raise ReleaseError(f"--date {when} is before the last review ({v.last_review}); "
                               "a review never moves the last review back")
        path = reg.paths[c.slug]
        original = path.read_text(encoding="utf-8")
        rt = rt_load(path)
        item = rt["versions"][_active_index(rt)]
        pol = _policy(reg)
        if signing(pol, key):
            if draft_path(reg, c.slug).exists():
                raise ReleaseError(f"a draft of {c.slug} waits: approve or reject it first (its signatures chain to "
                                   "the decision log as it stands, so a review cannot come between)")
            t, ident, acting = _identity(reg, key, who, role, when)
            _intact(reg, c, t)
            person = (ident.person.name, acting)
            content = ver.read_lock(reg.lock_path).get(c.slug, {}).get(v.version) or ""
            item.setdefault("decisions", []).append(_sign(
                ident, acting, slug=c.slug, version=v.version, content=content, effective=v.effective,
                decision="review", day=when, reason="review sign-off", previous=main_head(reg, c), next_review=due))
        else:
            typed = _who(who, role)
            if typed is None:
                raise ReleaseError("--by and --role must name the reviewer and their role")
            person = typed
            if "signoffs" not in item:
                item["signoffs"] = []
            item["signoffs"].append({"who": person[0], "role": person[1], "date": when})
        item["last_review"] = when
        item["next_review"] = due  # a review signs off; it never approves (only `formula approve` does)
        text = rt_dump(rt, original)
        _validated(text, path)
        plan = _Plan(reg)
        plan.changes[path] = text
        plan.commit()
    return f"{c.slug} {v.version}: reviewed by {person[0]} ({person[1]}) on {when}; next review due {due}"


# ---------------------------------------------------------------------- reject


def reject(root: Path | str | None, ref: str, version: str, by: str | None = None, role: str | None = None, *,
           reason: str, key: str | Path | None = None) -> str:
    """Reject a waiting draft: the draft file goes, and who rejected it, when and why is kept on record
    in formulas/drafts/rejected/<slug>.yaml (the active version is untouched)."""
    from registry.yamlio import dump, load_file

    why = _reason(reason)
    today = clock.today()
    with writing(root) as base:
        reg = _loaded(base, "rejecting")
        c = _calc(reg, ref)
        dpath, drt = _waiting_draft(reg, c.slug, version)
        entry = _plain(drt["versions"][-1])
        log = reg.formulas_dir / REJECTED_DIR / f"{c.slug}.yaml"
        records = list(load_file(log) or []) if log.exists() else []
        if signing(_policy(reg), key):
            who = _signed_rejection(reg, c, version, entry, (key, by, role), today, why, records)
        else:
            typed = _who(by, role)
            if typed is None:
                raise ReleaseError("--by and --role must name who rejects the draft and their role")
            who = typed
            records.append({"version": version, "changelog": entry.get("changelog"),
                            "effective": entry.get("effective"), "drafted_by": entry.get("released_by"),
                            "rejected_by": _plain(_signoff(who, today, why))})
        plan = _Plan(reg)
        plan.changes[dpath] = None
        plan.changes[log] = dump(_plain(records))
        plan.commit()
    return (f"{c.slug} {version}: rejected by {who[0]} ({who[1]}) on {today}: {why}; {c.active.version} stays active "
            f"(recorded in {reg.rel(log)})")


def _signed_rejection(reg: Registry, c: Calculator, version: str, entry: dict[str, Any],
                      signer: tuple[str | Path | None, str | None, str | None], today: dt.date, why: str,
                      records: list[Any]) -> tuple[str, str]:
    """Append the rejected draft's decisions and the signed rejection to `records`; returns who rejected."""
    from registry.governance import decisionlog as sg

    t, ident, acting = _identity(reg, *signer, today)
    a = sg.audit(reg, c, t)  # a draft whose signatures fail can still be turned down
    mine = [x.entry for x in a.checked if x.entry.in_draft]
    content = (mine[0].content if mine else None) or ""
    rec = _sign(ident, acting, slug=c.slug, version=version, content=content,
                effective=dt.date.fromisoformat(entry["effective"]), decision="reject", day=today, reason=why,
                previous=sg.head([x.entry for x in a.checked]))
    records.append({"version": version, "changelog": entry.get("changelog"), "effective": entry.get("effective"),
                    "content": content,  # what the decisions sign: validation verifies them (registry.governance.rejections)
                    "decisions": [*entry.get("decisions", []), _plain(rec)]})
    return ident.person.name, acting


def sign_new_versions(reg: Registry, new: list[tuple[Calculator, str, str]], key: str | Path | None,
                      changes: dict[Path, str | None]) -> str:
    """`formula lock` of a new calculator: its first version gets the locker's signed release decision (it is active
    from now; under four eyes `formula validate` names it until someone else approves it). Returns a note."""
    pol = _policy(reg)
    if not new or not signing(pol, key):
        return ""
    t, ident, acting = _identity(reg, key, None, None, clock.today())
    for c, version, content in new:
        path = reg.paths[c.slug]
        original = path.read_text(encoding="utf-8")
        rt = rt_load(path)
        item = next(x for x in rt["versions"] if x.get("version") == version)
        v = next(x for x in c.versions if x.version == version)
        item.setdefault("decisions", []).append(_sign(
            ident, acting, slug=c.slug, version=version, content=content, effective=v.effective, decision="release",
            day=clock.today(), reason=v.changelog, previous=main_head(reg, c)))
        text = rt_dump(rt, original)
        _validated(text, path)
        changes[path] = text
    need = [f"{c.slug} {version}" for c, version, _ in new if pol.four_eyes or pol.required(c.slug) > 1]
    return (f"; signed as released by {ident.person.name} ({ident.principal})"
            + (f"; under the policy {', '.join(need)} need(s) approval by someone else: `formula approve SLUG "
               "VERSION --key ...` (until then `formula validate` names them)" if need else ""))
