"""Risk models: Pneumonia Severity Index, Glasgow-Blatchford, Framingham hard CHD."""
from __future__ import annotations

from solver.library.context import Context
from solver.library.functions import calculator
from solver.library.rounding import step

# ---------------------------------------------------------------------------------------- PSI

_PSI_HISTORY = (
    "Nursing home resident", "Neoplastic disease", "Liver disease history", "Congestive Heart Failure",
    "Cerebrovascular disease history", "Renal disease history", "Altered mental status", "Pleural effusion on x-ray",
)


def _psi_pao2(ctx: Context) -> bool:
    name = "Partial pressure of oxygen"
    if ctx.benchmark:
        ctx.require(name, "required input is missing (the benchmark's reference cannot score without it; the "
                    "published variant counts it as normal)")
    return ctx.if_given(name, lambda: ctx.measurement(name) < ctx.where(
        ctx.unit_is(name, "kPa"), ctx.const("pao2_threshold_kpa"), ctx.const("pao2_threshold_mmhg")), False)


@calculator("pneumonia-severity-index", columnar=True)
def pneumonia_severity_index(ctx: Context) -> float:
    def pts(item: str, met: bool) -> float:
        return ctx.where(met, ctx.lookup("item_points", item), 0)

    score = ctx.age()
    sex = ctx.where(ctx.choice_is("sex", "Female"), ctx.const("female_adjustment"), 0)
    if ctx.recording:
        ctx.step("age: one point per year", score, "points")
        ctx.step("sex", sex, "points")
    score = score + sex
    for item in _PSI_HISTORY:
        score = score + pts(item, ctx.flag(item))
    score = score + pts("Heart Rate or Pulse", ctx.measurement("Heart Rate or Pulse") >= ctx.const("pulse_threshold"))
    t = ctx.temperature("Temperature")
    hot = t > ctx.const("temperature_high") if ctx.benchmark else t >= ctx.const("published_temperature_high")
    score = score + pts("Temperature", (t < ctx.const("temperature_low")) | hot)
    score = score + pts("pH", ctx.number("pH") < ctx.const("ph_threshold"))
    score = score + pts("respiratory rate", ctx.measurement("respiratory rate") >= ctx.const("respiratory_rate_threshold"))
    score = score + pts("Systolic Blood Pressure", ctx.measurement("Systolic Blood Pressure") < ctx.const("systolic_threshold"))
    score = score + pts("Blood Urea Nitrogen (BUN)", ctx.quantity("Blood Urea Nitrogen (BUN)") >= ctx.const("bun_threshold"))
    score = score + pts("Sodium", ctx.quantity("Sodium") < ctx.const("sodium_threshold"))
    score = score + pts("Glucose", ctx.quantity("Glucose") >= ctx.const("glucose_threshold"))
    score = score + pts("Hematocrit", ctx.measurement("Hematocrit") < ctx.const("hematocrit_threshold"))
    score = score + pts("Partial pressure of oxygen", _psi_pao2(ctx))
    return score


# ---------------------------------------------------------------------------------------- Glasgow-Blatchford


def _gbs_urea_points(ctx: Context) -> float:
    name = "Blood Urea Nitrogen (BUN)"
    bun = ctx.quantity(name)
    if ctx.benchmark:
        return ctx.band("bun_points", bun)
    ctx.scalar_only("the published Glasgow-Blatchford reads a mmol/L urea as given")
    value, unit = ctx.raw(name)
    if unit == "mmol/L":
        urea = value  # the publication's own unit
    else:
        urea = bun * ctx.const("decilitres_per_litre") / ctx.const("published_bun_molar_mass")
    return ctx.band("published_urea_points", urea)


@calculator("glasgow-blatchford", columnar=True)
def glasgow_blatchford(ctx: Context) -> float:
    def pts(item: str, met: bool) -> float:
        return ctx.where(met, ctx.lookup("item_points", item), 0)

    score = _gbs_urea_points(ctx)
    male = ctx.choice_is("sex", "Male")
    hemoglobin = ctx.quantity("Hemoglobin")
    score = score + ctx.select([(male, lambda: ctx.band("hemoglobin_points_male", hemoglobin))],
                        lambda: ctx.band("hemoglobin_points_female", hemoglobin))
    score = score + ctx.band("systolic_points", ctx.measurement("Systolic Blood Pressure"))
    score = score + pts("Heart Rate or Pulse", ctx.measurement("Heart Rate or Pulse") >= ctx.const("pulse_threshold"))
    for item in ("Melena Present", "Recent Syncope", "Hepatic disease history", "Cardiac Failure Present"):
        score = score + pts(item, ctx.flag(item))
    return score


# ---------------------------------------------------------------------------------------- Framingham hard CHD


@calculator("framingham-hard-chd", columnar=True, numpy_math=True)
def framingham_hard_chd(ctx: Context) -> float:
    male = ctx.choice_is("sex", "Male")
    c = lambda name: ctx.where(male, ctx.const(f"male_{name}"), ctx.const(f"female_{name}"))  # noqa: E731
    age = ctx.age()
    if not ctx.benchmark:
        ctx.refuse((age < ctx.const("published_min_age")) | (age > ctx.const("published_max_age")), "age", lambda: (
            f"{age} years is outside the {ctx.const('published_min_age')}-{ctx.const('published_max_age')} years "
            "the ATP III risk assessment covers"))
    tc = ctx.quantity("Total cholesterol")
    hdl = ctx.quantity("high-density lipoprotein cholesterol")
    sbp = ctx.measurement("Systolic Blood Pressure")
    smoker = ctx.where(ctx.flag("Smoker"), 1, 0)
    treated = ctx.where(ctx.flag("Blood pressure being treated with medicines"), 1, 0)
    ln_age, ln_tc = ctx.log(age), ctx.log(tc)
    ln_age_smoke = ctx.log(ctx.minimum(age, c("smoker_age_cap")))
    score = (
        c("ln_age") * ln_age
        + c("ln_total_cholesterol") * ln_tc
        + c("ln_hdl") * ctx.log(hdl)
        + c("ln_sbp") * ctx.log(sbp)
        + c("bp_treated") * treated
        + c("smoker") * smoker
        + c("ln_age_ln_total_cholesterol") * ln_age * ln_tc
        + c("ln_age_smoker") * ln_age_smoke * smoker
        + c("ln_age_squared") * ln_age * ln_age
        + c("intercept")
    )
    risk = (1 - ctx.pow(c("baseline_survival"), ctx.exp(score))) * ctx.const("percent")
    return ctx.round_to(risk, step(ctx.calc, ctx.variant, ctx.const("result_decimals")))
