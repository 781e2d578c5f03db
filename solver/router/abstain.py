"""The abstain route: no answer, and the reason why."""
from __future__ import annotations

from solver.records import AnswerRecord
from solver.router import ROUTES, Request
from solver.router._common import skeleton


@ROUTES.register("abstain")
def abstain(req: Request) -> AnswerRecord:
    return skeleton(req, "abstain", value=None, abstained=True,
                    reason=req.reason or "no verified library function and no program to run")
