"""Cardiovascular and thromboembolic point scores: CHA2DS2-VASc and its successor CHA2DS2-VA,
Wells (PE, DVT), RCRI, HEART, HAS-BLED and the PERC rule.

Every weight, threshold and band lives in the calculator's registry entry; these functions only
decide which criteria are met and add their points.
"""
from __future__ import annotations

from solver.library.context import Context
from solver.library.functions import calculator


@calculator("cha2ds2-vasc", columnar=True)
def cha2ds2_vasc(ctx: Context) -> float:
    age = ctx.age()
    met = {"female sex": ctx.choice_is("sex", "Female"), **_stroke_risk_criteria(ctx)}
    return ctx.band("age_points", age) + ctx.points(met)


_STROKE_RISK_FLAGS = ("Stroke", "Transient Ischemic Attacks History", "Thromboembolism history",
                      "Congestive Heart Failure", "Hypertension history", "Vascular disease history", "Diabetes history")


def _stroke_risk_criteria(ctx: Context) -> dict[str, bool]:
    """The criteria CHA2DS2-VASc and CHA2DS2-VA share (stroke, TIA and thromboembolism count once)."""
    f = ctx.flags(_STROKE_RISK_FLAGS)
    return {
        "Congestive Heart Failure": f["Congestive Heart Failure"],
        "Hypertension history": f["Hypertension history"],
        "stroke, TIA or thromboembolism": f["Stroke"] | f["Transient Ischemic Attacks History"]
        | f["Thromboembolism history"],
        "Vascular disease history": f["Vascular disease history"],
        "Diabetes history": f["Diabetes history"],
    }


@calculator("cha2ds2-va", columnar=True)
def cha2ds2_va(ctx: Context) -> float:
    """CHA2DS2-VA (ESC 2024): CHA2DS2-VASc without the sex category; no benchmark, one variant."""
    age = ctx.age()
    return ctx.band("age_points", age) + ctx.points(_stroke_risk_criteria(ctx))


@calculator("wells-pe", columnar=True)
def wells_pe(ctx: Context) -> float:
    hr = ctx.measurement("Heart Rate or Pulse")
    dvt_signs = "Clinical signs and symptoms of Deep Vein Thrombosis"
    pe_first = "Pulmonary Embolism is #1 diagnosis OR equally likely"
    malignancy = "Malignancy with treatment within 6 months or palliative"
    met = {
        dvt_signs: ctx.flag(dvt_signs),
        pe_first: ctx.flag(pe_first),
        "heart rate above threshold": hr > ctx.const("heart_rate_threshold"),
        "immobilization or recent surgery": ctx.flag("Immobilization for at least 3 days")
        | ctx.flag("Surgery in the previous 4 weeks"),
        "previous PE or DVT": ctx.flag("Previously Documented Pulmonary Embolism")
        | ctx.flag("Previously documented Deep Vein Thrombosis"),
        "Hemoptysis": ctx.flag("Hemoptysis"),
        malignancy: ctx.flag(malignancy),
    }
    return ctx.points(met)


_WELLS_DVT_SINGLE = (
    "Active cancer",
    "Calf swelling >3 centimeters compared to the other leg",
    "Collateral (nonvaricose) superficial veins present",
    "Entire Leg Swollen",
    "Localized tenderness along the deep venous system",
    "Pitting edema, confined to symptomatic leg",
    "Paralysis, paresis, or recent plaster immobilization of the lower extremity",
    "Previously documented Deep Vein Thrombosis",
    "Alternative diagnosis to Deep Vein Thrombosis as likely or more likely",
)


@calculator("wells-dvt", columnar=True)
def wells_dvt(ctx: Context) -> float:
    met = ctx.flags(_WELLS_DVT_SINGLE)
    met["bedridden or recent major surgery"] = ctx.flag("Bedridden recently >3 days") | ctx.flag(
        "Major surgery within 12 weeks")
    return ctx.points(met)


