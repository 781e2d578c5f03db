"""`formula reject`: a waiting draft is turned down; who, when and why stay on record (formulas/drafts/rejected/)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from registry import clock
from registry.errors import ReleaseError
from registry.governance.acting import identity_of, policy_of, signed_record, signoff
from registry.governance.arguments import reason_of, who_of
from registry.governance.deciding import signing
from registry.governance.writeplan import (
    Plan,
    calculator,
    loaded,
    plain,
    waiting_draft,
    writing,
)
from registry.loader import Registry
from registry.schema import Calculator
from registry.trust.rejections import REJECTED_DIR

if TYPE_CHECKING:
    pass


def reject(root: Path | str | None, ref: str, version: str, by: str | None = None, role: str | None = None, *,
           reason: str, key: str | Path | None = None) -> str:
    """Reject a waiting draft: the draft file goes, and who rejected it, when and why is kept on record
    in formulas/drafts/rejected/<slug>.yaml (the active version is untouched)."""
    from registry.yamlio import dump, load_file

    why = reason_of(reason)
    today = clock.today()
    with writing(root) as base:
        reg = loaded(base, "rejecting")
        c = calculator(reg, ref)
        dpath, drt = waiting_draft(reg, c.slug, version)
        entry = plain(drt["versions"][-1])
        log = reg.formulas_dir / REJECTED_DIR / f"{c.slug}.yaml"
        records = list(load_file(log) or []) if log.exists() else []
        if signing(policy_of(reg), key):
            who = _signed_rejection(reg, c, version, entry, (key, by, role), today, why, records)
        else:
            typed = who_of(by, role)
            if typed is None:
                raise ReleaseError("--by and --role must name who rejects the draft and their role")
            who = typed
            records.append({"version": version, "changelog": entry.get("changelog"),
                            "effective": entry.get("effective"), "drafted_by": entry.get("released_by"),
                            "rejected_by": plain(signoff(who, today, why))})
        plan = Plan(reg)
        plan.changes[dpath] = None
        plan.changes[log] = dump(plain(records))
        plan.commit()
    return (f"{c.slug} {version}: rejected by {who[0]} ({who[1]}) on {today}: {why}; {c.active.version} stays active "
            f"(recorded in {reg.rel(log)})")


def _signed_rejection(reg: Registry, c: Calculator, version: str, entry: dict[str, Any],
                      signer: tuple[str | Path | None, str | None, str | None], today: dt.date, why: str,
                      records: list[Any]) -> tuple[str, str]:
    """Append the rejected draft's decisions and the signed rejection to `records`; returns who rejected."""
    from registry.trust import decisionlog as sg

    t, ident, acting = identity_of(reg, *signer, today)
    a = sg.audit(reg, c, t)  # a draft whose signatures fail can still be turned down
    mine = [x.entry for x in a.checked if x.entry.in_draft]
    content = (mine[0].content if mine else None) or ""
    rec = signed_record(ident, acting, slug=c.slug, version=version, content=content,
                effective=dt.date.fromisoformat(entry["effective"]), decision="reject", day=today, reason=why,
                previous=sg.head([x.entry for x in a.checked]))
    records.append({"version": version, "changelog": entry.get("changelog"), "effective": entry.get("effective"),
                    "content": content,  # what the decisions sign: validation verifies them (registry.trust.rejections)
                    "decisions": [*entry.get("decisions", []), plain(rec)]})
    return ident.person.name, acting

