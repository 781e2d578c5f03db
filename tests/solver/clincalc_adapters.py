"""Adapters from the library's converted inputs to the `clincalc` engine's input schema (test-only).

The adapters start from the inputs as our library converted them (canonical units), so the
differential test compares formulas, not unit parsing. Each adapter returns clincalc's inputs and
a function that picks the comparable number out of clincalc's result, or None when clincalc cannot
take the case (its input ranges are narrower, or it wants an integer age).
"""
from __future__ import annotations

from typing import Any, Callable

Adapter = Callable[[dict[str, Any]], dict[str, Any] | None]


def _age(v: dict[str, Any]) -> int | None:
    a = v["age"]
    return int(a) if float(a).is_integer() else None


def _cm(v: dict[str, Any], unit: str | None) -> float:
    return v["height"] * 100 if unit == "m" else v["height"]


def bmi(v, units):
    return {"weight_kg": v["weight"], "height_cm": _cm(v, units.get("height"))}


def bsa(v, units):
    return {"weight_kg": v["weight"], "height_cm": _cm(v, units.get("height"))}


def fib4(v, units):
    age = _age(v)
    if age is None:
        return None
    return {"age": age, "ast": v["Aspartate aminotransferase"], "alt": v["Alanine aminotransferase"],
            "platelets": v["Platelet count"] / 1e9}


_ASCITES = {"absent": "none", "slight": "mild", "moderate": "moderate-severe"}
# clincalc 0.4.0's schema lists grade1-2 / grade3-4, but its engine accepts only grade1-to2 / grade3-to4
_ENCEPH = {"No Encephalopathy": "none", "Grade 1-2": "grade1-to2", "Grade 3-4": "grade3-to4"}


def child_pugh(v, units):
    return {"albumin": v["Albumin"], "albumin_unit": "g/dL", "bilirubin": v["Bilirubin"], "bilirubin_unit": "mg/dL",
            "inr": v["international normalized ratio"], "ascites": _ASCITES[v.get("Ascites") or "absent"],
            "encephalopathy": _ENCEPH[v.get("Encephalopathy") or "No Encephalopathy"]}


def _stroke_criteria(v):
    return {"congestive_heart_failure": bool(v.get("Congestive Heart Failure")),
            "hypertension": bool(v.get("Hypertension history")), "diabetes": bool(v.get("Diabetes history")),
            "vascular_disease": bool(v.get("Vascular disease history")),
            "stroke_tia_thromboembolism": any(bool(v.get(k)) for k in (
                "Stroke", "Transient Ischemic Attacks History", "Thromboembolism history"))}


def cha2ds2vasc(v, units):
    age = _age(v)
    if age is None or age < 18:
        return None
    return {"age": age, "sex": v["sex"].lower(), **_stroke_criteria(v)}


def cha2ds2_va(v, units):
    age = _age(v)
    if age is None or age < 18:
        return None
    return {"age": age, **_stroke_criteria(v)}


def egfr(v, units):
    age = _age(v)
    if age is None or age < 18:
        return None
    return {"age": age, "sex": v["sex"].lower(), "creatinine": v["creatinine"], "creatinine_unit": "mg/dL"}


def sodium(method):
    def adapt(v, units):
        if not 100 <= v["Glucose"] <= 2500:
            return None  # clincalc: "not valid below normoglycaemia"
        return {"sodium": v["Sodium"], "glucose": v["Glucose"], "glucose_unit": "mg/dL", "method": method}
    return adapt


def homa_ir(v, units):
    if not (0.5 <= v["Insulin"] <= 300 and 30 <= v["Glucose"] <= 500):
        return None
    return {"fasting_insulin_miu_l": v["Insulin"], "fasting_glucose": v["Glucose"], "glucose_unit": "mg/dL"}


def lipids(v, units):
    return {"total_cholesterol": v["Total cholesterol"], "hdl_cholesterol": v["high-density lipoprotein cholesterol"],
            "triglycerides": v["Triglycerides"], "unit": "mg/dL"}


def anion_gap(v, units):
    return {"sodium_mmol_l": v["Sodium"], "chloride_mmol_l": v["Chloride"], "bicarbonate_mmol_l": v["Bicarbonate"]}


def calcium(v, units):
    return {"calcium": v["Calcium"], "calcium_unit": "mg/dL", "albumin": v["Albumin"], "albumin_unit": "g/dL"}


