"""The spellings real exports use, read once (solver.library.spelling) the same way by `compute`, `solve()`, the
command line and the tools, and recorded as given and as read.

Expected numbers come from the unit definitions and the published equations, never from this code: 1 lb =
0.45359237 kg (international pound), 1 in = 2.54 cm, creatinine 1 mg/dL = 88.4 µmol/L, Cockcroft & Gault 1976
(x 0.85 for women)."""
from __future__ import annotations

import json

import pytest

from registry.loader import get_registry
from registry.schema import Input, InputKind
from solver.library import compute
from solver.library.context import converter
from solver.library.errors import AmbiguousValue, BadValue
from solver.library.spelling import clean
from solver.router.core import solve
from solver.tools.service import call
from tests.helpers import run

REG = get_registry()
CG = {"sex": "Male", "age": [53, "years"], "weight": [87.0, "kg"], "height": [175, "cm"], "creatinine": [1.39, "mg/dL"]}
CG_MALE = (140 - 53) * 87.0 / (72 * 1.39)  # Cockcroft & Gault 1976, actual body weight (the published variant)
EXPORT = {"SEX": "f", "age": [53, "yrs"], "weight": [191.8, "lb"], "height": [175, "cm"],
          "creatinine": [122.9, "umol/L"]}  # how a cohort export writes it
EXPORT_VALUE = (140 - 53) * (191.8 * 0.45359237) / (72 * 122.9 / 88.4) * 0.85


def _units(**spellings: dict) -> object:
    assert REG.units is not None
    now = REG.units.spellings.model_dump()
    return REG.units.model_copy(update={"spellings": REG.units.spellings.model_copy(update={**now, **spellings})})


def test_an_export_reads_as_the_published_equation_on_every_path(capsys: pytest.CaptureFixture[str]) -> None:
    by_solve = solve(2, EXPORT, variant="published")
    by_tool = call(REG, 2, EXPORT, variant="published")
    code, out, _ = run(capsys, "solve", "--calculator", "2", "--entities", json.dumps(EXPORT), "--format", "json")
    by_cli = json.loads(out)
    assert code == 0
    for value in (by_solve.value, by_tool.value, by_cli["value"]):
        assert value == pytest.approx(EXPORT_VALUE, rel=2e-4)
    assert by_cli["read_as"] == by_solve.model_dump(mode="json")["read_as"] == by_tool.model_dump(mode="json")["read_as"]


def test_the_record_keeps_each_value_as_given_and_as_read() -> None:
    rec = solve(2, EXPORT, variant="published")
    read = {(r.input, r.what): (r.given, r.read) for r in rec.read_as}
    assert read == {("sex", "name"): ("SEX", "sex"), ("sex", "option"): ("f", "Female"),
                    ("age", "unit"): ([53, "yrs"], [53, "years"]), ("weight", "unit"): ([191.8, "lb"], [191.8, "lbs"]),
                    ("creatinine", "unit"): ([122.9, "umol/L"], [122.9, "µmol/L"])}
    assert rec.inputs["weight"].given == [191.8, "lb"] and rec.inputs["weight"].unit == "kg"
    assert rec.entities["creatinine"] == [122.9, "µmol/L"]  # what was computed with, in the registry's spelling
    assert "weight: [191.8, 'lb'] read as [191.8, 'lbs'] (unit)" in rec.warnings


@pytest.mark.parametrize("given,expected", [
    ([150, "lb"], 150 * 0.45359237), ([150, "LB"], 150 * 0.45359237), ([150, "pounds"], 150 * 0.45359237),
    ([68.04, "kgs"], 68.04), ([68040, "g"], 68.04),
])
def test_weights_in_export_spellings_read_with_independent_factors(given: list, expected: float) -> None:
    res = compute("body-mass-index", {"weight": given, "height": [1.75, "m"]}, variant="published")
    assert res.inputs["weight"].value == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("unit", ["umol/L", "UMOL/L", "mcmol/L", "µmol/l", "\u03bcmol/L"])
