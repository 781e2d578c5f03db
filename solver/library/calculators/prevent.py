"""The AHA PREVENT base 10-year equations (Khan 2024): total CVD, ASCVD and heart failure, by sex.

PREVENT succeeds the Pooled Cohort Equations. It has no benchmark, so both variants compute the
published equations. Every number (coefficients, centring, knots, the cholesterol factor, the ranges
the equations cover) is read from the registry entry through `ctx`.
"""
from __future__ import annotations

import math

from solver.library.context import Context
from solver.library.errors import MissingInput, OutOfRange
from solver.library.functions import calculator

SLUG = "prevent-10-year"
_TC, _HDL = "Total cholesterol", "high-density lipoprotein cholesterol"


def _covered(ctx: Context, name: str, value: float, limits: str, unit: str, given: str | None = None) -> float:
    """Refuse a value outside the range the equations were derived on (constants min_/max_<limits>)."""
    lo, hi = ctx.const(f"min_{limits}"), ctx.const(f"max_{limits}")
    if not lo <= value <= hi:
        shown = given or f"{value:g} {unit}"
        raise OutOfRange(ctx.slug, name, f"{shown} is outside the {lo} to {hi} {unit} the PREVENT equations cover")
    return value


def _cholesterol_mmol(ctx: Context, name: str, limits: str) -> float:
    """Cholesterol in the mmol/L the equations use: mg/dL x the equations' factor; mmol/L as given."""
    mg_dl = ctx.quantity(name)  # accepted unit and plausibility checked, in mg/dL
    value, unit = ctx.raw(name)
    factor = ctx.const("cholesterol_mmol_per_mg_dl")
    if unit == "mmol/L":
        mmol, mg_dl = float(value), value / factor
        ctx.note(name, [value, unit], mg_dl, "mg/dL")
    else:
        mmol = mg_dl * factor
    _covered(ctx, name, mg_dl, limits, "mg/dL", f"{value:g} {unit} ({mg_dl:.4g} mg/dL)" if unit == "mmol/L" else None)
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
    flag = {k: 1.0 if ctx.flag(n) else 0.0 for k, n in (
        ("diabetes", "Diabetes history"), ("smoker", "Smoker"),
        ("bp_treated", "Blood pressure being treated with medicines"), ("statin", "Statin use"))}
    a = (age - c("age_center")) / c("age_per")
    t = {
        "age": a, "non_hdl": tc - hdl - c("non_hdl_center"), "hdl": (hdl - c("hdl_center")) / c("hdl_per"),
        "sbp_below_110": (min(sbp, c("sbp_knot")) - c("sbp_knot")) / c("sbp_per"),
        "sbp_110_up": (max(sbp, c("sbp_knot")) - c("sbp_center")) / c("sbp_per"),
        "bmi_below_30": (min(bmi, c("bmi_knot")) - c("bmi_center")) / c("bmi_per"),
        "bmi_30_up": (max(bmi, c("bmi_knot")) - c("bmi_knot")) / c("bmi_per"),
        "egfr_below_60": (min(egfr, c("egfr_knot")) - c("egfr_knot")) / c("egfr_per"),
        "egfr_60_up": (max(egfr, c("egfr_knot")) - c("egfr_center")) / c("egfr_per"),
        **flag, "constant": 1.0,
    }
    t["bp_treated_sbp_110_up"] = t["bp_treated"] * t["sbp_110_up"]
    t["statin_non_hdl"] = t["statin"] * t["non_hdl"]
    for name in ("non_hdl", "hdl", "sbp_110_up", "diabetes", "smoker", "bmi_30_up", "egfr_below_60"):
        t[f"age_{name}"] = a * t[name]
    return t


@calculator(SLUG)
def prevent_10_year(ctx: Context) -> float:
    outcome = ctx.choice("outcome")  # the registry's default when not given
    if outcome is None:
        raise MissingInput(ctx.slug, "outcome", "no outcome given and the registry entry names no default")
    # coefficients are named <sex>_<outcome>_<term>: "heart failure" -> female_heart_failure_age
    prefix = f"{'male' if ctx.choice('sex') == 'Male' else 'female'}_{outcome.lower().replace(' ', '_')}_"
    terms = _terms(ctx)
    consts = ctx.calc.constants
    x = sum(ctx.const(prefix + name) * value for name, value in terms.items() if prefix + name in consts)
    return ctx.const("percent") * math.exp(x) / (1 + math.exp(x))