_RCRI_FLAGS = (
    "Elevated-risk surgery",
    "History of ischemic heart disease",
    "Congestive Heart Failure criteria for the Cardiac Risk Index rule",
    "History of cerebrovascular disease",
    "Pre-operative treatment with insulin",
)


@calculator("revised-cardiac-risk-index", columnar=True)
def revised_cardiac_risk_index(ctx: Context) -> float:
    met = ctx.flags(_RCRI_FLAGS)
    creatinine = "Pre-operative creatinine"
    met["creatinine above threshold"] = ctx.if_given(creatinine, lambda: ctx.quantity(creatinine) > ctx.const(
        "creatinine_threshold"), False)
    return ctx.points(met)


_HEART_RISK_FACTORS = (
    "Hypertension history",
    "hypercholesterolemia",
    "Diabetes mellitus",
    "obesity",
    "smoking",
    "parent or sibling with Cardiovascular disease before age 65",
    "atherosclerotic disease",
)


@calculator("heart-score", columnar=True)
def heart_score(ctx: Context) -> float:
    history = ctx.lookup("history_points", ctx.choice("Suspicion History"))
    ecg = ctx.lookup("ecg_points", ctx.choice("Electrocardiogram Test"))
    troponin = ctx.lookup("troponin_points", ctx.choice("Initial troponin"))
    age = ctx.band("age_points", ctx.age())
    count = sum(ctx.flags(_HEART_RISK_FACTORS).values())
    risk = ctx.band("risk_factor_points", count)
    if not ctx.benchmark:
        # Known atherosclerotic disease (prior MI, PCI/CABG, stroke/TIA, PAD) scores the maximum
        # risk-factor points on its own; the benchmark counts it as one ordinary factor and never
        # reads the TIA history.
        known = ctx.any_flag("atherosclerotic disease", "Transient Ischemic Attacks History")
        risk = ctx.where(known, ctx.maximum(risk, ctx.const("published_atherosclerosis_points")), risk)
    return history + ecg + age + risk + troponin


_HAS_BLED_FLAGS = (
    "Hypertension",
    "Liver disease criteria for the HAS-BLED rule",
    "Renal disease criteria for the HAS-BLED rule",
    "Stroke",
    "Prior major bleeding or predisposition to bleeding",
    "Labile international normalized ratio",
    "Medication usage predisposing to bleeding",
)


@calculator("has-bled", columnar=True)
def has_bled(ctx: Context) -> float:
    age = ctx.age()
    drinks = ctx.number("Number of Alcoholic Drinks Per Week")
    if ctx.benchmark:
        drinks = ctx.trunc(drinks)  # the reference truncates; the threshold is whole, so this never changes a point
    met = ctx.flags(_HAS_BLED_FLAGS)
    met["alcohol use"] = drinks >= ctx.const("alcohol_threshold")
    return ctx.band("age_points", age) + ctx.points(met)


@calculator("perc-rule", columnar=True)
def perc_rule(ctx: Context) -> float:
    met = {
        "age at or above threshold": ctx.age() >= ctx.const("age_threshold"),
        "heart rate at or above threshold": ctx.measurement("Heart Rate or Pulse") >= ctx.const("heart_rate_threshold"),
        "saturation below threshold": ctx.measurement("O₂ saturation percentage") < ctx.const("saturation_threshold"),
        "Unilateral Leg Swelling": ctx.flag("Unilateral Leg Swelling"),
        "Hemoptysis": ctx.flag("Hemoptysis"),
        "Recent surgery or trauma": ctx.flag("Recent surgery or trauma"),
        "prior PE or DVT": ctx.flag("Previously Documented Pulmonary Embolism")
        | ctx.flag("Previously documented Deep Vein Thrombosis"),
        "Hormone use": ctx.flag("Hormone use"),
    }
    return ctx.points(met)
