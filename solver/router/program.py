"""The program route: a supplied (model-written) program, run in the restricted executor."""
from __future__ import annotations

from solver.executor import run_program
from solver.records import AnswerRecord
from solver.router import ROUTES, Request
from solver.router._common import plain, skeleton


@ROUTES.register("program")
def program(req: Request) -> AnswerRecord:
    if not req.program:
        return skeleton(req, "abstain", abstained=True, reason="the program route needs a program (--program FILE)")
    out = run_program(req.program)
    outcome = out.model_dump(mode="json")
    if not out.ok:
        return skeleton(req, "abstain", abstained=True, program=req.program, executor_outcome=outcome,
                        reason=f"the program gave no answer ({out.kind}{': ' + out.detail if out.detail else ''})")
    return skeleton(req, "program", value=plain(out.value), program=req.program, executor_outcome=outcome)
