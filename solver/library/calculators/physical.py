"""Arithmetic of body and circulation: mean arterial pressure, body surface area, target weight."""
from __future__ import annotations

from solver.library.context import Context
from solver.library.functions import calculator


@calculator("mean-arterial-pressure", columnar=True, float_result=True)
def mean_arterial_pressure(ctx: Context) -> float:
    sbp = ctx.measurement("Systolic Blood Pressure")
    dbp = ctx.measurement("Diastolic Blood Pressure")
    total = ctx.const("weight_total")
    return sbp * ctx.const("systolic_weight") / total + dbp * ctx.const("diastolic_weight") / total


@calculator("body-surface-area", columnar=True, float_result=True)
def body_surface_area(ctx: Context) -> float:
    cm = ctx.height(unit="cm")
    kg = ctx.weight()
    return ctx.sqrt(kg * cm / ctx.const("mosteller_divisor"))


@calculator("target-weight", columnar=True)
def target_weight(ctx: Context) -> float:
    bmi = ctx.measurement("Body Mass Index (BMI)")
    m = ctx.height(unit="m")
    return bmi * (m * m)
