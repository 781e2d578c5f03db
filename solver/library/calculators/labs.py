"""Laboratory formulas: kidney function (CKD-EPI 2021, MDRD, FENa), electrolytes and
osmolality (calcium and sodium corrections, serum osmolality, free water deficit), HOMA-IR
and the Friedewald LDL estimate.

Every coefficient and threshold is read from the calculator's registry entry through `ctx`.
"""
from __future__ import annotations

from solver.library.context import Context
from solver.library.functions import calculator


def _adult_age(ctx: Context, equation: str) -> float:
    """Age in years; the published variant refuses a child (adult equation) and names the alternative."""
    age = ctx.age()
    if not ctx.benchmark and "published_min_age" in ctx.calc.constants:
        ctx.refuse(age < ctx.const("published_min_age"), "age", lambda: (
            f"{age:g} years: {equation} is an adult equation (age {ctx.const('published_min_age')} or older); for a "
            "child use a paediatric equation such as the bedside Schwartz equation (0.413 x height in cm / "
            "creatinine in mg/dL)"))
    return age


@calculator("ckd-epi-2021", columnar=True)
def ckd_epi_2021(ctx: Context) -> float:
    age = _adult_age(ctx, "CKD-EPI 2021")
    female = ctx.choice_is("sex", "Female")
    scr = ctx.quantity("creatinine")
    kappa = ctx.where(female, ctx.const("female_kappa"), ctx.const("male_kappa"))
    low = scr <= kappa
    # sic: the reference divides men's low creatinine by 0.7
    male_low = ctx.const("benchmark_male_low_kappa") if ctx.benchmark else ctx.const("male_kappa")
    divisor = ctx.where(low, ctx.where(female, ctx.const("female_kappa"), male_low), kappa)
    alpha = ctx.where(low, ctx.where(female, ctx.const("female_alpha"), ctx.const("male_alpha")),
                      ctx.const("high_exponent"))
    sex_factor = ctx.where(female, ctx.const("female_factor"), ctx.const("male_factor"))
    if ctx.recording:
        ctx.step("creatinine divisor (kappa)", divisor)
        ctx.step("creatinine exponent", alpha)
        ctx.step("sex factor", sex_factor)
    return ctx.const("base") * ctx.pow(scr / divisor, alpha) * ctx.pow(ctx.const("age_base"), age) * sex_factor


@calculator("mdrd-gfr", columnar=True)
def mdrd_gfr(ctx: Context) -> float:
    age = _adult_age(ctx, "the MDRD study equation")
    female = ctx.choice_is("sex", "Female")
    scr = ctx.quantity("creatinine")
    race_factor = ctx.where(ctx.choice_is("Race", "Black"), ctx.const("black_factor"), ctx.const("other_race_factor"))
    sex_factor = ctx.where(female, ctx.const("female_factor"), ctx.const("male_factor"))
    if ctx.recording:
        ctx.step("race factor", race_factor)
        ctx.step("sex factor", sex_factor)
    return (ctx.const("base") * ctx.pow(scr, ctx.const("creatinine_exponent"))
            * ctx.pow(age, ctx.const("age_exponent")) * race_factor * sex_factor)


@calculator("calcium-correction", columnar=True)
def calcium_correction(ctx: Context) -> float:
    ca = ctx.quantity("Calcium")
    alb = ctx.quantity("Albumin")
    return ctx.const("albumin_coefficient") * (ctx.const("normal_albumin") - alb) + ca


@calculator("sodium-correction-hyperglycemia", columnar=True)
def sodium_correction_hyperglycemia(ctx: Context) -> float:
    na = ctx.quantity("Sodium")
    glucose = ctx.quantity("Glucose")
    return na + ctx.const("correction_per_mg_dl_glucose") * (glucose - ctx.const("reference_glucose"))


@calculator("serum-osmolality", columnar=True)
def serum_osmolality(ctx: Context) -> float:
    na = ctx.quantity("Sodium")
    bun = ctx.quantity("Blood Urea Nitrogen (BUN)")
    glucose = ctx.quantity("Glucose")
    return ctx.const("sodium_factor") * na + bun / ctx.const("bun_divisor") + glucose / ctx.const("glucose_divisor")


