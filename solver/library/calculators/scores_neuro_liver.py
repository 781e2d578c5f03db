"""Glasgow Coma Scale and Child-Pugh score.

Every weight and band lives in the calculator's registry entry.
"""
from __future__ import annotations

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


@calculator("child-pugh", columnar=True)
def child_pugh(ctx: Context) -> float:
    inr = ctx.number("international normalized ratio")
    bilirubin = ctx.quantity("Bilirubin")  # mg/dL, converted with the registry's (benchmark) molar mass
    if not ctx.benchmark:
        ctx.scalar_only("the published Child-Pugh rescales a molar bilirubin as given")
        # The benchmark's molar mass (548.66, sic) is on the input; the published variant converts
        # molar units with bilirubin's true molar mass from units.yaml. The exact conversion is
        # linear in the molar mass, so rescaling gives the same number as converting afresh.
        given, unit = ctx._pair("Bilirubin")
        if unit == "µmol/L" and "published_bilirubin_umol_per_mg_dl" in ctx.calc.constants:  # from 1.1.0
            # the conventional 17.1 the SI criteria use: 34.2 µmol/L is exactly the 2 mg/dL cut-off
            bilirubin = given / ctx.const("published_bilirubin_umol_per_mg_dl")
            ctx.note("Bilirubin", ctx.raw("Bilirubin"), bilirubin, ctx.spec("Bilirubin").unit)  # the value used
        elif unit.split("/")[0] in ctx.units.amount:
            benchmark_mass, true_mass = ctx.spec("Bilirubin").molar_mass, ctx.analyte("Bilirubin").molar_mass
            assert benchmark_mass is not None and true_mass is not None  # both are in the registry (validated data)
            bilirubin = bilirubin * true_mass / benchmark_mass
            ctx.note("Bilirubin", ctx.raw("Bilirubin"), bilirubin, ctx.spec("Bilirubin").unit)  # the value used
    albumin = ctx.quantity("Albumin")  # g/dL
    return (
        ctx.band("inr_points", inr)
        + ctx.band("bilirubin_points", bilirubin)
        + ctx.band("albumin_points", albumin)
        + ctx.lookup("ascites_points", ctx.choice("Ascites"))
        + ctx.lookup("encephalopathy_points", ctx.choice("Encephalopathy"))
    )
