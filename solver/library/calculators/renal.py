"""Kidney function: Cockcroft-Gault creatinine clearance."""
from __future__ import annotations

from solver.library.context import Context
from solver.library.functions import calculator


@calculator("creatinine-clearance-cockcroft-gault", columnar=True, float_result=True)
def cockcroft_gault(ctx: Context) -> float:
    male = ctx.choice_is("sex", "Male")
    age = ctx.age()
    kg = ctx.weight()
    ctx.height(unit="m")  # read for its checks
    scr = ctx.quantity("creatinine")
    if ctx.benchmark:  # the weight the reference's BMI rule picks (the dependencies computed only where needed)
        rule = ctx.band("weight_rule", ctx.sub("body-mass-index"))
        weight = ctx.select([(rule == 0, kg), (rule == 1, lambda: ctx.minimum(ctx.sub("ideal-body-weight"), kg))],
                            lambda: ctx.sub("adjusted-body-weight"))
    else:
        weight = kg  # the 1976 publication used actual body weight
    factor = ctx.where(male, ctx.const("male_factor"), ctx.const("female_factor"))
    if ctx.recording:
        ctx.step("weight used" + (" (by BMI class)" if ctx.benchmark else " (actual)"), weight, "kg")
        ctx.step("sex factor", factor)
    return (ctx.const("age_offset") - age) * weight * factor / (ctx.const("denominator_factor") * scr)
