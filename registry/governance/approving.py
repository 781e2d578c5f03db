"""`formula approve` and `formula activate`: a draft becomes active at k of n approvals, on its effective date."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from registry import clock, plain_files
from registry import versions as ver
from registry.errors import ReleaseError
from registry.governance.acting import four_eyes, identity_of, intact, policy_of, signed_record, signoff
from registry.governance.arguments import parse_date, who_of
from registry.governance.deciding import DecisionRefused, check_approver, main_head, signing
from registry.governance.writeplan import (
    Plan,
    active_index,
    after_checks,
    calculator,
    draft_path,
    loaded,
    plain,
    validated,
    waiting_draft,
    writing,
)
from registry.loader import Registry
from registry.schema import Calculator
from registry.versioned import DRAFTS_DIR, unreleased
from registry.yamlio import rt_dump, rt_load

if TYPE_CHECKING:
    pass




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
        reg = loaded(base, "approving")
        c = calculator(reg, ref)
        pol = policy_of(reg)
        if signing(pol, key) and version == c.active.version and not draft_path(reg, c.slug).exists():
            return _approve_active(reg, c, (key, by, role), when, reason.strip())
        dpath, drt = waiting_draft(reg, c.slug, version)
        if signing(pol, key):
            return _approve_signed(reg, c, version, (dpath, drt), (key, by, role), when, reason.strip())
        who = who_of(by, role)
        if who is None:
            raise ReleaseError("--by and --role must name who approves and their role")
        entry = drt["versions"][-1]
        if entry.get("approved_by"):
            raise ReleaseError(f"{c.slug} {version} is already approved; it becomes active on {entry['effective']}")
        _base_checks(reg, c, drt)
        four_eyes(policy_of(reg), c.slug, version, entry, who)
        released_on = plain(entry.get("released_by", {}) or {}).get("date")
        if released_on and when.isoformat() < released_on:
            raise ReleaseError(f"--date {when} is before the draft was made ({released_on})")
        entry["approved_by"] = signoff(who, when, reason.strip())
        entry["approved"] = when
        validated(rt_dump(drt), dpath)
        plan = Plan(reg)
        effective = dt.date.fromisoformat(plain(entry["effective"]))
        if effective > today:
            plan.changes[dpath] = rt_dump(drt)
            plan.commit()
            return (f"{c.slug} {version}: approved by {who[0]} ({who[1]}) on {when}; {c.active.version} stays active "
                    f"until {effective} (run `formula activate` on or after that day)")
        plan.promote(c.slug, drt)
        plan.changes[dpath] = None
        plan.finish([c.slug])
        plan.commit()
        checked = after_checks(reg, plan.calcs, [c.slug])
    return (f"{c.slug} {version}: approved by {who[0]} ({who[1]}) on {when}; now active (was {c.active.version})"
            + checked)


def _acting(principal: str, role: str) -> str:
    """'chair' for the principal `chair` acting as chair, 'a.chair as chair' otherwise: the key's principal and the
    role it signed in, each named once."""
    return role if principal == role else f"{principal} as {role}"


def _base_checks(reg: Registry, c: Calculator, drt: Any) -> None:
    base_active = drt["versions"][active_index(drt)]["version"]
    if base_active != c.active.version:
        raise ReleaseError(f"the draft was made from {base_active}, but {c.active.version} is active now: "
                           "remove the draft and make it again")
    if c.slug in unreleased(reg):
        raise ReleaseError(f"{c.slug} has unreleased hand edits; release or undo them before approving")


def _approve_signed(reg: Registry, c: Calculator, version: str, draft: tuple[Path, Any],
                    signer: tuple[str | Path | None, str | None, str | None], when: dt.date, reason: str) -> str:
    """A signed approval, under the registry lock: counted once per principal and key; promoted at k of n."""
    from registry.trust import decisionlog as sg

    dpath, drt = draft
    _base_checks(reg, c, drt)
    t, ident, acting = identity_of(reg, *signer, when)
    a = intact(reg, c, t)
    try:
        check_approver(t, [x for x in a.checked if x.entry.in_draft], c.slug, version, ident, acting)
    except DecisionRefused as e:
        raise ReleaseError(str(e)) from None
    mine = [x for x in a.checked if x.entry.in_draft]
    if when < mine[0].entry.d.date:
        raise ReleaseError(f"--date {when} is before the draft was made ({mine[0].entry.d.date})")
    effective = dt.date.fromisoformat(plain(drt["versions"][-1]["effective"]))
    content = mine[0].entry.content or ""
    rec = signed_record(ident, acting, slug=c.slug, version=version, content=content, effective=effective,
                decision="approve", day=when, reason=reason, previous=sg.head([x.entry for x in a.checked]))
    drt["versions"][-1].setdefault("decisions", []).append(rec)
    new = sg.Checked(sg.Entry(c.slug, version, effective, content, sg.Decision.model_validate(plain(rec)), "", 1,
                              True), ident.fingerprint, None)
    counted, _ = sg.tally(t, c.slug, [*mine, new])
    need = t.policy.required(c.slug)
    plan = Plan(reg)
    said = f"{c.slug} {version}: approved by {ident.person.name} ({_acting(ident.principal, acting)}) on {when}"
    if len(counted) < need:
        plan.changes[dpath] = _checked_draft(drt, dpath)
        plan.commit()
        return (f"{said}; {len(counted)} of {need} approvals, so it waits for {need - len(counted)} more "
                f"(by principals other than {mine[0].entry.d.principal}); {c.active.version} stays active")
    if effective > clock.today():
        plan.changes[dpath] = _checked_draft(drt, dpath)
        plan.commit()
        return (f"{said}; {c.active.version} stays active until {effective} (run `formula activate` on or after "
                "that day)")
    plan.promote(c.slug, drt)  # validates the file it makes, the approved version in it: once
    plan.changes[dpath] = None
    plan.finish([c.slug])
    plan.commit()
    return f"{said}; now active (was {c.active.version})" + after_checks(reg, plan.calcs, [c.slug])


def _checked_draft(drt: Any, dpath: Path) -> str:
    """The draft with its new approval, as it will be written: validated once, before anything is written."""
    text = rt_dump(drt)
    validated(text, dpath)
    return text


def _approve_active(reg: Registry, c: Calculator, signer: tuple[str | Path | None, str | None, str | None],
                    when: dt.date, reason: str) -> str:
    """A further signed approval of the active version: how a version meets a policy made stricter after it."""
    from registry.trust import decisionlog as sg

    v = c.active
    t, ident, acting = identity_of(reg, *signer, when)
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
    original = plain_files.read_text(path)
    rt = rt_load(path)
    content = ver.read_lock(reg.lock_path).get(c.slug, {}).get(v.version) or ""
    rec = signed_record(ident, acting, slug=c.slug, version=v.version, content=content, effective=v.effective,
                decision="approve", day=when, reason=reason, previous=main_head(reg, c))
    rt["versions"][active_index(rt)].setdefault("decisions", []).append(rec)
    text = rt_dump(rt, original)
    validated(text, path)
    new = sg.Checked(sg.Entry(c.slug, v.version, v.effective, content, sg.Decision.model_validate(plain(rec)), "", 1),
                     ident.fingerprint, None)
    counted, _ = sg.tally(t, c.slug, [*mine, new])
    plan = Plan(reg)
    plan.changes[path] = text
    plan.commit()
    return (f"{c.slug} {v.version} (active): approved by {ident.person.name} ({_acting(ident.principal, acting)}) on "
            f"{when}; {len(counted)} of {t.policy.required(c.slug)} approvals required")


def draft_approved(reg: Registry, slug: str, entry: Any) -> bool:
    """Whether a waiting draft's approvals satisfy the policy (signed), or it records an approval (typed)."""
    if not entry.get("decisions"):
        return bool(entry.get("approved_by"))
    from registry.trust import decisionlog as sg

    t = sg.trust(reg.formulas_dir)
    counted, need, why = sg.draft_state(t, sg.audit(reg, reg.calculators[slug], t), slug)
    return not why and len(counted) >= need


def activate(root: Path | str | None, *, on: str | None = None) -> str:
    """Make every approved draft whose effective date has come the active version."""
    day = parse_date(on, "--on")
    if day > clock.today():
        raise ReleaseError(f"--on {day} is in the future: a version becomes active on its day, not before")
    with writing(root) as base:
        reg = loaded(base, "activating")
        plan = Plan(reg)
        done = []
        for dpath in sorted((reg.formulas_dir / DRAFTS_DIR).glob("*.yaml")):
            slug = dpath.stem
            drt = rt_load(dpath)
            entry = drt["versions"][-1]
            if slug not in reg.calculators:
                raise ReleaseError(f"{reg.rel(dpath)} names no calculator of the registry")
            if dt.date.fromisoformat(plain(entry["effective"])) > day or not draft_approved(reg, slug, entry):
                continue
            done.append(f"{slug} {plan.promote(slug, drt)}")
            plan.changes[dpath] = None
        plan.finish([s.split()[0] for s in done])
        plan.commit()
        checked = after_checks(reg, plan.calcs, [s.split()[0] for s in done])
    return ("activated " + ", ".join(done) + checked) if done else f"no approved version is due to become active on {day}"

