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
    if fio2 >= ctx.const("fio2_threshold"):
        if not ctx.has("A-a gradient"):
            raise MissingInput(ctx.slug, "A-a gradient", "required when FiO2 is 50 % or more")
        return ctx.band(pre + "aa_gradient_points", ctx.number("A-a gradient"))
    if not ctx.has("PaO2"):
        raise MissingInput(ctx.slug, "PaO2", "required when FiO2 is below 50 %")
    return ctx.band(pre + "pao2_points", ctx.measurement("PaO2"))


def _apache_creatinine(ctx: Context) -> float:
    cr = ctx.quantity("creatinine")
    arf = ctx.flag("Acute renal failure")
    crf = ctx.flag("Chronic renal failure")
    if ctx.benchmark:
        if arf:
            return ctx.band("creatinine_points_acute_renal_failure", cr)
        if crf:
            return ctx.band("creatinine_points_chronic_renal_failure", cr)
        return ctx.band("creatinine_points", cr)
    pts = ctx.band("creatinine_points", cr)
    return pts * ctx.const("published_acute_renal_failure_multiplier") if arf else pts


def _apache_chronic_health(ctx: Context) -> float:
    if ctx.benchmark:
        return 0  # the reference never reads these keys (parameter-name mismatch)
    if not ctx.flag("History of severe organ failure or immunocompromise"):
        ctx.choice("Surgery Type")
        return 0
    surgery = ctx.choice("Surgery Type")
    if surgery is None:
        raise MissingInput(ctx.slug, "Surgery Type", "needed to score the chronic health points when a history of "
                           "severe organ failure or immunocompromise is given (Nonoperative, Emergency or Elective)")
    if surgery == "Elective":
        return ctx.const("chronic_health_elective_points")
    return ctx.const("chronic_health_nonoperative_points")


@calculator("apache-ii")
def apache_ii(ctx: Context) -> float:
    age = ctx.age()
    score = ctx.band("age_points" if ctx.benchmark else "published_age_points", age)
    score += _apache_chronic_health(ctx)
    score += _apache_oxygenation(ctx)
    score += ctx.band("temperature_points", ctx.temperature("Temperature"))
    published_map = not ctx.benchmark and "published_map_points" in ctx.calc.tables  # since 1.1.0
    score += ctx.band("published_map_points" if published_map else "map_points", ctx.r(_mean_arterial_pressure(ctx)))
    score += ctx.band("heart_rate_points", ctx.measurement("Heart Rate or Pulse"))
    score += ctx.band("respiratory_rate_points", ctx.measurement("respiratory rate"))
    score += ctx.band("ph_points", ctx.number("pH"))
    score += ctx.band("sodium_points", ctx.quantity("Sodium"))
    score += ctx.band("potassium_points", ctx.quantity("Potassium"))
    score += _apache_creatinine(ctx)
    score += ctx.band("hematocrit_points", ctx.measurement("Hematocrit"))
    score += ctx.band("wbc_points", ctx.count_per_litre("White blood cell count"))
    gcs = ctx.number("Glasgow Coma Score")
    score += ctx.const("gcs_maximum") - (int(gcs) if ctx.benchmark else gcs)
    return score


# ---------------------------------------------------------------------------------------- SOFA


def _dose(ctx: Context, name: str) -> float:
    return ctx.measurement(name) if ctx.has(name) else 0


def _sofa_cardiovascular(ctx: Context) -> float:
    dop = _dose(ctx, "DOPamine")
    epi = _dose(ctx, "EPINEPHrine")
    ne = _dose(ctx, "norEPINEPHrine")
    dobu = 0 if ctx.benchmark else _dose(ctx, "DOBUTamine")
    high_cat = ctx.const("catecholamine_high_dose")
    if dop > ctx.const("dopamine_high_dose") or epi > high_cat or ne > high_cat:
        key = "high_dose_vasopressor"
    elif dop > ctx.const("dopamine_moderate_dose") or 0 < epi <= high_cat or 0 < ne <= high_cat:
        key = "moderate_dose_vasopressor"
    elif 0 < dop or dobu > 0:
        key = "low_dose_dopamine_or_dobutamine"
    elif ctx.has("Systolic Blood Pressure") and ctx.has("Diastolic Blood Pressure"):
        low = _mean_arterial_pressure(ctx) < ctx.const("map_threshold")
        key = "map_below_threshold" if low else "none"
    elif not ctx.benchmark and ctx.flag("Hypotension"):
        key = "map_below_threshold"
    else:
        key = "none"
    return ctx.lookup("cardiovascular_points", key)


def _sofa_renal(ctx: Context) -> float:
    pts: float = 0
    if ctx.has("creatinine"):
        pts = ctx.band("creatinine_points" if ctx.benchmark else "published_creatinine_points",
                       ctx.quantity("creatinine"))
    if ctx.has("Urine Output"):
        pts = max(pts, ctx.band("urine_output_points", ctx.measurement("Urine Output")))
    return pts


def _sofa_liver(ctx: Context) -> float:
    """Liver points; the published variant scores a µmol/L bilirubin by the table's SI bands (from 1.1.0)."""
    bilirubin = ctx.quantity("Bilirubin")  # mg/dL
    if not ctx.benchmark and "published_bilirubin_points_umol" in ctx.calc.tables:
        given, unit = ctx._pair("Bilirubin")
        if unit == "µmol/L":
            ctx.note("Bilirubin", ctx.raw("Bilirubin"), given, unit)  # the value used, as given
            return ctx.band("published_bilirubin_points_umol", given)
    return ctx.band("bilirubin_points", bilirubin)


@calculator("sofa")
def sofa(ctx: Context) -> float:
    ratio = ctx.r(ctx.measurement("PaO2") / (ctx.measurement("FiO2") / ctx.const("fio2_percent")))
    supported = ctx.flag("On mechanical ventilation") or ctx.flag("Continuous positive airway pressure")
    table = "pf_points_supported" if supported else "pf_points_unsupported"
    score = ctx.band(table if ctx.benchmark else "published_" + table, ratio)
    score += _sofa_cardiovascular(ctx)
    gcs = ctx.number("Glasgow Coma Score")
    score += ctx.band("gcs_points", gcs)
    score += _sofa_liver(ctx)
    score += ctx.band("platelet_points", ctx.count_per_litre("Platelet count"))
    score += _sofa_renal(ctx)
    return score