def _insulin_microunits(ctx: Context) -> float:
    """Insulin in µIU/mL. HOMA-IR converts its own insulin units (no molar conversion applies)."""
    name = "Insulin"
    value = ctx.measurement(name)

    def from_pmol() -> float:
        per = ctx.const("insulin_pmol_per_microunit")
        return value * per if ctx.benchmark else value / per  # sic: the reference multiplies

    def from_ng() -> float:
        if ctx.benchmark or "published_insulin_molar_mass" not in ctx.calc.constants:  # before 1.1.0
            return value * ctx.const("insulin_microunits_per_ng")
        # ng/mL -> pmol/L (molar mass) -> µIU/mL with the same factor as pmol/L
        return value * 1e6 / ctx.const("published_insulin_molar_mass") / ctx.const("insulin_pmol_per_microunit")

    value = ctx.select([(ctx.unit_is(name, "pmol/L"), from_pmol), (ctx.unit_is(name, "ng/mL"), from_ng)], value)
    spec = ctx.spec(name)
    if spec.range is not None:
        lo, hi = spec.range
        ctx.refuse((value < lo) | (value > hi), name, lambda: (
            f"{value} {spec.unit} is outside the plausible range {lo} to {hi} {spec.unit}"))
    return ctx.note_as_given(name, value, spec.unit)  # as given, and as converted to µIU/mL


@calculator("homa-ir", columnar=True)
def homa_ir(ctx: Context) -> float:
    insulin = _insulin_microunits(ctx)
    glucose = ctx.quantity("Glucose")  # mg/dL, range-checked
    if not ctx.benchmark and "matthews_divisor" in ctx.calc.constants:  # from 1.2.0
        def matthews() -> float:  # Matthews 1985 works in mmol/L: no molar-mass step
            given = ctx.given_number("Glucose")
            ctx.note("Glucose", [given, "mmol/L"], given, "mmol/L")
            return insulin * given / ctx.const("matthews_divisor")

        return ctx.select([(ctx.unit_is("Glucose", "mmol/L"), matthews)], insulin * glucose / ctx.const("divisor"))
    return insulin * glucose / ctx.const("divisor")


@calculator("free-water-deficit", columnar=True)
def free_water_deficit(ctx: Context) -> float:
    age = ctx.age()
    male = ctx.choice_is("sex", "Male")
    kg = ctx.weight()
    na = ctx.quantity("Sodium")
    fraction = ctx.select([(male, lambda: ctx.band("male_water_fraction", age))],
                          lambda: ctx.band("female_water_fraction", age))
    return fraction * kg * (na / ctx.const("target_sodium") - 1)


@calculator("fractional-excretion-sodium", columnar=True)
def fractional_excretion_sodium(ctx: Context) -> float:
    sna = ctx.quantity("Sodium")
    scr = ctx.quantity("creatinine")
    una = ctx.quantity("Urine sodium")
    ucr = ctx.quantity("Urine creatinine")
    return (scr * una) / (sna * ucr) * ctx.const("percent")


def _triglycerides(ctx: Context) -> float:
    """Triglycerides in mg/dL; the published variant converts mmol/L with the conventional factor."""
    name = "Triglycerides"
    if ctx.benchmark or "published_triglyceride_mg_dl_per_mmol_l" not in ctx.calc.constants:  # before 1.1.0
        return ctx.quantity(name)
    ctx.given_number(name)  # a malformed pair is refused before anything else

    def from_mmol() -> float:
        ctx.accept_unit(name, "mmol/L")
        value = ctx.given_number(name)
        mg_dl = value * ctx.const("published_triglyceride_mg_dl_per_mmol_l")
        ctx.check_range(name, mg_dl, ctx.spec(name).unit)
        return ctx.note(name, [value, "mmol/L"], mg_dl, ctx.spec(name).unit)

    return ctx.select([(ctx.unit_is(name, "mmol/L"), from_mmol)], lambda: ctx.quantity(name))


@calculator("ldl-friedewald", columnar=True)
def ldl_friedewald(ctx: Context) -> float:
    tc = ctx.quantity("Total cholesterol")
    hdl = ctx.quantity("high-density lipoprotein cholesterol")
    tg = _triglycerides(ctx)
    limit = ctx.const("published_max_triglycerides")
    if not ctx.benchmark:
        ctx.refuse(tg > limit, "Triglycerides", lambda: f"{tg} mg/dL is above {limit} mg/dL, where the Friedewald "
                   "estimate is not valid; measure LDL directly")
    return tc - hdl - tg / ctx.const("triglyceride_divisor")
