"""Intensive care severity scores: APACHE II and SOFA."""
from __future__ import annotations

from solver.library.context import Context
from solver.library.errors import MissingInput
from solver.library.functions import calculator


def _mean_arterial_pressure(ctx: Context) -> float:
    """MAP = SBP/3 + 2 x DBP/3, in the reference's order of operations."""
    sbp = ctx.measurement("Systolic Blood Pressure")
    dbp = ctx.measurement("Diastolic Blood Pressure")
    div = ctx.const("map_divisor")
    return sbp / div + ctx.const("map_diastolic_multiplier") * dbp / div


# ---------------------------------------------------------------------------------------- APACHE II


def _apache_oxygenation(ctx: Context) -> float:
    fio2 = ctx.measurement("FiO2")
    pre = "" if ctx.benchmark else "published_"

    def gradient() -> float:
        ctx.require("A-a gradient", "required when FiO2 is 50 % or more")
        return ctx.band(pre + "aa_gradient_points", ctx.number("A-a gradient"))

    def pao2() -> float:
        ctx.require("PaO2", "required when FiO2 is below 50 %")
        return ctx.band(pre + "pao2_points", ctx.measurement("PaO2"))

    return ctx.select([(fio2 >= ctx.const("fio2_threshold"), gradient)], pao2)


def _apache_creatinine(ctx: Context) -> float:
    cr = ctx.quantity("creatinine")
    arf = ctx.flag("Acute renal failure")
    crf = ctx.flag("Chronic renal failure")
    if ctx.benchmark:
        return ctx.select([(arf, lambda: ctx.band("creatinine_points_acute_renal_failure", cr)),
                           (crf, lambda: ctx.band("creatinine_points_chronic_renal_failure", cr))],
                          lambda: ctx.band("creatinine_points", cr))
    pts = ctx.band("creatinine_points", cr)
    return ctx.where(arf, pts * ctx.const("published_acute_renal_failure_multiplier"), pts)


def _apache_chronic_health(ctx: Context) -> float:
    if ctx.benchmark:
        return 0  # the reference never reads these keys (parameter-name mismatch)
    history = ctx.flag("History of severe organ failure or immunocompromise")
    ctx.choice("Surgery Type")
    ctx.refuse(history & ctx.choice_is("Surgery Type", None), "Surgery Type", lambda: (
        "needed to score the chronic health points when a history of severe organ failure or immunocompromise is "
        "given (Nonoperative, Emergency or Elective)"), MissingInput)
    points = ctx.where(ctx.choice_is("Surgery Type", "Elective"), ctx.const("chronic_health_elective_points"),
                       ctx.const("chronic_health_nonoperative_points"))
    return ctx.step("chronic health points", ctx.where(history, points, 0), "points")


@calculator("apache-ii", columnar=True)
def apache_ii(ctx: Context) -> float:
    age = ctx.age()
    score = ctx.band("age_points" if ctx.benchmark else "published_age_points", age)
    score = score + _apache_chronic_health(ctx)
    score = score + _apache_oxygenation(ctx)
    score = score + ctx.band("temperature_points", ctx.temperature("Temperature"))
    published_map = not ctx.benchmark and "published_map_points" in ctx.calc.tables  # since 1.1.0
    mean_pressure = ctx.step("mean arterial pressure", ctx.r(_mean_arterial_pressure(ctx)), "mm Hg")
    score = score + ctx.band("published_map_points" if published_map else "map_points", mean_pressure)
    score = score + ctx.band("heart_rate_points", ctx.measurement("Heart Rate or Pulse"))
    score = score + ctx.band("respiratory_rate_points", ctx.measurement("respiratory rate"))
    score = score + ctx.band("ph_points", ctx.number("pH"))
    score = score + ctx.band("sodium_points", ctx.quantity("Sodium"))
    score = score + ctx.band("potassium_points", ctx.quantity("Potassium"))
    score = score + _apache_creatinine(ctx)
    score = score + ctx.band("hematocrit_points", ctx.measurement("Hematocrit"))
    score = score + ctx.band("wbc_points", ctx.count_per_litre("White blood cell count"))
    gcs = ctx.number("Glasgow Coma Score")
    score = score + ctx.step("Glasgow Coma Score points (the maximum less the score)",
                             ctx.const("gcs_maximum") - (ctx.trunc(gcs) if ctx.benchmark else gcs), "points")
    return score


