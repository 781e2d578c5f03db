"""A calculator built on others (`Context.sub`): each dependency reads its own inputs from the caller's entities,
its refusals are reported against the calculator asked for, and the result records every input used."""
from __future__ import annotations

import pytest

from registry.loader import get_registry
from solver.library import OutOfRange, UnknownInput, UnknownUnit, compute
from solver.library.context import Context
from solver.library.core import _compute

CG = "creatinine-clearance-cockcroft-gault"
PATIENT = {"sex": "Male", "age": [50, "years"], "weight": [95, "kg"], "height": [170, "cm"],
           "creatinine": [1.0, "mg/dL"]}


@pytest.mark.parametrize("height, error", [([900, "cm"], OutOfRange), ([170, "furlong"], UnknownUnit)])
def test_a_refusal_inside_a_dependency_names_the_calculator_asked_for(height, error):
    with pytest.raises(error) as e:
        compute("adjusted-body-weight", {"sex": "Male", "weight": [80, "kg"], "height": height}, variant="benchmark")
    assert (e.value.calculator, e.value.variable) == ("adjusted-body-weight", "height")
    assert e.value.message.endswith("(while computing ideal-body-weight)")


def test_an_unknown_entity_is_refused_by_the_calculator_asked_for_not_passed_to_its_dependencies():
    with pytest.raises(UnknownInput) as e:
        compute(CG, {**PATIENT, "Albumin": [4, "g/dL"]}, variant="benchmark")
    assert (e.value.calculator, e.value.variable) == (CG, "Albumin")


def test_the_result_records_the_inputs_its_dependencies_used():
    r = compute(CG, PATIENT, variant="benchmark")  # BMI 32.9: the benchmark's rule takes adjusted body weight (ideal weight inside it)
    assert set(r.inputs) == set(PATIENT)
    assert r.inputs["weight"].value == 95 and r.inputs["creatinine"].value == 1.0


def test_a_dependency_does_not_see_its_callers_other_inputs_as_its_own():
    reg = get_registry()
    ctx = Context(reg.calculators["body-mass-index"], PATIENT, "benchmark", reg, _compute)
    assert ctx.has("weight") and not ctx.has("creatinine")  # given to the caller, not an input of BMI


HEAVY = {"sex": "Male", "age": [60, "years"], "weight": [400, "kg"], "height": [150, "cm"],
         "creatinine": [1.0, "mg/dL"]}  # BMI 177.8: implausible, but the published formula never reads BMI


def test_the_record_lists_the_sub_results_its_computation_used_not_every_declared_dependency():
    """Cockcroft-Gault as published uses actual weight: no BMI is computed, so none can refuse the answer."""
    from solver.router.core import solve

    assert compute(CG, HEAVY, variant="published").value == pytest.approx((140 - 60) * 400 / 72, abs=0.01)
    rec = solve(CG, HEAVY, variant="published")
    assert rec.value == compute(CG, HEAVY, variant="published").value and rec.sub_results == []
    bench = solve(CG, PATIENT, variant="benchmark")  # BMI 32.9: adjusted body weight, with the ideal weight inside it
    assert [s.calculator for s in bench.sub_results] == ["body-mass-index", "ideal-body-weight",
                                                         "adjusted-body-weight"]
    assert bench.sub_results[0].value == compute("body-mass-index", {k: PATIENT[k] for k in ("weight", "height")},
                                                 variant="benchmark").value


def test_formula_solve_answers_the_heavy_patient(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from cli.main import main

    assert main(["solve", "--calculator", "2", "--entities", json.dumps(HEAVY), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == pytest.approx(444.44, abs=0.01)
