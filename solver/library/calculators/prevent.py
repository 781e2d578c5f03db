"""The AHA PREVENT base 10-year equations (Khan 2024): total CVD, ASCVD and heart failure, by sex.

PREVENT succeeds the Pooled Cohort Equations. It has no benchmark, so both variants compute the
published equations. Every number (coefficients, centring, knots, the cholesterol factor, the ranges
the equations cover) is read from the registry entry through `ctx`.
"""
from __future__ import annotations

import math
from typing import Callable

from solver.library.context import Context
from solver.library.errors import MissingInput
from solver.library.functions import calculator

SLUG = "prevent-10-year"
_TC, _HDL = "Total cholesterol", "high-density lipoprotein cholesterol"


def _covered(ctx: Context, name: str, value: float, limits: str, unit: str,
             shown: Callable[[], str] | None = None) -> float:
    """Refuse a value outside the range the equations were derived on (constants min_/max_<limits>)."""
    lo, hi = ctx.const(f"min_{limits}"), ctx.const(f"max_{limits}")
    ctx.refuse((value < lo) | (value > hi), name, lambda: (
        f"{shown() if shown else f'{value:g} {unit}'} is outside the {lo} to {hi} {unit} the PREVENT equations cover"))
    return value


def _cholesterol_mmol(ctx: Context, name: str, limits: str) -> float:
    """Cholesterol in the mmol/L the equations use: mg/dL x the equations' factor; mmol/L as given."""
    mg_dl = ctx.quantity(name)  # accepted unit and plausibility checked, in mg/dL
    factor = ctx.const("cholesterol_mmol_per_mg_dl")
    in_mmol = ctx.unit_is(name, "mmol/L")

    def as_given() -> float:
        value = ctx.given_number(name)
        ctx.note(name, [value, "mmol/L"], value / factor, "mg/dL")
        return value * 1.0  # (a float, as float(value))

    mmol = ctx.select([(in_mmol, as_given)], lambda: mg_dl * factor)
    mg_dl = ctx.select([(in_mmol, lambda: ctx.given_number(name) / factor)], mg_dl)
    _covered(ctx, name, mg_dl, limits, "mg/dL", lambda: f"{ctx.given_number(name):g} mmol/L ({mg_dl:.4g} mg/dL)"
             if in_mmol else f"{mg_dl:g} mg/dL")
    return mmol


def _terms(ctx: Context) -> dict[str, float]:
    """The centred and scaled predictors, named as the coefficients' suffixes."""
    c = ctx.const
    age = _covered(ctx, "age", ctx.age(), "age", "years")
    tc = _cholesterol_mmol(ctx, _TC, "total_cholesterol")
    hdl = _cholesterol_mmol(ctx, _HDL, "hdl")
    sbp = _covered(ctx, "Systolic Blood Pressure", ctx.measurement("Systolic Blood Pressure"), "sbp", "mm Hg")
    egfr_name, bmi_name = "estimated glomerular filtration rate", "Body Mass Index (BMI)"
    egfr = _covered(ctx, egfr_name, ctx.measurement(egfr_name), "egfr", "mL/min/1.73 m²")
    bmi = _covered(ctx, bmi_name, ctx.measurement(bmi_name), "bmi", "kg/m^2")
    flag = {k: ctx.where(ctx.flag(n), 1.0, 0.0) for k, n in (
        ("diabetes", "Diabetes history"), ("smoker", "Smoker"),
        ("bp_treated", "Blood pressure being treated with medicines"), ("statin", "Statin use"))}
    a = (age - c("age_center")) / c("age_per")
    t = {
        "age": a, "non_hdl": tc - hdl - c("non_hdl_center"), "hdl": (hdl - c("hdl_center")) / c("hdl_per"),
        "sbp_below_110": (ctx.minimum(sbp, c("sbp_knot")) - c("sbp_knot")) / c("sbp_per"),
        "sbp_110_up": (ctx.maximum(sbp, c("sbp_knot")) - c("sbp_center")) / c("sbp_per"),
        "bmi_below_30": (ctx.minimum(bmi, c("bmi_knot")) - c("bmi_center")) / c("bmi_per"),
        "bmi_30_up": (ctx.maximum(bmi, c("bmi_knot")) - c("bmi_knot")) / c("bmi_per"),
        "egfr_below_60": (ctx.minimum(egfr, c("egfr_knot")) - c("egfr_knot")) / c("egfr_per"),
        "egfr_60_up": (ctx.maximum(egfr, c("egfr_knot")) - c("egfr_center")) / c("egfr_per"),
        **flag, "constant": 1.0,
    }
    t["bp_treated_sbp_110_up"] = t["bp_treated"] * t["sbp_110_up"]
    t["statin_non_hdl"] = t["statin"] * t["non_hdl"]
    for name in ("non_hdl", "hdl", "sbp_110_up", "diabetes", "smoker", "bmi_30_up", "egfr_below_60"):
        t[f"age_{name}"] = a * t[name]
    return t


@calculator(SLUG, columnar=True)
def prevent_10_year(ctx: Context) -> float:
    outcome = ctx.choice("outcome")  # the registry's default when not given
    ctx.refuse(ctx.is_none(outcome), "outcome", lambda: "no outcome given and the registry entry names no default",
               MissingInput)
    male = ctx.choice_is("sex", "Male")
    terms = _terms(ctx)
    consts = ctx.calc.constants

    def risk(prefix: str) -> float:
        # coefficients are named <sex>_<outcome>_<term>: "heart failure" -> female_heart_failure_age
        x = sum(ctx.const(prefix + name) * value for name, value in terms.items() if prefix + name in consts)
        return ctx.const("percent") * ctx.exp(x) / (1 + ctx.exp(x))

    cases = []
    for option in ctx.spec("outcome").options:
        key = option.lower().replace(" ", "_")
        chosen = ctx.choice_is("outcome", option)
        cases.extend([(chosen & male, lambda k=key: risk(f"male_{k}_")), (chosen, lambda k=key: risk(f"female_{k}_"))])
    return ctx.select(cases, math.nan)  # (no option: refused above)
