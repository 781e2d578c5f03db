"""Risk models: Pneumonia Severity Index, Glasgow-Blatchford, Framingham hard CHD."""
from __future__ import annotations

import math

from solver.library.context import Context
from solver.library.errors import MissingInput, OutOfRange
from solver.library.functions import calculator
from solver.library.rounding import round_value, step

# ---------------------------------------------------------------------------------------- PSI

_PSI_HISTORY = (
    "Nursing home resident", "Neoplastic disease", "Liver disease history", "Congestive Heart Failure",
    "Cerebrovascular disease history", "Renal disease history", "Altered mental status", "Pleural effusion on x-ray",
)


def _psi_pao2(ctx: Context) -> bool:
    name = "Partial pressure of oxygen"
    if not ctx.has(name):
        if ctx.benchmark:
            raise MissingInput(ctx.slug, name, "required input is missing (the benchmark's reference cannot score "
                               "without it; the published variant counts it as normal)")
        return False
    value = ctx.measurement(name)
    unit = ctx.raw(name)[1]
    return value < ctx.const("pao2_threshold_kpa" if unit == "kPa" else "pao2_threshold_mmhg")


@calculator("pneumonia-severity-index")
def pneumonia_severity_index(ctx: Context) -> float:
    pts = lambda item: ctx.lookup("item_points", item)  # noqa: E731
    score = ctx.age()
    if ctx.choice("sex") == "Female":
        score += ctx.const("female_adjustment")
    for item in _PSI_HISTORY:
        if ctx.flag(item):
            score += pts(item)
    if ctx.measurement("Heart Rate or Pulse") >= ctx.const("pulse_threshold"):
        score += pts("Heart Rate or Pulse")
    t = ctx.temperature("Temperature")
    hot = t > ctx.const("temperature_high") if ctx.benchmark else t >= ctx.const("published_temperature_high")
    if t < ctx.const("temperature_low") or hot:
        score += pts("Temperature")
    if ctx.number("pH") < ctx.const("ph_threshold"):
        score += pts("pH")
    if ctx.measurement("respiratory rate") >= ctx.const("respiratory_rate_threshold"):
        score += pts("respiratory rate")
    if ctx.measurement("Systolic Blood Pressure") < ctx.const("systolic_threshold"):
        score += pts("Systolic Blood Pressure")
    if ctx.quantity("Blood Urea Nitrogen (BUN)") >= ctx.const("bun_threshold"):
        score += pts("Blood Urea Nitrogen (BUN)")
    if ctx.quantity("Sodium") < ctx.const("sodium_threshold"):
        score += pts("Sodium")
    if ctx.quantity("Glucose") >= ctx.const("glucose_threshold"):
        score += pts("Glucose")
    if ctx.measurement("Hematocrit") < ctx.const("hematocrit_threshold"):
        score += pts("Hematocrit")
    if _psi_pao2(ctx):
        score += pts("Partial pressure of oxygen")
    return score


# ---------------------------------------------------------------------------------------- Glasgow-Blatchford


def _gbs_urea_points(ctx: Context) -> float:
    name = "Blood Urea Nitrogen (BUN)"
    bun = ctx.quantity(name)
    if ctx.benchmark:
        return ctx.band("bun_points", bun)
    value, unit = ctx.raw(name)
    if unit == "mmol/L":
        urea = value  # the publication's own unit
    else:
        urea = bun * ctx.const("decilitres_per_litre") / ctx.const("published_bun_molar_mass")
    return ctx.band("published_urea_points", urea)


@calculator("glasgow-blatchford")
def glasgow_blatchford(ctx: Context) -> float:
    pts = lambda item: ctx.lookup("item_points", item)  # noqa: E731
    score = _gbs_urea_points(ctx)
    male = ctx.choice("sex") == "Male"
    score += ctx.band("hemoglobin_points_male" if male else "hemoglobin_points_female", ctx.quantity("Hemoglobin"))
    score += ctx.band("systolic_points", ctx.measurement("Systolic Blood Pressure"))
    if ctx.measurement("Heart Rate or Pulse") >= ctx.const("pulse_threshold"):
        score += pts("Heart Rate or Pulse")
    for item in ("Melena Present", "Recent Syncope", "Hepatic disease history", "Cardiac Failure Present"):
        if ctx.flag(item):
            score += pts(item)
    return score


# ---------------------------------------------------------------------------------------- Framingham hard CHD


@calculator("framingham-hard-chd")
def framingham_hard_chd(ctx: Context) -> float:
    sex = "male" if ctx.choice("sex") == "Male" else "female"
    c = lambda name: ctx.const(f"{sex}_{name}")  # noqa: E731
    age = ctx.age()
    if not ctx.benchmark and not ctx.const("published_min_age") <= age <= ctx.const("published_max_age"):
        raise OutOfRange(ctx.slug, "age", f"{age} years is outside the {ctx.const('published_min_age')}-"
                         f"{ctx.const('published_max_age')} years the ATP III risk assessment covers")
    tc = ctx.quantity("Total cholesterol")
    hdl = ctx.quantity("high-density lipoprotein cholesterol")
    sbp = ctx.measurement("Systolic Blood Pressure")
    smoker = 1 if ctx.flag("Smoker") else 0
    treated = 1 if ctx.flag("Blood pressure being treated with medicines") else 0
    ln_age, ln_tc = math.log(age), math.log(tc)
    ln_age_smoke = math.log(min(age, c("smoker_age_cap")))
    score = (
        c("ln_age") * ln_age
        + c("ln_total_cholesterol") * ln_tc
        + c("ln_hdl") * math.log(hdl)
        + c("ln_sbp") * math.log(sbp)
        + c("bp_treated") * treated
        + c("smoker") * smoker
        + c("ln_age_ln_total_cholesterol") * ln_age * ln_tc
        + c("ln_age_smoker") * ln_age_smoke * smoker
        + c("ln_age_squared") * ln_age * ln_age
        + c("intercept")
    )
    risk = (1 - c("baseline_survival") ** math.exp(score)) * ctx.const("percent")
    return round_value(risk, step(ctx.calc, ctx.variant, ctx.const("result_decimals")))
