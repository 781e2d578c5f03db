"""Parts shared by the routes: the record skeleton naming the exact content used."""
from __future__ import annotations

import datetime as dt
from typing import Any

from solver.records import AnswerRecord, registry_digest, version_hash
from solver.router import Request


def plain(v: Any) -> Any:
    """A value as JSON holds it: dates as ISO text, (weeks, days) as a list."""
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, tuple):
        return list(v)
    return v


def skeleton(req: Request, route: str, **kw: Any) -> AnswerRecord:
    """A record of this request's calculator and content; an abstention's working says why there is no answer."""
    c = req.calc
    if kw.get("abstained") and "working" not in kw:
        from solver.library.working import missing_working

        kw["working"] = [s.to_json() for s in missing_working(kw.get("reason") or "no answer")]
    return AnswerRecord(
        calculator=c.slug, medcalc_id=c.medcalc_id, version=c.active.version,
        content_hash=version_hash(req.reg, c), registry_lock_digest=registry_digest(req.reg),
        variant=req.variant, route=route, unit=c.output.unit, entities=req.entities,
        constants={k: v.model_dump(mode="json").get("value") for k, v in c.constants.items()},
        warnings=list(req.warnings), **kw,
    )