def test_creatinine_in_micromoles_reads_as_88_4_per_mg_dl(unit: str) -> None:
    res = compute(2, {**CG, "creatinine": [122.9, unit]}, variant="published")
    assert res.inputs["creatinine"].value == pytest.approx(122.9 / 88.4, rel=2e-4)


@pytest.mark.parametrize("code,factor", [("M", 1), ("m", 1), ("male", 1), ("MALE", 1), ("F", 0.85), ("female", 0.85)])
def test_sex_codes_read_as_options(code: str, factor: float) -> None:
    assert compute(2, {**CG, "sex": code}, variant="published").value == pytest.approx(CG_MALE * factor, rel=1e-4)


@pytest.mark.parametrize("code", ["1", "0", "yes", "X", 1])
def test_a_choice_takes_no_code_its_meaning_does_not_allow(code: object) -> None:
    with pytest.raises(BadValue, match="'sex'"):
        compute(2, {**CG, "sex": code}, variant="published")


@pytest.mark.parametrize("given,met", [("yes", True), ("Y", True), ("1", True), (1, True), ("no", False), ("N", False),
                                       (0, False), ("False", False)])
def test_yes_no_codes_read_as_booleans(given: object, met: bool) -> None:
    ents = {"Heart Rate or Pulse": [80, "beats per minute"], "Hemoptysis": given}
    base = compute("wells-pe", {**ents, "Hemoptysis": False}).value
    assert compute("wells-pe", ents).value == base + (1 if met else 0)  # Wells 2000: hemoptysis scores 1


def test_a_unit_alias_that_could_mean_two_units_is_refused_with_both() -> None:
    units = _units(units={"cc": "mL", "CC": "cm^3"})
    spec = Input(name="volume", kind=InputKind.measurement, unit="mL", accepted_units=["mL", "cm^3"])
    calc = REG.get(6).model_copy(update={"inputs": [spec]})
    with pytest.raises(AmbiguousValue) as info:
        clean(calc, converter(units, True), {"volume": [5, "cc"]})  # type: ignore[arg-type]
    assert "'volume'" in str(info.value) and "'cc' could mean 'mL' or 'cm^3'" in str(info.value)


def test_a_code_that_could_mean_two_options_is_refused_with_both() -> None:
    spec = Input(name="grade", kind=InputKind.choice, options=["Male", "Moderate"], codes={"m": "Moderate"})
    calc = REG.get(6).model_copy(update={"inputs": [spec]})
    with pytest.raises(AmbiguousValue, match="'M' could mean 'Moderate' or 'Male'"):
        clean(calc, converter(REG.units, True), {"grade": "M"})  # type: ignore[arg-type]
    assert clean(calc, converter(REG.units, True), {"grade": "moderate"}).entities == {"grade": "Moderate"}


def test_the_converter_reads_aliases_for_a_column_of_units() -> None:
    """A table adapter converts each distinct unit with the library's converter: it reads the aliases too."""
    conv = converter(REG.units, True)  # type: ignore[arg-type]
    accepted = ["mg/dL", "µmol/L", "mmol/L"]
    assert [conv.read_unit(u, accepted) for u in ("umol/L", "mg/dl", "MMOL/L", "g/L")] == \
        ["µmol/L", "mg/dL", "mmol/L", "g/L"]  # one it cannot read comes back for the caller to refuse
    assert conv.concentration(122.9, conv.read_unit("umol/L", accepted), "mg/dL", 113.12, None) == \
        pytest.approx(122.9 / 88.4, rel=2e-4)


def test_a_conversion_reads_aliases_itself() -> None:
    """An adapter that hands the unit as written straight to the converter gets the same reading."""
    conv = converter(REG.units, True)  # type: ignore[arg-type]
    assert conv.concentration(122.9, "umol/l", "mg/dL", 113.12, None) == pytest.approx(122.9 / 88.4, rel=2e-4)
    assert conv.weight_kg(150, "lb") == pytest.approx(150 * 0.45359237, rel=1e-5)
