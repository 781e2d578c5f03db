"""Pregnancy dating from the last menstrual period: due date, conception date, gestational age."""
from __future__ import annotations

import datetime as dt

from solver.library.context import Context
from solver.library.errors import BadValue
from solver.library.functions import calculator


def _whole_days(ctx: Context, name: str) -> int:
    """A bare whole number of days (the core has no accessor for `count` inputs)."""
    x = ctx.number(name)
    ctx.refuse(x != ctx.trunc(x), name, lambda: f"expected a whole number of days, got {x!r}", BadValue)
    return ctx.trunc(x)


@calculator("estimated-due-date", columnar=True)
def estimated_due_date(ctx: Context) -> dt.date:
    lmp = ctx.date("Last menstrual date")
    cycle = _whole_days(ctx, "cycle length")
    pregnancy = ctx.const("pregnancy_duration")
    shift = cycle - ctx.const("reference_cycle_length")
    if ctx.recording:  # (a date added to once: the plain path was 10 % slower with a step's date computed)
        ctx.step("last menstrual period plus the length of a pregnancy", ctx.add_days(lmp, pregnancy))
        ctx.step("days added for the cycle length (less the reference cycle)", shift, "days")
    return ctx.add_days(lmp, pregnancy + shift)


@calculator("estimated-conception-date", columnar=True)
def estimated_conception_date(ctx: Context) -> dt.date:
    lmp = ctx.date("Last menstrual date")
    return ctx.add_days(lmp, ctx.const("days_to_conception"))


@calculator("estimated-gestational-age", columnar=True)
def estimated_gestational_age(ctx: Context) -> tuple[int, int]:
    today = ctx.date("Current Date")
    lmp = ctx.date("Last menstrual date")
    days = ctx.days_between(today, lmp)
    if not ctx.benchmark:
        ctx.refuse(days < 0, "Current Date", lambda: (
            f"the current date {today:%m/%d/%Y} is before the last menstrual period {lmp:%m/%d/%Y}"))
    days = ctx.step("days since the last menstrual period", ctx.where(days < 0, -days, days), "days")  # (absolute, as the benchmark)
    per_week = ctx.const("days_per_week")
    return days // per_week, days % per_week
