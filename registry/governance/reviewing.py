"""`formula review`: a review sign-off on the active version (governance metadata, not content: no new version)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

from registry import clock, plain_files
from registry import versions as ver
from registry.errors import ReleaseError
from registry.governance.acting import identity_of, intact, policy_of, signed_record
from registry.governance.arguments import parse_date, who_of
from registry.governance.deciding import main_head, signing
from registry.governance.writeplan import (
    Plan,
    active_index,
    calculator,
    draft_path,
    loaded,
    validated,
    writing,
)
from registry.yamlio import rt_dump, rt_load

if TYPE_CHECKING:
    pass


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
        reg = loaded(base, "recording a review")
        c = calculator(reg, ref)
        v = c.active
        if when < v.effective:
            raise ReleaseError(f"--date {when} is before {c.slug} {v.version} took effect ({v.effective}): "
                               "a review signs off a version in force")
        if v.last_review and when < v.last_review:
            raise ReleaseError(f"--date {when} is before the last review ({v.last_review}); "
                               "a review never moves the last review back")
        path = reg.paths[c.slug]
        original = plain_files.read_text(path)
        rt = rt_load(path)
        item = rt["versions"][active_index(rt)]
        pol = policy_of(reg)
        if signing(pol, key):
            if draft_path(reg, c.slug).exists():
                raise ReleaseError(f"a draft of {c.slug} waits: approve or reject it first (its signatures chain to "
                                   "the decision log as it stands, so a review cannot come between)")
            t, ident, acting = identity_of(reg, key, who, role, when)
            intact(reg, c, t)
            person = (ident.person.name, acting)
            content = ver.read_lock(reg.lock_path).get(c.slug, {}).get(v.version) or ""
            item.setdefault("decisions", []).append(signed_record(
                ident, acting, slug=c.slug, version=v.version, content=content, effective=v.effective,
                decision="review", day=when, reason="review sign-off", previous=main_head(reg, c), next_review=due))
        else:
            typed = who_of(who, role)
            if typed is None:
                raise ReleaseError("--by and --role must name the reviewer and their role")
            person = typed
            if "signoffs" not in item:
                item["signoffs"] = []
            item["signoffs"].append({"who": person[0], "role": person[1], "date": when})
        item["last_review"] = when
        item["next_review"] = due  # a review signs off; it never approves (only `formula approve` does)
        text = rt_dump(rt, original)
        validated(text, path)
        plan = Plan(reg)
        plan.changes[path] = text
        plan.commit()
    return f"{c.slug} {v.version}: reviewed by {person[0]} ({person[1]}) on {when}; next review due {due}"

