"""Kidney function: Cockcroft-Gault creatinine clearance."""
from __future__ import annotations

from solver.library.context import Context
from solver.library.functions import calculator


@calculator("creatinine-clearance-cockcroft-gault")
def cockcroft_gault(ctx: Context) -> float:
    sex = ctx.choice("sex")
    age = ctx.age()
    kg = ctx.weight()
    ctx.height(unit="m")
    scr = ctx.quantity("creatinine")
    if ctx.benchmark:
        rule = ctx.band("weight_rule", ctx.sub("body-mass-index"))
        if rule == 0:
            weight = kg
        elif rule == 1:
            weight = min(ctx.sub("ideal-body-weight"), kg)
        else:
            weight = ctx.sub("adjusted-body-weight")
    else:
        weight = kg  # the 1976 publication used actual body weight
    factor = ctx.const("male_factor") if sex == "Male" else ctx.const("female_factor")
    return (ctx.const("age_offset") - age) * weight * factor / (ctx.const("denominator_factor") * scr)
