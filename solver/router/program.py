"""The program route: a supplied (model-written) program, run in the restricted executor."""
from __future__ import annotations

import datetime as dt
import math
from typing import Any

from registry.schema import Calculator, OutputKind
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
    misfit = misfit_kind(req.calc, out.value)
    if misfit:  # a value, but not one this calculator can answer with: abstain, never pass it on
        return skeleton(req, "abstain", abstained=True, program=req.program, executor_outcome=outcome,
                        reason=f"the program's value does not fit {req.calc.slug}'s output: {misfit}")
    return skeleton(req, "program", value=plain(out.value), program=req.program, executor_outcome=outcome)


def misfit_kind(calc: Calculator, value: Any) -> str | None:
    """Why a program's value cannot be this calculator's answer (None when it fits its output kind):
    decimal a finite number, integer a whole number, date a date, gestational age (weeks, 0..6 days)."""
    kind = calc.output.kind
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if kind == OutputKind.decimal and not number:
        return f"returned {plain(value)!r}, not a number"
    if kind == OutputKind.integer and not (number and float(value).is_integer()):
        return f"returned {plain(value)!r}, not a whole number"
    if kind == OutputKind.date and not (isinstance(value, dt.date) and not isinstance(value, dt.datetime)):
        return f"returned {plain(value)!r}, not a date"
    if kind == OutputKind.gestational_age:
        ok = (isinstance(value, tuple) and len(value) == 2 and all(isinstance(x, int) and not isinstance(x, bool)
                                                                    for x in value)
              and value[0] >= 0 and 0 <= value[1] <= 6)
        if not ok:
            return f"returned {plain(value)!r}, not (weeks, days) with 0 to 6 days"
    return None
