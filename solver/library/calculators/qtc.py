"""Heart-rate corrections of the QT interval: Bazett, Fridericia, Framingham, Hodges, Rautaharju.

The benchmark derives the RR interval (s) from the heart rate as 60 / HR and rounds it with
`round_number` before use (`ctx.r`); the published variant uses it unrounded.
"""
from __future__ import annotations

from solver.library.context import Context
from solver.library.functions import calculator


def _rr(ctx: Context) -> tuple[float, float]:
    """QT (ms) and the RR interval (s) derived from the heart rate."""
    hr = ctx.measurement("Heart Rate or Pulse")
    qt = ctx.measurement("QT Interval")
    return qt, ctx.step("RR interval ({seconds_per_minute} / heart rate)", ctx.r(ctx.const("seconds_per_minute") / hr),
                        "s")


@calculator("qtc-bazett", columnar=True, float_result=True)
def qtc_bazett(ctx: Context) -> float:
    qt, rr = _rr(ctx)
    return qt / ctx.pow(rr, 1 / ctx.const("rr_root_index"))


@calculator("qtc-fridericia", columnar=True, float_result=True)
def qtc_fridericia(ctx: Context) -> float:
    qt, rr = _rr(ctx)
    return qt / ctx.pow(rr, 1 / ctx.const("rr_root_index"))


@calculator("qtc-framingham", columnar=True)
def qtc_framingham(ctx: Context) -> float:
    qt, rr = _rr(ctx)
    return qt + ctx.const("rr_slope") * (ctx.const("reference_rr") - rr)


@calculator("qtc-hodges", columnar=True)
def qtc_hodges(ctx: Context) -> float:
    qt, rr = _rr(ctx)
    if ctx.benchmark:
        rate = ctx.step("heart rate from the RR interval", ctx.const("seconds_per_minute") / rr, "beats/min")  # the
        # reference goes back from its rounded RR
    else:
        rate = ctx.measurement("Heart Rate or Pulse")  # Hodges 1983: QT + 1.75 x (HR - 60)
    return qt + ctx.const("heart_rate_slope") * (rate - ctx.const("reference_heart_rate"))


@calculator("qtc-rautaharju", columnar=True, float_result=True)
def qtc_rautaharju(ctx: Context) -> float:
    hr = ctx.measurement("Heart Rate or Pulse")
    qt = ctx.measurement("QT Interval")
    return qt * (ctx.const("heart_rate_offset") + hr) / ctx.const("divisor")
