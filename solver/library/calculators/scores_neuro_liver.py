"""Glasgow Coma Scale and Child-Pugh score.

Every weight and band lives in the calculator's registry entry.
"""
from __future__ import annotations

from typing import Callable

from solver.library.context import Context
from solver.library.errors import BadValue
from solver.library.functions import calculator


@calculator("glasgow-coma-scale", columnar=True)
def glasgow_coma_scale(ctx: Context) -> float:
    parts = (
        ("Best eye response", "eye_points"),
        ("Best verbal response", "verbal_points"),
        ("Best motor response", "motor_points"),
    )
    total: float = 0
    for name, table in parts:
        response = ctx.choice(name)
        if not ctx.benchmark:  # Teasdale: an untestable component is recorded as NT and no total is formed
            ctx.refuse(ctx.choice_is(name, ctx.const("not_testable")), name, lambda: (
                "a component that is not testable is reported as NT; the published scale defines no total score "
                "(the benchmark variant scores it 4)"), BadValue)
        total = total + ctx.lookup(table, response)
    return total


def _published_bilirubin(ctx: Context, bilirubin: float) -> float:
    """The published variant's bilirubin in mg/dL: a molar value rescaled from the benchmark's molar mass (548.66,
    sic, on the input) to bilirubin's true one from units.yaml (the exact conversion is linear in the molar mass,
    so rescaling gives the same number as converting afresh); from 1.1.0 a µmol/L value divided by the
    conventional 17.1 the SI criteria use (34.2 µmol/L is exactly the 2 mg/dL cut-off)."""
    spec = ctx.spec("Bilirubin")
    amount = ctx.units.amount
    spellings = spec.accepted_units or [f"{a}/{v}" for a in amount for v in ctx.units.volume]  # (any unit)
    conventional = "published_bilirubin_umol_per_mg_dl" in ctx.calc.constants  # from 1.1.0

    def rescaled(unit: str) -> Callable[[], float]:
        def value() -> float:
            if unit == "µmol/L" and conventional:
                out = ctx.given_number("Bilirubin") / ctx.const("published_bilirubin_umol_per_mg_dl")
            else:
                benchmark_mass, true_mass = spec.molar_mass, ctx.analyte("Bilirubin").molar_mass
                assert benchmark_mass is not None and true_mass is not None  # both in the registry (validated)
                out = bilirubin * true_mass / benchmark_mass
            return ctx.note("Bilirubin", ctx.raw("Bilirubin"), out, spec.unit)  # the value used
        return value

    molar = [u for u in spellings if u.split("/")[0] in amount]
    return ctx.select([(ctx.unit_is("Bilirubin", u), rescaled(u)) for u in molar], bilirubin)


@calculator("child-pugh", columnar=True)
def child_pugh(ctx: Context) -> float:
    inr = ctx.number("international normalized ratio")
    bilirubin = ctx.quantity("Bilirubin")  # mg/dL, converted with the registry's (benchmark) molar mass
    if not ctx.benchmark:
        bilirubin = _published_bilirubin(ctx, bilirubin)
    albumin = ctx.quantity("Albumin")  # g/dL
    return (
        ctx.band("inr_points", inr)
        + ctx.band("bilirubin_points", bilirubin)
        + ctx.band("albumin_points", albumin)
        + ctx.lookup("ascites_points", ctx.choice("Ascites"))
        + ctx.lookup("encephalopathy_points", ctx.choice("Encephalopathy"))
    )
