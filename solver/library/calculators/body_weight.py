"""Body size: BMI, ideal body weight (Devine), adjusted body weight."""
from __future__ import annotations

from solver.library.context import Context
from solver.library.functions import calculator


@calculator("body-mass-index", columnar=True, float_result=True)
def body_mass_index(ctx: Context) -> float:
    kg = ctx.weight()
    m = ctx.height(unit="m")
    return kg / (m * m)


@calculator("ideal-body-weight", columnar=True)
def ideal_body_weight(ctx: Context) -> float:
    inches = ctx.height(unit="in")
    base = ctx.where(ctx.choice_is("sex", "Male"), ctx.const("male_base_weight"), ctx.const("female_base_weight"))
    return base + ctx.const("kg_per_inch_over_base") * (inches - ctx.const("base_height"))


@calculator("adjusted-body-weight", columnar=True)
def adjusted_body_weight(ctx: Context) -> float:
    ibw = ctx.sub("ideal-body-weight")
    kg = ctx.weight()
    return ibw + ctx.const("correction_factor") * (kg - ibw)
