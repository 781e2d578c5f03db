"""Cockcroft-Gault creatinine clearance: the benchmark's BMI-class weight rule against the 1976 actual weight.

Published expectations are computed here by hand (Cockcroft and Gault 1976; Devine ideal body weight;
adjusted body weight = IBW + 0.4 x (actual - IBW)), never by calling the library a second time.
"""
from __future__ import annotations

import pytest

from solver.library import compute

CG = "creatinine-clearance-cockcroft-gault"


def both(ents: dict) -> tuple:
    return compute(CG, ents, variant="benchmark").value, compute(CG, ents, variant="published").value


def crcl(age: float, kg: float, female: bool, scr_mg_dl: float) -> float:
    """(140 - age) x weight x (0.85 if female) / (72 x creatinine), Cockcroft and Gault 1976."""
    return (140 - age) * kg * (0.85 if female else 1) / (72 * scr_mg_dl)


def devine_ibw(cm: float, female: bool) -> float:
    return (45.5 if female else 50) + 2.3 * (cm / 2.54 - 60)


@pytest.mark.deviation("creatinine-clearance-cockcroft-gault", "bmi-class-weight")
def test_cockcroft_gault_bmi_class_weight_versus_actual_weight():
    # Obese man: 100 kg, 170 cm, BMI 34.6 > 24.9 -> the benchmark uses adjusted body weight.
    ents = {"sex": "Male", "age": [60, "years"], "weight": [100, "kg"], "height": [170, "cm"],
            "creatinine": [1.0, "mg/dL"]}
    assert 100 / 1.70 ** 2 > 24.9
    ibw = devine_ibw(170, female=False)  # 65.94 kg
    abw = ibw + 0.4 * (100 - ibw)  # 79.56 kg
    bench, pub = both(ents)
    assert bench == pytest.approx(crcl(60, abw, False, 1.0), abs=1e-3)  # 88.40 mL/min
    assert pub == pytest.approx(crcl(60, 100, False, 1.0), abs=1e-3)  # 111.11 mL/min, actual weight
    # actual weight exceeds the adjusted weight, so the publication's estimate is higher by 100 / ABW
    assert pub / bench == pytest.approx(100 / abw, rel=1e-4)

    # Normal-BMI woman: 70 kg, 175 cm, BMI 22.9 -> the benchmark uses the lesser of IBW (65.96 kg) and 70 kg.
    ents = {"sex": "Female", "age": [60, "years"], "weight": [70, "kg"], "height": [175, "cm"],
            "creatinine": [1.0, "mg/dL"]}
    ibw = devine_ibw(175, female=True)
    assert 18.5 <= 70 / 1.75 ** 2 <= 24.9 and ibw < 70
    bench, pub = both(ents)
    assert bench == pytest.approx(crcl(60, ibw, True, 1.0), abs=1e-3)  # 62.30 mL/min
    assert pub == pytest.approx(crcl(60, 70, True, 1.0), abs=1e-3)  # 66.11 mL/min
    assert pub > bench

    # Underweight man: 50 kg, 175 cm, BMI 16.3 -> both use actual weight and agree.
    ents = {"sex": "Male", "age": [60, "years"], "weight": [50, "kg"], "height": [175, "cm"],
            "creatinine": [1.0, "mg/dL"]}
    bench, pub = both(ents)
    assert bench == pub == pytest.approx(crcl(60, 50, False, 1.0), abs=1e-3)  # 55.56 mL/min
