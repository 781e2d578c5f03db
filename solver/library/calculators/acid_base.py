"""Acid-base: the anion gap and the calculators built on it (delta gap, delta ratio and their
albumin-corrected forms). Every member reads the anion gap through `ctx.sub`, so one definition
serves the whole family."""
from __future__ import annotations

from solver.library.context import Context
from solver.library.functions import calculator


def _read_own_inputs(ctx: Context) -> None:
    """Read (and so check) every input under this calculator's own name before `ctx.sub`, so a bad
    value is reported against the calculator asked for rather than the anion gap it builds on."""
    for spec in ctx.calc.inputs:
        ctx.quantity(spec.name)


def _bicarbonate_deficit(ctx: Context) -> float:
    """Normal minus measured bicarbonate, the delta ratios' denominator; zero is refused clearly
    (the benchmark's reference raises ZeroDivisionError at bicarbonate 24 mEq/L)."""
    hco3 = ctx.quantity("Bicarbonate")
    normal = ctx.const("normal_bicarbonate")
    ctx.refuse(hco3 == normal, "Bicarbonate", lambda: f"the delta ratio is undefined at bicarbonate {normal} mEq/L "
               "(no change from normal); use the delta gap instead")
    return normal - hco3


@calculator("anion-gap", columnar=True)
def anion_gap(ctx: Context) -> float:
    na = ctx.quantity("Sodium")
    cl = ctx.quantity("Chloride")
    hco3 = ctx.quantity("Bicarbonate")
    return na - (cl + hco3)


@calculator("delta-gap", columnar=True)
def delta_gap(ctx: Context) -> float:
    _read_own_inputs(ctx)
    return ctx.sub("anion-gap") - ctx.const("normal_anion_gap")


@calculator("delta-ratio", columnar=True, float_result=True)
def delta_ratio(ctx: Context) -> float:
    _read_own_inputs(ctx)
    return ctx.sub("delta-gap") / _bicarbonate_deficit(ctx)


@calculator("albumin-corrected-anion-gap", columnar=True)
def albumin_corrected_anion_gap(ctx: Context) -> float:
    _read_own_inputs(ctx)
    ag = ctx.sub("anion-gap")
    alb = ctx.quantity("Albumin")
    return ag + ctx.const("albumin_coefficient") * (ctx.const("normal_albumin") - alb)


@calculator("albumin-corrected-delta-gap", columnar=True)
def albumin_corrected_delta_gap(ctx: Context) -> float:
    _read_own_inputs(ctx)
    return ctx.sub("albumin-corrected-anion-gap") - ctx.const("normal_anion_gap")


@calculator("albumin-corrected-delta-ratio", columnar=True, float_result=True)
def albumin_corrected_delta_ratio(ctx: Context) -> float:
    _read_own_inputs(ctx)
    return ctx.sub("albumin-corrected-delta-gap") / _bicarbonate_deficit(ctx)
