"""Dosing and dose conversion: maintenance fluids, steroid equivalents, morphine milligram equivalents."""
from __future__ import annotations

from functools import partial

from solver.library.context import Context
from solver.library.errors import BadValue
from solver.library.functions import calculator


# ---------------------------------------------------------------------- maintenance fluids
@calculator("maintenance-fluids", columnar=True)
def maintenance_fluids(ctx: Context) -> float:
    kg = ctx.weight()
    start = ctx.band("band_start_weight", kg)
    if ctx.benchmark:
        return ctx.band("band_start_rate", kg) + ctx.band("hourly_rate_per_kg", kg) * (kg - start)
    daily = ctx.band("published_band_start_daily_fluid", kg) + ctx.band("published_daily_fluid_per_kg", kg) * (kg - start)
    return daily / ctx.const("published_hours_per_day")


# ---------------------------------------------------------------------- steroid conversion
STEROID_FORM = "[steroid name, dose, 'unit'], e.g. ['PredniSONE PO', 10, 'mg']"


@calculator("steroid-conversion", columnar=True, float_result=True)  # (a float times a float ratio: always a float)
def steroid_conversion(ctx: Context) -> float:
    drug, mg = ctx.named_dose("input steroid", "equivalence_factor", STEROID_FORM)
    target = ctx.choice("target steroid")
    if ctx.benchmark:
        factor = ctx.r(ctx.lookup("equivalence_factor", target) / ctx.lookup("equivalence_factor", drug))
        return mg * factor
    return mg * ctx.lookup("published_equivalent_dose", target) / ctx.lookup("published_equivalent_dose", drug)


# ---------------------------------------------------------------------- morphine milligram equivalents
DOSE, PER_DAY = " Dose", " Dose Per Day"
NO_OPIOID = "no opioid given: add '<Drug> Dose': [amount, unit] with '<Drug> Dose Per Day': [n, 'per day']"


def _add(ctx: Context, total: float, drug: str) -> float:
    """The running total with one opioid's daily MME added (rounded as the benchmark rounds it)."""
    spec_unit = ctx.spec(drug + DOSE).unit or "mg"
    if ctx.benchmark:
        factor = ctx.lookup("mme_conversion_factor", drug)
        unit = spec_unit
    else:
        published = ctx.table("published_mme_conversion_factor").lookup or {}
        if drug not in published:  # (over columns: the rows that give this drug are refused)
            ctx.refuse(True, drug + DOSE, lambda: f"the CDC 2022 guideline gives no MME conversion factor for "
                       f"{drug}; the published variant cannot count it (the benchmark variant uses "
                       f"{ctx.lookup('mme_conversion_factor', drug)} per {spec_unit})", BadValue)
            return total
        factor = published[drug]
        unit = ctx.const("published_fentanyl_patch_unit") if drug == "FentANYL patch" else spec_unit
    amount = ctx.dose(drug + DOSE, unit)
    n = ctx.doses_per_day(drug + PER_DAY, drug + DOSE)
    daily = amount * n
    mme = daily * factor
    if ctx.recording:
        ctx.step("{}: dose per day, in {} a day", daily, None, drug, unit)
        ctx.step("{}: morphine milligram equivalents per day", mme, "MME/day", drug)
    total = ctx.r(total + mme)
    return ctx.step("running total", total, "MME/day") if ctx.recording else total


@calculator("morphine-milligram-equivalents", columnar=True)
def morphine_milligram_equivalents(ctx: Context) -> float:
    total = 0.0
    for drug in ctx.given_drugs(DOSE, PER_DAY, NO_OPIOID):  # in the order given: the running total is rounded
        # after each drug; over columns, each drug counts in the rows that give it
        total = ctx.if_given(drug + DOSE, partial(_add, ctx, total, drug), total)
    return total