# ---------------------------------------------------------------------------------------- SOFA


def _dose(ctx: Context, name: str) -> float:
    return ctx.if_given(name, lambda: ctx.measurement(name), 0)


def _sofa_cardiovascular(ctx: Context) -> float:
    dop = _dose(ctx, "DOPamine")
    epi = _dose(ctx, "EPINEPHrine")
    ne = _dose(ctx, "norEPINEPHrine")
    dobu = 0 if ctx.benchmark else _dose(ctx, "DOBUTamine")
    high_cat = ctx.const("catecholamine_high_dose")
    pts = lambda key: ctx.lookup("cardiovascular_points", key)  # noqa: E731
    high = (dop > ctx.const("dopamine_high_dose")) | (epi > high_cat) | (ne > high_cat)
    moderate = (dop > ctx.const("dopamine_moderate_dose")) | ((0 < epi) & (epi <= high_cat)) | (
        (0 < ne) & (ne <= high_cat))
    cases = [(high, pts("high_dose_vasopressor")), (moderate, pts("moderate_dose_vasopressor")),
             ((0 < dop) | (dobu > 0), pts("low_dose_dopamine_or_dobutamine")),
             (ctx.has("Systolic Blood Pressure") & ctx.has("Diastolic Blood Pressure"),
              lambda: ctx.where(_mean_arterial_pressure(ctx) < ctx.const("map_threshold"), pts("map_below_threshold"),
                                pts("none")))]
    if not ctx.benchmark:
        cases.append((lambda: ctx.flag("Hypotension"), pts("map_below_threshold")))
    return ctx.select(cases, pts("none"))


def _sofa_renal(ctx: Context) -> float:
    pts = ctx.if_given("creatinine", lambda: ctx.band(
        "creatinine_points" if ctx.benchmark else "published_creatinine_points", ctx.quantity("creatinine")), 0)
    return ctx.if_given("Urine Output", lambda: ctx.maximum(pts, ctx.band(
        "urine_output_points", ctx.measurement("Urine Output"))), pts)


def _sofa_liver(ctx: Context) -> float:
    """Liver points; the published variant scores a µmol/L bilirubin by the table's SI bands (from 1.1.0)."""
    bilirubin = ctx.quantity("Bilirubin")  # mg/dL
    if not ctx.benchmark and "published_bilirubin_points_umol" in ctx.calc.tables:
        def as_given() -> float:
            given = ctx.note("Bilirubin", ctx.raw("Bilirubin"), ctx.given_number("Bilirubin"), "µmol/L")  # as used
            return ctx.band("published_bilirubin_points_umol", given)

        return ctx.select([(ctx.unit_is("Bilirubin", "µmol/L"), as_given)],
                          lambda: ctx.band("bilirubin_points", bilirubin))
    return ctx.band("bilirubin_points", bilirubin)


@calculator("sofa", columnar=True)
def sofa(ctx: Context) -> float:
    ratio = ctx.step("PaO2/FiO2", ctx.r(ctx.measurement("PaO2") / (ctx.measurement("FiO2") / ctx.const("fio2_percent"))),
                     "mm Hg")
    supported = ctx.any_flag("On mechanical ventilation", "Continuous positive airway pressure")
    pre = "" if ctx.benchmark else "published_"
    score = ctx.select([(supported, lambda: ctx.band(pre + "pf_points_supported", ratio))],
                       lambda: ctx.band(pre + "pf_points_unsupported", ratio))
    score = score + _sofa_cardiovascular(ctx)
    gcs = ctx.number("Glasgow Coma Score")
    score = score + ctx.band("gcs_points", gcs)
    score = score + _sofa_liver(ctx)
    score = score + ctx.band("platelet_points", ctx.count_per_litre("Platelet count"))
    score = score + _sofa_renal(ctx)
    return score
