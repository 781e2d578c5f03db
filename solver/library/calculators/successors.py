"""Successor and alternative formulas held beside the benchmark's calculators (issue 14): the Pooled
Cohort Equations (after Framingham), qSOFA (Sepsis-3, after SIRS), the Sampson/NIH LDL equation
(beside Friedewald) and the Katz sodium correction (beside Hillier).

None has a benchmark, so both variants compute the published formula. Every number is read from the
registry entry through `ctx`.
"""
from __future__ import annotations

from solver.library.context import Context
from solver.library.functions import calculator

_PCE_TERMS = ("ln_age", "ln_age_squared", "ln_total_cholesterol", "ln_age_ln_total_cholesterol", "ln_hdl",
              "ln_age_ln_hdl", "ln_treated_sbp", "ln_age_ln_treated_sbp", "ln_untreated_sbp",
              "ln_age_ln_untreated_sbp", "smoker", "ln_age_smoker", "diabetes")


@calculator("pooled-cohort-equations", columnar=True)
def pooled_cohort_equations(ctx: Context) -> float:
    male = ctx.choice_is("sex", "Male")
    black = ctx.choice_is("Race", "African American")  # the African American equations, else the white ones
    age = ctx.age()
    ctx.refuse((age < ctx.const("min_age")) | (age > ctx.const("max_age")), "age", lambda: (
        f"{age:g} years is outside the {ctx.const('min_age')} to {ctx.const('max_age')} years the Pooled Cohort "
        "Equations cover"))
    tc = ctx.quantity("Total cholesterol")
    hdl = ctx.quantity("high-density lipoprotein cholesterol")
    sbp = ctx.measurement("Systolic Blood Pressure")
    treated = ctx.flag("Blood pressure being treated with medicines")
    smoker = ctx.where(ctx.flag("Smoker"), 1.0, 0.0)
    diabetes = ctx.where(ctx.flag("Diabetes history"), 1.0, 0.0)
    la, ltc, lhdl, lsbp = ctx.log(age), ctx.log(tc), ctx.log(hdl), ctx.log(sbp)
    value = {
        "ln_age": la, "ln_age_squared": la * la, "ln_total_cholesterol": ltc, "ln_age_ln_total_cholesterol": la * ltc,
        "ln_hdl": lhdl, "ln_age_ln_hdl": la * lhdl,
        "ln_treated_sbp": ctx.where(treated, lsbp, 0.0), "ln_age_ln_treated_sbp": ctx.where(treated, la * lsbp, 0.0),
        "ln_untreated_sbp": ctx.where(treated, 0.0, lsbp), "ln_age_ln_untreated_sbp": ctx.where(treated, 0.0, la * lsbp),
        "smoker": smoker, "ln_age_smoker": la * smoker, "diabetes": diabetes,
    }
    consts = ctx.calc.constants

    def risk(group: str) -> float:
        total = sum(ctx.const(f"{group}_{t}") * value[t] for t in _PCE_TERMS if f"{group}_{t}" in consts)
        survival = ctx.const(f"{group}_baseline_survival")
        return ctx.const("percent") * (1 - ctx.pow(survival, ctx.exp(total - ctx.const(f"{group}_mean"))))

    return ctx.select([(black & male, lambda: risk("black_male")), (black, lambda: risk("black_female")),
                       (male, lambda: risk("white_male"))], lambda: risk("white_female"))


@calculator("qsofa", columnar=True)
def qsofa(ctx: Context) -> float:
    def pts(item: str, met: bool) -> float:
        return ctx.where(met, ctx.lookup("points", item), 0)

    score = pts("respiratory rate", ctx.measurement("respiratory rate") >= ctx.const("respiratory_rate_threshold"))
    score = score + pts("Systolic Blood Pressure", ctx.measurement("Systolic Blood Pressure") <= ctx.const("systolic_threshold"))
    gcs = ctx.if_given("Glasgow Coma Score", lambda: ctx.number("Glasgow Coma Score"), ctx.const("gcs_normal"))
    low_gcs = gcs < ctx.const("gcs_normal")
    altered = ctx.select([(low_gcs, True)], lambda: ctx.flag("Altered mental status"))  # `or`: read when needed
    score = score + pts("altered mentation", altered)
    return score


def _triglycerides_mg_dl(ctx: Context) -> float:
    """Triglycerides in mg/dL; mmol/L with the conventional factor (from 1.1.0; before it, the molar mass)."""
    name = "Triglycerides"
    ctx.given_number(name)  # a malformed pair is refused before anything else
    if "triglyceride_mg_dl_per_mmol_l" not in ctx.calc.constants:
        return ctx.quantity(name)

    def from_mmol() -> float:
        ctx.accept_unit(name, "mmol/L")
        value = ctx.given_number(name)
        mg_dl = value * ctx.const("triglyceride_mg_dl_per_mmol_l")
        ctx.check_range(name, mg_dl, ctx.spec(name).unit)
        return ctx.note(name, [value, "mmol/L"], mg_dl, ctx.spec(name).unit)

    return ctx.select([(ctx.unit_is(name, "mmol/L"), from_mmol)], lambda: ctx.quantity(name))


@calculator("ldl-sampson", columnar=True)
def ldl_sampson(ctx: Context) -> float:
    tc = ctx.quantity("Total cholesterol")
    hdl = ctx.quantity("high-density lipoprotein cholesterol")
    tg = _triglycerides_mg_dl(ctx)
    ctx.refuse(tg > ctx.const("max_triglycerides"), "Triglycerides", lambda: (
        f"{tg:g} mg/dL is above the {ctx.const('max_triglycerides')} mg/dL the Sampson equation was validated for; "
        "measure LDL directly"))
    vldl = (tg / ctx.const("triglyceride_divisor") + tg * (tc - hdl) / ctx.const("triglyceride_non_hdl_divisor")
            - tg * tg / ctx.const("triglyceride_squared_divisor"))
    return tc / ctx.const("total_cholesterol_divisor") - hdl / ctx.const("hdl_divisor") - vldl - ctx.const("intercept")


@calculator("sodium-correction-katz", columnar=True)
def sodium_correction_katz(ctx: Context) -> float:
    na = ctx.quantity("Sodium")
    glucose = ctx.quantity("Glucose")
    return na + ctx.const("correction_per_mg_dl_glucose") * (glucose - ctx.const("reference_glucose"))
