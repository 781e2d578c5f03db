"""Dosing and dose conversion: maintenance fluids, steroid equivalents, morphine milligram equivalents."""
from __future__ import annotations

import math
from typing import Any

from solver.library.context import Context
from solver.library.errors import BadValue, MissingInput, UnknownUnit
from solver.library.functions import calculator
from solver.library.units import ConversionError


# ---------------------------------------------------------------------- helpers for special forms
def _number(ctx: Context, name: str, v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise BadValue(ctx.slug, name, f"expected a number as the {what}, got {v!r}")
    if not math.isfinite(v):
        raise BadValue(ctx.slug, name, f"expected a finite number as the {what}, got {v!r}")
    return v


def _mass(ctx: Context, name: str, value: float, unit: str, target: str) -> float:
    """A mass in `unit` converted to `target` (mass units only), with the benchmark's rounding chain."""
    spec = ctx.spec(name)
    if spec.accepted_units and unit not in spec.accepted_units:
        raise UnknownUnit(ctx.slug, name, f"unknown unit {unit!r}; accepted: {', '.join(spec.accepted_units)}")
    try:
        return ctx.conv.mass(value, unit, target, None, None)
    except ConversionError as e:
        raise UnknownUnit(ctx.slug, name, str(e)) from None


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
@calculator("steroid-conversion")
def steroid_conversion(ctx: Context) -> float:
    name = "input steroid"
    given = ctx.raw(name)
    if not (isinstance(given, (list, tuple)) and len(given) == 3 and isinstance(given[0], str)
            and isinstance(given[2], str)):
        raise BadValue(ctx.slug, name, f"expected [steroid name, dose, 'unit'], e.g. ['PredniSONE PO', 10, 'mg'], "
                       f"got {given!r}")
    drug, dose, unit = given
    factors = ctx.table("equivalence_factor").lookup or {}
    if drug not in factors:
        raise BadValue(ctx.slug, name, f"{drug!r} is not one of: {', '.join(map(repr, factors))} (names are case-sensitive)")
    dose = _number(ctx, name, dose, "dose")
    mg = _mass(ctx, name, dose, unit, ctx.spec(name).unit or "mg")
    ctx.check_range(name, mg, "mg")
    ctx.note(name, given, mg, "mg")
    target = ctx.choice("target steroid")
    assert target is not None
    if ctx.benchmark:
        factor = ctx.r(ctx.lookup("equivalence_factor", target) / ctx.lookup("equivalence_factor", drug))
        return mg * factor
    return mg * ctx.lookup("published_equivalent_dose", target) / ctx.lookup("published_equivalent_dose", drug)


# ---------------------------------------------------------------------- morphine milligram equivalents
DOSE, PER_DAY = " Dose", " Dose Per Day"


def _per_day(ctx: Context, drug: str) -> float:
    name = drug + PER_DAY
    if not ctx.has(name):
        raise MissingInput(ctx.slug, name, f"'{drug}{DOSE}' needs its number of doses per day, e.g. [2, 'per day']")
    given = ctx.raw(name)
    if not (isinstance(given, (list, tuple)) and len(given) == 2 and isinstance(given[1], str)):
        raise BadValue(ctx.slug, name, f"expected [n, 'per day'], got {given!r}")
    n = _number(ctx, name, given[0], "number of doses per day")
    spec = ctx.spec(name)
    if spec.accepted_units and given[1] not in spec.accepted_units:
        raise UnknownUnit(ctx.slug, name, f"unknown unit {given[1]!r}; accepted: {', '.join(spec.accepted_units)}")
    ctx.check_range(name, n, "per day")
    ctx.note(name, given, n, "per day")
    return n


def _dose(ctx: Context, drug: str, unit: str) -> float:
    """One dose of `drug` in `unit`, range-checked in the input's canonical unit."""
    name = drug + DOSE
    spec = ctx.spec(name)
    given = ctx.raw(name)
    if not (isinstance(given, (list, tuple)) and len(given) == 2 and isinstance(given[1], str)):
        raise BadValue(ctx.slug, name, f"expected [amount, 'unit'], e.g. [10, 'mg'], got {given!r}")
    amount = _number(ctx, name, given[0], "amount")
    canonical = spec.unit or "mg"
    in_canonical = _mass(ctx, name, amount, given[1], canonical)
    ctx.check_range(name, in_canonical, canonical)
    out = in_canonical if unit == canonical else _mass(ctx, name, amount, given[1], unit)
    ctx.note(name, given, out, unit)
    return out


@calculator("morphine-milligram-equivalents")
def morphine_milligram_equivalents(ctx: Context) -> float:
    drugs = [k[: -len(DOSE)] for k in ctx.entities if k.endswith(DOSE)]
    for k in ctx.entities:  # a frequency without its dose is an extraction error, not zero
        if k.endswith(PER_DAY) and k[: -len(PER_DAY)] not in drugs:
            raise MissingInput(ctx.slug, k[: -len(PER_DAY)] + DOSE, f"'{k}' is given without its dose")
    if not drugs:
        raise MissingInput(ctx.slug, None, "no opioid given: add '<Drug> Dose': [amount, unit] with "
                           "'<Drug> Dose Per Day': [n, 'per day']")
    total = 0.0
    for drug in drugs:  # in the order given: the benchmark rounds the running total after each drug
        spec_unit = ctx.spec(drug + DOSE).unit or "mg"
        if ctx.benchmark:
            factor = ctx.lookup("mme_conversion_factor", drug)
            unit = spec_unit
        else:
            published = ctx.table("published_mme_conversion_factor").lookup or {}
            if drug not in published:
                raise BadValue(ctx.slug, drug + DOSE, f"the CDC 2022 guideline gives no MME conversion factor for "
                               f"{drug}; the published variant cannot count it (the benchmark variant uses "
                               f"{ctx.lookup('mme_conversion_factor', drug)} per {spec_unit})")
            factor = published[drug]
            unit = ctx.const("published_fentanyl_patch_unit") if drug == "FentANYL patch" else spec_unit
        amount = _dose(ctx, drug, unit)
        n = _per_day(ctx, drug)
        total = ctx.r(total + n * factor * amount)
    return total
