"""Liver: FIB-4 fibrosis index, MELD-Na (UNOS/OPTN) and its successor MELD 3.0."""
from __future__ import annotations

from solver.library.context import Context
from solver.library.functions import calculator
from solver.library.rounding import step


@calculator("fib-4", columnar=True, float_result=True)
def fib_4(ctx: Context) -> float:
    age = ctx.age()
    alt = ctx.measurement("Alanine aminotransferase")
    ast = ctx.measurement("Aspartate aminotransferase")
    platelets = ctx.step("platelet count in billions per litre", ctx.count_per_litre("Platelet count")
                         / ctx.const("platelets_per_billion"), "10^9/L")
    return age * ast / (platelets * ctx.sqrt(alt))


# the working's label of the creatinine used ("{name}": the registry constant, filled in only when recording; the
# other bounds are named by the recorder's `clip`, `maximum` and `minimum`)
_CR_USED = "creatinine as used ({creatinine_floor} to {creatinine_ceiling} mg/dL; {dialysis_creatinine} on dialysis)"


@calculator("meld-na", columnar=True)
def meld_na(ctx: Context) -> float:
    cr = ctx.quantity("creatinine")
    dialysed = ctx.any_flag("Dialysis at least twice in the past week",
                            "Continuous veno-venous hemodialysis for ≥24 hours in the past week")
    floor, ceiling, dialysis = ctx.const("creatinine_floor"), ctx.const("creatinine_ceiling"), ctx.const(
        "dialysis_creatinine")
    if ctx.benchmark:  # sic: the reference reaches the dialysis rule only when floor <= Cr <= ceiling
        cr = ctx.select([(cr < floor, floor), (cr > ceiling, ceiling), (dialysed, dialysis)], cr)
    else:
        cr = ctx.where(dialysed, dialysis, ctx.clip(cr, floor, ceiling))
    cr = ctx.step(_CR_USED, cr, "mg/dL")
    bili = ctx.maximum(ctx.quantity("Bilirubin"), ctx.const("bilirubin_floor"))
    inr = ctx.maximum(ctx.number("international normalized ratio"), ctx.const("inr_floor"))
    na = ctx.clip(ctx.quantity("Sodium"), ctx.const("sodium_floor"), ctx.const("sodium_ceiling"))
    meld_i = (ctx.const("creatinine_coefficient") * ctx.log(cr) + ctx.const("bilirubin_coefficient") * ctx.log(bili)
              + ctx.const("inr_coefficient") * ctx.log(inr) + ctx.const("intercept"))
    # two rounding steps, each in the variant's mode (registry: output.published_rounding)
    tenth, whole = step(ctx.calc, ctx.variant, ctx.const("meld_decimals")), step(ctx.calc, ctx.variant, 0)
    meld = ctx.round_to(ctx.round_to(meld_i, tenth) * ctx.const("meld_scale"), whole)
    na_gap = ctx.const("sodium_ceiling") - na
    score = ctx.round_to(meld + ctx.const("sodium_coefficient") * na_gap
                         - ctx.const("interaction_coefficient") * meld * na_gap, whole)
    if ctx.recording:
        ctx.step("MELD(i)", meld_i)
        ctx.step("MELD(i) rounded to a tenth, times {meld_scale}", meld)
        ctx.step("with the sodium terms (used above {sodium_threshold})", score)
    return ctx.where(meld <= ctx.const("sodium_threshold"), meld, ctx.minimum(score, ctx.const("score_cap")))


@calculator("meld-3-0", columnar=True)
def meld_3_0(ctx: Context) -> float:
    """MELD 3.0 (Kim 2021): no benchmark exists, so both variants compute the published equation."""
    dialysed = ctx.any_flag("Dialysis at least twice in the past week",
                            "Continuous veno-venous hemodialysis for ≥24 hours in the past week")
    cr = ctx.quantity("creatinine")
    cr = ctx.step(_CR_USED, ctx.where(dialysed, ctx.const("dialysis_creatinine"), ctx.clip(
        cr, ctx.const("creatinine_floor"), ctx.const("creatinine_ceiling"))), "mg/dL")
    bili = ctx.maximum(ctx.quantity("Bilirubin"), ctx.const("bilirubin_floor"))
    inr = ctx.maximum(ctx.number("international normalized ratio"), ctx.const("inr_floor"))
    na = ctx.clip(ctx.quantity("Sodium"), ctx.const("sodium_floor"), ctx.const("sodium_ceiling"))
    alb = ctx.clip(ctx.quantity("Albumin"), ctx.const("albumin_floor"), ctx.const("albumin_ceiling"))
    female = ctx.where(ctx.choice_is("sex", "Female"), 1, 0)

    def adolescent() -> bool:
        age = ctx.age()
        ctx.refuse(age < ctx.const("adolescent_min_age"), "age", lambda: (
            f"{age:g} years: MELD applies from {ctx.const('adolescent_min_age')} years; use the PELD score for "
            "younger candidates"))
        return age < ctx.const("adult_age")

    # adolescents receive the female points whatever their sex (OPTN implementation)
    female = ctx.where(ctx.if_given("age", adolescent, False), 1, female)
    na_gap = ctx.const("sodium_ceiling") - na
    alb_gap = ctx.const("albumin_ceiling") - alb
    ln_bili, ln_cr = ctx.log(bili), ctx.log(cr)
    score = (ctx.const("female_coefficient") * female
            + ctx.const("bilirubin_coefficient") * ln_bili
            + ctx.const("sodium_coefficient") * na_gap
            - ctx.const("sodium_bilirubin_coefficient") * na_gap * ln_bili
            + ctx.const("inr_coefficient") * ctx.log(inr)
            + ctx.const("creatinine_coefficient") * ln_cr
            + ctx.const("albumin_coefficient") * alb_gap
            - ctx.const("albumin_creatinine_coefficient") * alb_gap * ln_cr
            + ctx.const("intercept"))
    cap = ctx.calc.constants.get("score_cap")  # absent before 1.1.0: no cap
    return score if cap is None else ctx.minimum(score, cap.value)
