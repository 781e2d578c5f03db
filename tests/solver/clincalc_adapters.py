"""Adapters from a benchmark-style input block, as given, to the `clincalc` 0.4.0 engine's inputs (test-only).

The adapters read the entities exactly as a case gives them, never as our library converted them:
a value goes to clincalc in the unit the case gives whenever clincalc accepts that unit (µmol/L is
spelled "umol/L" there, mEq/L of a monovalent ion is mmol/L). Where clincalc has no unit choice the
adapter does only what the field's name states: a power-of-ten rescaling of a count (per µL to
10^9/L), or one conventional factor written here with its source (BUN mg/dL to urea mmol/L, 2.8;
creatinine mg/dL to µmol/L, 88.4). A case clincalc cannot take raises `Skip` with the reason; the
differential test counts every reason, none is dropped silently.

Yes/no items and categorical choices are mapped item by item (clincalc names them differently);
items that clincalc takes as a ready-made yes/no where our input is a number (Wells PE's heart rate
over 100, HAS-BLED's age over 65) are derived here with the threshold the item's name states.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

Entities = dict[str, Any]

UMOL = {"µmol/L": "umol/L", "mg/dL": "mg/dL"}
BUN_MG_DL_PER_UREA_MMOL_L = 2.8    # 2 N x 14.0 g/mol: urea mmol/L = BUN mg/dL / 2.8 (Lim 2003 as the registry cites)
CREATININE_UMOL_PER_MG_DL = 88.4   # 1 mg/dL creatinine = 88.4 µmol/L (conventional; 10 x 1000 / 113.12 g/mol)
PER_LITRE = {"µL": 1e6, "mm^3": 1e6, "L": 1.0}  # a count per µL is 10^6 per litre


class Skip(Exception):
    """clincalc cannot take this case (a unit it has no choice for, a non-whole age, its narrower range)."""


def flag(e: Entities, *names: str) -> bool:
    return any(e.get(n) in (True, "True") for n in names)


def num(e: Entities, name: str) -> float:
    v = e[name]
    return float(v[0] if isinstance(v, list) else v)


def unit(e: Entities, name: str) -> str:
    return e[name][1]


def quantity(e: Entities, name: str, accepted: dict[str, str]) -> tuple[float, str]:
    """(value, clincalc's spelling of the unit) when clincalc accepts the case's unit, else Skip."""
    v, u = e[name][0], e[name][1]
    if u not in accepted:
        raise Skip(f"{name} in {u}")
    return float(v), accepted[u]


def mmol(e: Entities, name: str) -> float:
    """A monovalent ion in mmol/L (mEq/L is the same number)."""
    v, u = quantity(e, name, {"mmol/L": "mmol/L", "mEq/L": "mmol/L"})
    return v


def whole_age(e: Entities, name: str = "age", low: int = 0) -> int:
    a = e[name]
    if not (len(a) == 2 and a[1] == "years" and float(a[0]).is_integer()):
        raise Skip("age not in whole years")
    if a[0] < low:
        raise Skip(f"age under {low}")
    return int(a[0])


def kg(e: Entities) -> float:
    v, _ = quantity(e, "weight", {"kg": "kg"})
    return v


def cm(e: Entities) -> float:
    v, _ = quantity(e, "height", {"cm": "cm"})
    return v


def per_1e9_l(e: Entities, name: str) -> float:
    v, u = e[name][0], e[name][1]
    if u not in PER_LITRE:
        raise Skip(f"{name} in {u}")
    return float(v) * PER_LITRE[u] / 1e9


def sex(e: Entities) -> str:
    return str(e["sex"]).lower()


# ---------------------------------------------------------------------- one adapter per calculator


def bmi(e):
    return {"weight_kg": kg(e), "height_cm": cm(e)}


def fib4(e):
    return {"age": whole_age(e), "ast": num(e, "Aspartate aminotransferase"), "alt": num(e, "Alanine aminotransferase"),
            "platelets": per_1e9_l(e, "Platelet count")}


_ASCITES = {"absent": "none", "slight": "mild", "moderate": "moderate-severe"}
# clincalc 0.4.0's schema lists grade1-2 / grade3-4, but its engine accepts only grade1-to2 / grade3-to4
_ENCEPH = {"No Encephalopathy": "none", "Grade 1-2": "grade1-to2", "Grade 3-4": "grade3-to4"}


def child_pugh(e):
    bili, bu = quantity(e, "Bilirubin", UMOL)
    alb, au = quantity(e, "Albumin", {"g/dL": "g/dL", "g/L": "g/L"})
    return {"bilirubin": bili, "bilirubin_unit": bu, "albumin": alb, "albumin_unit": au,
            "inr": num(e, "international normalized ratio"), "ascites": _ASCITES[e.get("Ascites") or "absent"],
            "encephalopathy": _ENCEPH[e.get("Encephalopathy") or "No Encephalopathy"]}


def _stroke_items(e):
    return {"congestive_heart_failure": flag(e, "Congestive Heart Failure"), "hypertension": flag(e, "Hypertension history"),
            "diabetes": flag(e, "Diabetes history"), "vascular_disease": flag(e, "Vascular disease history"),
            "stroke_tia_thromboembolism": flag(e, "Stroke", "Transient Ischemic Attacks History", "Thromboembolism history")}


def cha2ds2vasc(e):
    return {"age": whole_age(e, low=18), "sex": sex(e), **_stroke_items(e)}


def cha2ds2_va(e):
    return {"age": whole_age(e, low=18), **_stroke_items(e)}


def _creatinine(e, name="creatinine"):
    v, u = quantity(e, name, UMOL)
    return {"creatinine": v, "creatinine_unit": u}


def egfr(e):
    return {"age": whole_age(e, low=18), "sex": sex(e), **_creatinine(e)}


def cockcroft_gault(e):
    return {"age": whole_age(e, low=18), "sex": sex(e), "weight_kg": kg(e), **_creatinine(e)}


def corrected_sodium(method):
    def adapt(e):
        g, gu = quantity(e, "Glucose", {"mg/dL": "mg/dL", "mmol/L": "mmol/L"})
        return {"sodium": mmol(e, "Sodium"), "glucose": g, "glucose_unit": gu, "method": method}
    return adapt


def homa_ir(e):
    ins, _ = quantity(e, "Insulin", {"µIU/mL": "mIU/L"})  # 1 µIU/mL = 1 mIU/L
    g, gu = quantity(e, "Glucose", {"mg/dL": "mg/dL", "mmol/L": "mmol/L"})
    return {"fasting_insulin_miu_l": ins, "fasting_glucose": g, "glucose_unit": gu}


def lipids(e):
    names = ["Total cholesterol", "high-density lipoprotein cholesterol", "Triglycerides"]
    units = {unit(e, n) for n in names}
    if len(units) != 1 or not units <= {"mg/dL", "mmol/L"}:
        raise Skip("lipids in mixed units")
    return {"total_cholesterol": num(e, names[0]), "hdl_cholesterol": num(e, names[1]),
            "triglycerides": num(e, names[2]), "unit": units.pop()}


def anion_gap(e):
    return {"sodium_mmol_l": mmol(e, "Sodium"), "chloride_mmol_l": mmol(e, "Chloride"),
            "bicarbonate_mmol_l": mmol(e, "Bicarbonate")}


def corrected_calcium(e):
    ca, cu = quantity(e, "Calcium", {"mg/dL": "mg/dL", "mmol/L": "mmol/L"})
    alb, au = quantity(e, "Albumin", {"g/dL": "g/dL", "g/L": "g/L"})
    return {"calcium": ca, "calcium_unit": cu, "albumin": alb, "albumin_unit": au}


def fena(e):
    """clincalc takes bare numbers: each pair (plasma and urine) must share its unit, the ratio is then unit-free."""
    if unit(e, "Sodium").replace("mEq", "mmol") != unit(e, "Urine sodium").replace("mEq", "mmol") \
            or unit(e, "creatinine") != unit(e, "Urine creatinine"):
        raise Skip("plasma and urine in different units")
    return {"plasma_sodium": num(e, "Sodium"), "urine_sodium": num(e, "Urine sodium"),
            "plasma_creatinine": num(e, "creatinine"), "urine_creatinine": num(e, "Urine creatinine")}


def ascvd(e):
    tc, _ = quantity(e, "Total cholesterol", {"mg/dL": "mg/dL"})
    hdl, _ = quantity(e, "high-density lipoprotein cholesterol", {"mg/dL": "mg/dL"})
    return {"age": whole_age(e), "sex": sex(e), "race": "black" if e.get("Race") == "African American" else "white",
            "total_cholesterol_mg_dl": tc, "hdl_cholesterol_mg_dl": hdl, "systolic_bp_mm_hg": num(e, "Systolic Blood Pressure"),
            "treated_bp": flag(e, "Blood pressure being treated with medicines"), "current_smoker": flag(e, "Smoker"),
            "diabetes": flag(e, "Diabetes history")}


def feverpain(e):
    return {"fever": flag(e, "Fever in past 24 hours"), "absence_of_cough": flag(e, "Absence of cough or coryza"),
            "attend_rapidly": flag(e, "Symptom onset <=3 days"), "purulence": flag(e, "Purulent tonsils"),
            "inflamed_tonsils": flag(e, "Severe tonsil inflammation")}


def wells_pe(e):
    return {"clinical_signs_of_dvt": flag(e, "Clinical signs and symptoms of Deep Vein Thrombosis"),
            "pe_most_likely_diagnosis": flag(e, "Pulmonary Embolism is #1 diagnosis OR equally likely"),
            "heart_rate_over_100": num(e, "Heart Rate or Pulse") > 100,
            "immobilisation_or_surgery": flag(e, "Immobilization for at least 3 days", "Surgery in the previous 4 weeks"),
            "previous_dvt_or_pe": flag(e, "Previously Documented Pulmonary Embolism",
                                       "Previously documented Deep Vein Thrombosis"),
            "haemoptysis": flag(e, "Hemoptysis"),
            "malignancy": flag(e, "Malignancy with treatment within 6 months or palliative")}


def wells_dvt(e):
    return {"active_cancer": flag(e, "Active cancer"),
            "paralysis_paresis_immobilisation": flag(e, "Paralysis, paresis, or recent plaster immobilization of the "
                                                        "lower extremity"),
            "bedridden_or_major_surgery": flag(e, "Bedridden recently >3 days", "Major surgery within 12 weeks"),
            "localised_tenderness": flag(e, "Localized tenderness along the deep venous system"),
            "entire_leg_swollen": flag(e, "Entire Leg Swollen"),
            "calf_swelling_over_3cm": flag(e, "Calf swelling >3 centimeters compared to the other leg"),
            "pitting_oedema": flag(e, "Pitting edema, confined to symptomatic leg"),
            "collateral_superficial_veins": flag(e, "Collateral (nonvaricose) superficial veins present"),
            "previously_documented_dvt": flag(e, "Previously documented Deep Vein Thrombosis"),
            "alternative_diagnosis_as_likely": flag(e, "Alternative diagnosis to Deep Vein Thrombosis as likely or "
                                                       "more likely")}


def _urea_mmol(e):
    v, u = e["Blood Urea Nitrogen (BUN)"]
    if u == "mmol/L":
        return float(v)  # urea nitrogen in mmol/L is urea in mmol/L (one urea, one mole)
    if u == "mg/dL":  # rounded to 9 decimals: 19.6 / 2.8 is 7.000000000000001 in binary, a tie we did not mean
        return round(float(v) / BUN_MG_DL_PER_UREA_MMOL_L, 9)
    raise Skip(f"BUN in {u}")


def curb65(e):
    return {"confusion": flag(e, "Confusion"), "urea_mmol_l": _urea_mmol(e), "respiratory_rate": num(e, "respiratory rate"),
            "systolic_bp": num(e, "Systolic Blood Pressure"), "diastolic_bp": num(e, "Diastolic Blood Pressure"),
            "age": whole_age(e, low=18)}


def qsofa(e):
    gcs = e.get("Glasgow Coma Score")
    return {"respiratory_rate": num(e, "respiratory rate"), "systolic_bp": num(e, "Systolic Blood Pressure"),
            "altered_mentation": flag(e, "Altered mental status") or (gcs is not None and gcs < 15)}


def centor(e):
    t, u = e["Temperature"]
    celsius = t if u == "degrees celsius" else None
    if celsius is None:
        raise Skip(f"temperature in {u}")
    return {"age": whole_age(e, low=3), "fever": celsius > 38, "absence_of_cough": flag(e, "Cough Absent"),
            "tender_anterior_cervical_nodes": flag(e, "Tender/swollen anterior cervical lymph nodes"),
            "tonsillar_exudate": flag(e, "Exudate or swelling on tonsils")}


def hasbled(e):
    drinks = e.get("Number of Alcoholic Drinks Per Week") or 0
    return {"hypertension_uncontrolled": flag(e, "Hypertension"),
            "abnormal_renal_function": flag(e, "Renal disease criteria for the HAS-BLED rule"),
            "abnormal_liver_function": flag(e, "Liver disease criteria for the HAS-BLED rule"),
            "stroke": flag(e, "Stroke"), "bleeding_history": flag(e, "Prior major bleeding or predisposition to bleeding"),
            "labile_inr": flag(e, "Labile international normalized ratio"), "elderly_over_65": whole_age(e) > 65,
            "drugs_antiplatelet_nsaid": flag(e, "Medication usage predisposing to bleeding"),
            "alcohol_excess": drinks >= 8}


_EYE = {"eyes open spontaneously": "spontaneous", "eye opening to verbal command": "to_sound",
        "eye opening to pain": "to_pressure", "no eye opening": "no_response", "not testable": "not_testable"}
_VERBAL = {"oriented": "orientated", "confused": "confused", "inappropriate words": "words",
           "incomprehensible sounds": "sounds", "no verbal response": "no_response", "not testable": "not_testable"}
_MOTOR = {"obeys commands": "obey_commands", "localizes pain": "localising", "withdrawal from pain": "normal_flexion",
          "flexion to pain": "abnormal_flexion", "extension to pain": "extension", "no motor response": "no_response"}


def gcs(e):
    return {"eye_opening": _EYE[e["Best eye response"]], "verbal_response": _VERBAL[e["Best verbal response"]],
            "motor_response": _MOTOR[e["Best motor response"]]}


def perc(e):
    hr, sat = num(e, "Heart Rate or Pulse"), num(e, "O₂ saturation percentage")
    if not (hr.is_integer() and sat.is_integer()):
        raise Skip("heart rate or saturation not whole")
    return {"low_pretest_probability_confirmed": True, "age_years": whole_age(e, low=18), "heart_rate_bpm": int(hr),
            "room_air_oxygen_saturation_percent": int(sat), "unilateral_leg_swelling": flag(e, "Unilateral Leg Swelling"),
            "haemoptysis": flag(e, "Hemoptysis"), "recent_surgery_or_trauma_requiring_hospitalisation":
            flag(e, "Recent surgery or trauma"), "prior_vte": flag(e, "Previously documented Deep Vein Thrombosis",
                                                                  "Previously Documented Pulmonary Embolism"),
            "exogenous_oestrogen_use": flag(e, "Hormone use")}


_HISTORY = {"Slightly suspicious": "slightly_suspicious", "Moderately suspicious": "moderately_suspicious",
            "Highly suspicious": "highly_suspicious"}
_ECG = {"Normal": "normal", "Non-specific repolarization disturbance": "non_specific_repolarisation",
        "Significant ST deviation": "significant_st_deviation"}
_TROPONIN = {"less than or equal to normal limit": "normal",
             "between the normal limit or up to three times the normal limit": "one_to_three_times",
             "greater than three times normal limit": "over_three_times"}
_HEART_FACTORS = ("Hypertension history", "hypercholesterolemia", "Diabetes mellitus", "obesity", "smoking",
                  "parent or sibling with Cardiovascular disease before age 65")


def heart(e):
    n = sum(flag(e, f) for f in _HEART_FACTORS)
    athero = flag(e, "atherosclerotic disease", "Transient Ischemic Attacks History")
    risk = "three_or_more_or_atherosclerosis" if athero or n >= 3 else ("one_or_two" if n else "none")
    try:
        history, ecg, trop = e["Suspicion History"], e["Electrocardiogram Test"], e["Initial troponin"]
    except KeyError as missing:
        raise Skip(f"{missing} not given") from None
    return {"history": _HISTORY[history], "ecg": _ECG[ecg], "age": whole_age(e, low=18), "risk_factors": risk,
            "troponin": _TROPONIN[trop]}


def charlson(e):
    liver = e.get("Liver disease severity") or "none"
    dm = e.get("Diabetes mellitus") or "none or diet-controlled"
    tumour = e.get("Solid tumor") or "none"
    return {"age": whole_age(e, low=18), "include_age_adjustment": True,
            "myocardial_infarction": flag(e, "Myocardial infarction"),
            "congestive_heart_failure": flag(e, "Congestive Heart Failure"),
            "peripheral_vascular_disease": flag(e, "Peripheral vascular disease"),
            "cerebrovascular_disease": flag(e, "Cerebrovascular Accident", "Transient Ischemic Attacks History"),
            "dementia": flag(e, "Dementia"), "copd": flag(e, "Chronic Pulmonary Disease"),
            "connective_tissue_disease": flag(e, "Connective tissue disease"),
            "peptic_ulcer_disease": flag(e, "Peptic ulcer disease"), "mild_liver_disease": liver == "mild",
            "liver_disease_moderate_severe": liver == "moderate to severe",
            "diabetes_uncomplicated": dm == "uncomplicated", "diabetes_complicated": dm == "end-organ damage",
            "hemiplegia_paraplegia": flag(e, "Hemiplegia"),
            "renal_disease_moderate_severe": flag(e, "Moderate to severe Chronic Kidney Disease"),
            "solid_tumour_non_metastatic": tumour == "localized", "metastatic_solid_tumour": tumour == "metastatic",
            "leukaemia": flag(e, "Leukemia"), "lymphoma": flag(e, "Lymphoma"), "aids": flag(e, "AIDS")}


def rcri(e):
    name = "Pre-operative creatinine"
    if name in e:
        v, u = e[name]
        if u == "µmol/L":
            umol = float(v)
        elif u == "mg/dL":
            umol = float(v) * CREATININE_UMOL_PER_MG_DL
        else:
            raise Skip(f"creatinine in {u}")
    else:
        umol = 80.0  # not given: normal
    return {"adult_noncardiac_surgery_candidate": True, "original_validation_population_matches": True,
            "high_risk_surgery": flag(e, "Elevated-risk surgery"),
            "ischemic_heart_disease": flag(e, "History of ischemic heart disease"),
            "congestive_heart_failure": flag(e, "Congestive Heart Failure criteria for the Cardiac Risk Index rule"),
            "cerebrovascular_disease": flag(e, "History of cerebrovascular disease"),
            "preoperative_insulin_treatment": flag(e, "Pre-operative treatment with insulin"), "creatinine_umol_l": umol}


_CAPRINI_ITEMS = {  # our yes/no item -> clincalc's (Caprini 2005 names both)
    "Congestive Heart Failure in the last month": "congestive_heart_failure", "Sepsis in the last month":
    "sepsis_within_1_month", "Pneumonia in the last month": "serious_lung_disease",
    "Immobilizing plaster cast in the last month": "immobilising_cast",
    "Hip, pelvis, or leg fracture in the last month": "hip_pelvis_leg_fracture",
    "Stroke in the last month": "stroke_within_1_month",
    "Acute spinal cord injury causing paralysis in the last month": "acute_spinal_cord_injury",
    "Varicose veins": "varicose_veins", "Current swollen legs": "swollen_legs",
    "Current central venous access": "central_venous_access", "Family history of thrombosis": "family_history_vte",
    "Positive Factor V Leiden": "factor_v_leiden", "Positive prothrombin 20210A": "prothrombin_20210a",
    "Elevated serum homocysteine": "elevated_homocysteine", "Positive lupus anticoagulant": "lupus_anticoagulant",
    "Elevated anticardiolipin antibody": "anticardiolipin_antibodies",
    "Heparin-induced thrombocytopenia": "heparin_induced_thrombocytopenia",
    "Other congenital or acquired thrombophilia": "other_thrombophilia",
    "History of inflammatory bowel disease": "inflammatory_bowel_disease", "Acute Myocardial infarction": "acute_mi",
    "Chronic Obstructive Pulmonary Disease": "abnormal_pulmonary_function",
    "Present or previous malignancy": "malignancy",
    "Oral contraceptives or hormone replacement therapy": "oral_contraceptives_or_hrt",
    "Pregnancy or postpartum (less than 1 month)": "pregnancy_or_postpartum",
    "History of unexplained stillborn infant, recurrent spontaneous abortion (3 or more), premature birth with "
    "toxemia or growth-restricted infant": "history_of_miscarriage",
}
_CAPRINI_SURGERY = {"minor": "minor_surgery", "major": "major_surgery_over_45_min",
                    "laparoscopic": "laparoscopic_surgery_over_45_min", "arthroscopic": "arthroscopic_surgery",
                    "elective major lower extremity arthroplasty": "elective_arthroplasty"}


def caprini(e):
    for ours in ("Major Surgery in the last month", "Multiple trauma in the last month"):
        if flag(e, ours):
            raise Skip(f"{ours}: no clincalc item")
    age = whole_age(e)
    out = {v: flag(e, k) for k, v in _CAPRINI_ITEMS.items()}
    out.update({v: False for v in _CAPRINI_SURGERY.values()})
    surgery = e.get("Surgery Type") or "none"
    if surgery != "none":
        out[_CAPRINI_SURGERY[surgery]] = True
    mobility = e.get("Mobility") or "normal"
    bmi_value = e.get("Body Mass Index (BMI)")
    out.update({"age_41_60": 41 <= age <= 60, "age_61_74": 61 <= age <= 74, "age_75_plus": age >= 75,
                "bmi_over_25": bmi_value is not None and num(e, "Body Mass Index (BMI)") > 25,
                "medical_patient_at_bed_rest": mobility == "on bed rest",
                "confined_to_bed_over_72h": mobility == "confined to bed >72 hours",
                "history_dvt_pe": flag(e, "Previously documented Deep Vein Thrombosis",
                                       "Previously Documented Pulmonary Embolism"),
                "serious_lung_disease": out["serious_lung_disease"]})
    return out


def _dose(e: Entities, name: str) -> float:
    if name not in e:
        return 0.0
    v, u = e[name]
    if u not in ("mcg/kg/min", "µg/kg/min"):
        raise Skip(f"{name} in {u}")
    return float(v)


def sofa(e):
    """clincalc takes PaO2/FiO2 as one number and the cardiovascular item as a category (Vincent 1996's rows).
    A measurement the case does not give is sent as a normal value (it scores 0 on both sides)."""
    e = {"creatinine": [0.8, "mg/dL"], "Bilirubin": [0.5, "mg/dL"], "Platelet count": [250000, "µL"],
         "PaO2": [95, "mm Hg"], "FiO2": [21, "%"], **e}
    if "Urine Output" in e and num(e, "Urine Output") < 500:
        raise Skip("urine output under 500 mL/day: clincalc scores creatinine only")
    fio2, _ = quantity(e, "FiO2", {"%": "%"})
    dop, dob, ne, epi = (_dose(e, n) for n in ("DOPamine", "DOBUTamine", "norEPINEPHrine", "EPINEPHrine"))
    pressures = "Systolic Blood Pressure" in e and "Diastolic Blood Pressure" in e
    # MAP < 70 from the two pressures; the yes/no "Hypotension" only when they are not both given (registry
    # deviation hypotension-flag-ignored: clincalc takes the category, so this is the adapter's reading)
    low_map = ((num(e, "Systolic Blood Pressure") + 2 * num(e, "Diastolic Blood Pressure")) / 3 < 70 if pressures
               else flag(e, "Hypotension"))
    if dop > 15 or epi > 0.1 or ne > 0.1:
        cv = "high-vasopressors"
    elif dop > 5 or epi > 0 or ne > 0:
        cv = "moderate-vasopressors"
    elif dop > 0 or dob > 0:
        cv = "dopamine-low"
    else:
        cv = "map-below70" if low_map else "map-at-least70"
    bili, bu = quantity(e, "Bilirubin", UMOL)
    gcs = e.get("Glasgow Coma Score", 15)
    if not float(gcs).is_integer():
        raise Skip("GCS not whole")
    return {"pao2_fio2": num(e, "PaO2") / (fio2 / 100),
            "respiratory_support": flag(e, "On mechanical ventilation", "Continuous positive airway pressure"),
            "platelets": per_1e9_l(e, "Platelet count"), "bilirubin": bili, "bilirubin_unit": bu, "cardiovascular": cv,
            "gcs": int(gcs), **_creatinine(e)}


def free_water_deficit(e):
    """clincalc takes the water fraction as an input: the textbook fractions (0.6 men and children, 0.5 women and
    men of 65 and over, 0.45 women of 65 and over), so what is compared is the arithmetic, the target and units."""
    age, male = whole_age(e, low=18), sex(e) == "male"
    fraction = (0.6 if age < 65 else 0.5) if male else (0.5 if age < 65 else 0.45)
    return {"assessment_context": "adult_with_hypernatraemia", "weight_kg": kg(e),
            "current_sodium_mmol_l": mmol(e, "Sodium"), "target_sodium_mmol_l": 140, "total_body_water_fraction": fraction}


def predicted_body_weight(e):
    return {"assessment_context": "adult_lung_protective_ventilation_protocol_using_ardsnet_predicted_body_weight",
            "height_cm": cm(e), "formula_branch": sex(e)}


def meld(e):
    """Original MELD: compared with MELD Na where the sodium term is zero (sodium at or above 137)."""
    if mmol(e, "Sodium") < 137:
        raise Skip("sodium below 137 (MELD Na adds its sodium term)")
    bili, bu = quantity(e, "Bilirubin", UMOL)
    return {"bilirubin": bili, "bilirubin_unit": bu, "inr": num(e, "international normalized ratio"), **_creatinine(e),
            "dialysis_twice_past_week": flag(e, "Dialysis at least twice in the past week",
                                             "Continuous veno-venous hemodialysis for ≥24 hours in the past week")}


def meld_3(e):
    bili, bu = quantity(e, "Bilirubin", UMOL)
    alb, au = quantity(e, "Albumin", {"g/dL": "g/dL", "g/L": "g/L"})
    age = whole_age(e, low=12) if "age" in e else 40
    return {"bilirubin": bili, "bilirubin_unit": bu, "inr": num(e, "international normalized ratio"), **_creatinine(e),
            "sodium_mmol_l": mmol(e, "Sodium"), "albumin": alb, "albumin_unit": au,
            "female_for_adult_meld": sex(e) == "female", "registration_age_years": age,
            "qualifying_dialysis_in_prior_7_days": flag(e, "Dialysis at least twice in the past week",
                                                        "Continuous veno-venous hemodialysis for ≥24 hours in the past "
                                                        "week")}


def glasgow_blatchford(e):
    hb, hu = quantity(e, "Hemoglobin", {"g/L": "g/L", "g/dL": "g/dL"})
    return {"age_16_or_over": True, "acute_upper_gi_bleeding_at_first_assessment": True,
            "emergency_department_overt_ugib": True, "sex": sex(e), "urea_mmol_l": _urea_mmol(e),
            "haemoglobin_g_l": hb if hu == "g/L" else hb * 10,  # g/dL x 10 = g/L (a power of ten)
            "systolic_bp_mm_hg": num(e, "Systolic Blood Pressure"), "heart_rate_bpm": num(e, "Heart Rate or Pulse"),
            "melaena": flag(e, "Melena Present"), "syncope": flag(e, "Recent Syncope"),
            "hepatic_disease": flag(e, "Hepatic disease history"), "cardiac_failure": flag(e, "Cardiac Failure Present")}



FAHRENHEIT_OFFSET, FAHRENHEIT_PER_CELSIUS = 32.0, 1.8  # the definition of the degree Fahrenheit (exact)
_CHRONIC_HEALTH = {"Elective": "elective_postoperative", "Emergency": "nonoperative_or_emergency_postoperative",
                   "Nonoperative": "nonoperative_or_emergency_postoperative"}


def _celsius(e: Entities) -> float:
    t, u = e["Temperature"]
    if u == "degrees celsius":
        return float(t)
    if u == "degrees fahrenheit":  # clincalc takes °C only; °F is defined from °C, no conventional factor
        return round((float(t) - FAHRENHEIT_OFFSET) / FAHRENHEIT_PER_CELSIUS, 9)  # 105.8 °F is 41 °C, not 40.999...
    raise Skip(f"temperature in {u}")


def _creatinine_mg_dl(e: Entities) -> float:
    """clincalc takes mg/dL only: µmol/L with the conventional 88.4, mmol/L as 1000 µmol/L (a power of ten)."""
    v, u = e["creatinine"]
    if u == "mg/dL":
        return float(v)
    if u in ("µmol/L", "mmol/L"):
        return float(v) * (1000 if u == "mmol/L" else 1) / CREATININE_UMOL_PER_MG_DL
    raise Skip(f"creatinine in {u}")


def apache2(e):
    """clincalc takes MAP as one number (from the two pressures, as APACHE II defines it; a MAP the case gives is
    not read, on either side), FiO2 as a fraction (% / 100) and the chronic health item as one category."""
    fio2, _ = quantity(e, "FiO2", {"%": "%"})
    history = flag(e, "History of severe organ failure or immunocompromise")
    surgery, gcs = e.get("Surgery Type"), num(e, "Glasgow Coma Score")
    if not gcs.is_integer():
        raise Skip("GCS not whole")
    out = {"temperature_c": _celsius(e), "heart_rate": num(e, "Heart Rate or Pulse"),
           "mean_arterial_pressure_mm_hg": (num(e, "Systolic Blood Pressure") + 2 * num(e, "Diastolic Blood Pressure")) / 3,
           "respiratory_rate": num(e, "respiratory rate"), "fio2": fio2 / 100, "arterial_ph": num(e, "pH"),
           "sodium_mmol_l": mmol(e, "Sodium"), "potassium_mmol_l": mmol(e, "Potassium"),
           "creatinine_mg_dl": _creatinine_mg_dl(e), "acute_renal_failure": flag(e, "Acute renal failure"),
           "hematocrit_percent": num(e, "Hematocrit"), "wbc_10_9_l": per_1e9_l(e, "White blood cell count"),
           "glasgow_coma_scale": int(gcs), "age": whole_age(e),
           "chronic_health_status": _CHRONIC_HEALTH[surgery] if history and surgery else "none"}
    for ours, theirs in (("A-a gradient", "aa_gradient_mm_hg"), ("PaO2", "pao2_mm_hg")):
        if ours in e:
            out[theirs] = num(e, ours)
    return out


# ---------------------------------------------------------------------- the pairs


def result(r: dict[str, Any]) -> Any:
    return r["result"]


def key(k: str) -> Callable[[dict[str, Any]], Any]:
    return lambda r: r["result"][k]


CHOLESTEROL_MG_DL_PER_MMOL_L = 38.67  # clincalc's own factor (its working: 3.9 mmol/L non-HDL = 150.813 mg/dL)
CALCIUM_MG_DL_PER_MMOL_L = 4.0078    # 40.078 g/mol (standard atomic weight) / 10


def same(ours: Any, ents: Entities) -> Any:
    return ours


def lipids_in_their_unit(ours: Any, ents: Entities) -> Any:
    """clincalc answers in the unit of the inputs: our mg/dL result in mmol/L with clincalc's own factor."""
    return ours / CHOLESTEROL_MG_DL_PER_MMOL_L if unit(ents, "Total cholesterol") == "mmol/L" else ours


def calcium_in_their_unit(ours: Any, ents: Entities) -> Any:
    return ours / CALCIUM_MG_DL_PER_MMOL_L if unit(ents, "Calcium") == "mmol/L" else ours


@dataclass(frozen=True)
class Pair:
    """One calculator both implement: our slug, the benchmark id whose reference cases feed it (None for a
    successor), clincalc's id, the adapter and the picker of clincalc's comparable number."""

    slug: str
    cases_from: int | None
    clincalc: str
    adapt: Callable[[Entities], dict[str, Any]]
    pick: Callable[[dict[str, Any]], Any] = result
    min_compared: int = 10
    ours_as: Callable[[Any, Entities], Any] = same  # our result in clincalc's unit (it answers in the inputs' unit)


def tolerance(theirs: Any, integer_output: bool) -> float:
    """Half a unit of clincalc's last printed decimal (it rounds its results); exact for integer scores."""
    if integer_output or (isinstance(theirs, int) and not isinstance(theirs, bool)):
        return 0.0 if integer_output else 0.5
    text = theirs if isinstance(theirs, str) else repr(theirs)
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10 ** -decimals