def fena(v, units):
    return {"plasma_sodium": v["Sodium"], "urine_sodium": v["Urine sodium"], "plasma_creatinine": v["creatinine"],
            "urine_creatinine": v["Urine creatinine"]}


def ascvd(v, units):
    age = _age(v)
    if age is None:
        return None
    return {"age": age, "sex": v["sex"].lower(), "race": "black" if v.get("Race") == "African American" else "white",
            "total_cholesterol_mg_dl": v["Total cholesterol"], "hdl_cholesterol_mg_dl": v["high-density lipoprotein cholesterol"],
            "systolic_bp_mm_hg": v["Systolic Blood Pressure"], "treated_bp": bool(v.get("Blood pressure being treated with medicines")),
            "current_smoker": bool(v.get("Smoker")), "diabetes": bool(v.get("Diabetes history"))}


def feverpain(v, units):
    return {"fever": bool(v.get("Fever in past 24 hours")), "absence_of_cough": bool(v.get("Absence of cough or coryza")),
            "attend_rapidly": bool(v.get("Symptom onset <=3 days")), "purulence": bool(v.get("Purulent tonsils")),
            "inflamed_tonsils": bool(v.get("Severe tonsil inflammation"))}


def wells_pe(v, units):
    return {"clinical_signs_of_dvt": bool(v.get("Clinical signs and symptoms of Deep Vein Thrombosis")),
            "pe_most_likely_diagnosis": bool(v.get("Pulmonary Embolism is #1 diagnosis OR equally likely")),
            "heart_rate_over_100": v["Heart Rate or Pulse"] > 100,
            "immobilisation_or_surgery": bool(v.get("Immobilization for at least 3 days"))
            or bool(v.get("Surgery in the previous 4 weeks")),
            "previous_dvt_or_pe": bool(v.get("Previously Documented Pulmonary Embolism"))
            or bool(v.get("Previously documented Deep Vein Thrombosis")),
            "haemoptysis": bool(v.get("Hemoptysis")),
            "malignancy": bool(v.get("Malignancy with treatment within 6 months or palliative"))}


def cockcroft_gault(v, units):
    age = _age(v)
    if age is None or age < 18:
        return None
    return {"age": age, "sex": v["sex"].lower(), "creatinine": v["creatinine"], "creatinine_unit": "mg/dL",
            "weight_kg": v["weight"]}


def _result(r):
    return r["result"]


def _key(k):
    return lambda r: r["result"][k]


# our slug -> (benchmark id whose reference cases feed it, clincalc id, adapter, result picker)
PAIRS: dict[str, tuple[int, str, Any, Callable[[dict], Any]]] = {
    "body-mass-index": (6, "bmi", bmi, _result),
    "body-surface-area": (60, "body_surface_area", bsa, _result),
    "fib-4": (19, "fib4", fib4, _result),
    "child-pugh": (15, "child_pugh", child_pugh, _result),
    "cha2ds2-vasc": (4, "cha2ds2vasc", cha2ds2vasc, _result),
    "cha2ds2-va": (4, "cha2ds2_va", cha2ds2_va, _result),
    "ckd-epi-2021": (3, "egfr", egfr, _result),
    "sodium-correction-hyperglycemia": (26, "corrected_sodium", sodium("hillier"), _result),
    "sodium-correction-katz": (26, "corrected_sodium", sodium("katz"), _result),
    "homa-ir": (31, "homa_ir", homa_ir, _result),
    "ldl-friedewald": (44, "ldl_cholesterol", lipids, _key("ldl_friedewald")),
    "ldl-sampson": (44, "ldl_cholesterol", lipids, _key("ldl_sampson_nih")),
    "anion-gap": (39, "anion_gap", anion_gap, _result),
    "calcium-correction": (7, "corrected_calcium", calcium, _result),
    "fractional-excretion-sodium": (40, "fena", fena, _result),
    "pooled-cohort-equations": (46, "ascvd", ascvd, _result),
    "feverpain": (33, "feverpain", feverpain, _result),
    "wells-pe": (8, "wells_pe", wells_pe, _result),
    "creatinine-clearance-cockcroft-gault": (2, "cockcroft_gault", cockcroft_gault, _result),
}


def tolerance(theirs: Any, integer_output: bool) -> float:
    """Half a unit of clincalc's last printed decimal (it rounds its results); exact for integer scores."""
    if integer_output:
        return 0.0
    text = theirs if isinstance(theirs, str) else repr(theirs)
    if isinstance(theirs, int) and not isinstance(theirs, bool):
        return 0.5
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10 ** -decimals
