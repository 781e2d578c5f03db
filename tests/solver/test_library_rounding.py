"""Rounding as registry data (issue 21): `solver.library.rounding` and every published calculator that rounds.

Expected scores are computed here from the published equations in exact decimal arithmetic
(`fractions.Fraction`), never from the library, so a tie is a tie and not float noise.
"""
from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest

from registry.loader import get_registry
from registry.texts import render
from solver.library import compute
from solver.library.rounding import Step, as_written, round_array, round_value

HALF_UP, HALF_EVEN = Step("half_up", 0), Step("half_even", 0)

# ------------------------------------------------------------------ the module


@pytest.mark.parametrize("x, decimals, up, even", [
    (20.5, 0, 21, 20), (16.5, 0, 17, 16), (21.5, 0, 22, 22), (-2.5, 0, -3, -2), (0.5, 0, 1, 0),
    (2.675, 2, 2.68, 2.67),   # 2.675 is stored just below the tie: half up reads it as the decimal 2.675
    (0.125, 2, 0.13, 0.12),   # an exact binary tie
    (1.33 + 9.84 + 3.33 + 6, 0, 21, 20),  # the MELD 3.0 sum, with whatever float noise it carries
    (20.49, 0, 20, 20), (20.51, 0, 21, 21), (0.0, 3, 0.0, 0.0),
])
def test_round_value_modes(x, decimals, up, even):
    assert round_value(x, Step("half_up", decimals)) == up
    assert round_value(x, Step("half_even", decimals)) == even


def test_a_value_a_hair_below_a_tie_is_read_as_the_tie_only_within_twelve_digits():
    assert round_value(20.5 - 1e-13, HALF_UP) == 21      # float noise: read as 20.5
    assert round_value(20.5 - 1e-9, HALF_UP) == 20       # a real difference: not a tie


def test_non_finite_values_pass_through_and_unknown_modes_are_refused():
    assert math.isnan(round_value(float("nan"), HALF_UP))
    assert round_value(float("inf"), HALF_EVEN) == float("inf")
    assert round_value(1e300, Step("half_up", 5)) == 1e300  # far beyond Decimal's default precision
    with pytest.raises(ValueError, match="unknown rounding mode"):
        round_value(1.5, Step("half_down", 0))
    with pytest.raises(ValueError, match="unknown rounding mode"):
        round_array(np.array([1.5]), Step("banker", 0))


@pytest.mark.parametrize("mode", ["half_up", "half_even"])
@pytest.mark.parametrize("decimals", [0, 1, 2, 5])
def test_round_array_equals_round_value_element_for_element(mode, decimals):
    rng = np.random.default_rng(21)
    ties = (np.arange(-400, 400) + 0.5) / 10 ** decimals          # every kind of tie at this precision
    noisy = ties + rng.choice([-1, 1], ties.size) * 1e-15 * np.abs(ties)
    x = np.concatenate([ties, noisy, rng.normal(0, 50, 400), [0.0, -0.0, 1e-7, 2.675, 0.125, np.nan, np.inf, -np.inf,
                                                               1e17]])
    rule = Step(mode, decimals)
    got = round_array(x, rule)
    want = np.array([round_value(v, rule) for v in x.tolist()])
    assert np.array_equal(got, want, equal_nan=True)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.float64).view(np.int64)


@pytest.mark.parametrize("decimals", [0, 1, 2, 3, 4, 6, 9])
def test_rows_near_a_half_are_decided_in_numpy_as_python_round_decides_them(decimals):
    """`python_ties`: the rows within 2e-6 of a half are rounded by the exact two-product, not by Python calls;
    every row must still be Python's `round(x, decimals)` to the bit (sign of zero included). The values are
    ties as stored (k + 0.5 over 10**decimals), their neighbours one and two doubles away, products of short
    decimals (2.3 x a height in inches with two decimals: ideal body weight), negatives, and exact binary ties."""
    from solver.library.rounding import rint_or_exact

    rng = np.random.default_rng(decimals)
    scale = 10.0 ** decimals
    ties = (rng.integers(-10 ** 6, 10 ** 6, 4000) + 0.5) / scale
    near = np.concatenate([np.nextafter(ties, np.inf), np.nextafter(ties, -np.inf),
                           np.nextafter(np.nextafter(ties, np.inf), np.inf)])
    products = 2.3 * (rng.integers(5000, 8000, 4000) / 100) - rng.integers(0, 60, 4000) / 1000
    binary = np.array([0.125, -0.125, 0.375, 2.5, -2.5, 0.5, -0.5, 1.5, 1 / 1024, -3 / 2048], dtype=float)
    x = np.concatenate([ties, near, products, -products, binary, binary / scale])
    calls: list[float] = []

    def exact(v: float) -> float:
        calls.append(v)
        return round(v, decimals)

    got = rint_or_exact(x.copy(), decimals, exact, python_ties=True)
    want = np.array([round(v, decimals) for v in x.tolist()])
    assert np.array_equal(_bits(got), _bits(want)), x[_bits(got) != _bits(want)][:5]
    assert not calls  # (nothing here is tiny, huge or infinite: no row went to Python)


# ------------------------------------------------------------------ MELD 3.0 (Kim 2021)

MELD3 = {"creatinine": [0.9, "mg/dL"], "Bilirubin": [0.8, "mg/dL"], "international normalized ratio": 1.0}


def meld3_exact(female: bool, na: int, alb: str) -> F:
    """Kim 2021's equation with creatinine, bilirubin and INR at or below 1 (their logarithms are 0)."""
    na_gap, alb_gap = 137 - max(min(na, 137), 125), F("3.5") - max(min(F(alb), F("3.5")), F("1.5"))
    return F("1.33") * female + F("0.82") * na_gap + F("1.85") * alb_gap + 6


@pytest.mark.parametrize("variant", ["benchmark", "published"])  # no benchmark exists: both follow the publication
@pytest.mark.parametrize("sex, na, alb, want", [("Female", 125, "1.7", 21), ("Male", 126, "2.7", 17)])
def test_meld3_rounds_half_up_at_the_tie(variant, sex, na, alb, want):
    raw = meld3_exact(sex == "Female", na, alb)
    assert raw == F(want * 2 - 1, 2)  # exactly 20.5 and 16.5: a tie
    got = compute("meld-3-0", {**MELD3, "Sodium": [na, "mEq/L"], "Albumin": [float(alb), "g/dL"], "sex": sex},
                  variant=variant).value
    assert got == want and isinstance(got, int)


def test_meld3_text_states_the_tie_rule():
    reg = get_registry()
    text = render(reg.calculators["meld-3-0"], calcs=reg.calculators, units=reg.units)
    assert "Round the score to the nearest whole number; a tie (x.5) goes up" in text


# ------------------------------------------------------------------ MELD Na (OPTN), two rounding steps

def test_meld_na_sodium_step_never_lands_on_a_tie():
    """MELD + 1.32 gap - 0.033 MELD gap with sodium to two decimals never ends in exactly .5 (checked exhaustively)."""
    for meld in range(12, 41):
        for hundredths in range(0, 1201):
            gap = F(hundredths, 100)
            assert (meld + F("1.32") * gap - F("0.033") * meld * gap).denominator != 2


@pytest.mark.deviation("meld-na", "rounding-ties")
def test_meld_na_first_step_tie_rounds_up_as_published_and_to_even_as_the_benchmark():
    # creatinine and bilirubin at 1 (ln 0); an INR chosen so that MELD(i) = 0.643 + 1.120 ln INR = 1.25
    inr = math.exp((1.25 - 0.643) / 1.120)
    ents = {"creatinine": [1.0, "mg/dL"], "Bilirubin": [1.0, "mg/dL"], "international normalized ratio": inr,
            "Sodium": [137, "mEq/L"]}
    assert compute("meld-na", ents, variant="published").value == 13   # 1.25 -> 1.3 -> 13
    assert compute("meld-na", ents, variant="benchmark").value == 12   # Python's round: 1.25 -> 1.2 -> 12


# ------------------------------------------------------------------ PSI: a fractional age

@pytest.mark.deviation("pneumonia-severity-index", "rounding-ties")
def test_psi_fractional_age_tie():
    ents = {"age": [60.5, "years"], "sex": "Female", "Partial pressure of oxygen": [90, "mm Hg"],
            "respiratory rate": [16, "breaths per minute"], "Systolic Blood Pressure": [120, "mm Hg"],
            "Temperature": [37, "degrees celsius"], "Heart Rate or Pulse": [80, "beats per minute"], "pH": 7.4,
            "Blood Urea Nitrogen (BUN)": [10, "mg/dL"], "Sodium": [140, "mmol/L"], "Glucose": [100, "mg/dL"],
            "Hematocrit": [45, "%"]}
    # Fine 1997: age in years, 10 points less for a woman; no finding present: 60.5 - 10 = 50.5
    assert compute("pneumonia-severity-index", ents, variant="published").value == 51
    assert compute("pneumonia-severity-index", ents, variant="benchmark").value == 50


# ------------------------------------------------------------------ the registry data itself

TIE_TESTS = {"meld-3-0", "meld-na", "pneumonia-severity-index"}  # each has a test at its tie above


def test_every_published_rounding_names_a_source_and_has_a_tie_test():
    reg = get_registry()
    rounding = {s for s, c in reg.calculators.items() if c.output.published_rounding is not None}
    assert rounding == TIE_TESTS
    for slug in rounding:
        rule = reg.calculators[slug].output.published_rounding
        assert rule.source and not rule.verified  # no source read states the tie direction


def test_integer_scores_without_a_published_rounding_only_sum_whole_points():
    """The other integer-rounded calculators give whole raw scores on every reference case, so no tie arises."""
    from solver.data import REFERENCE_CASES, read_cases
    from solver.library import CalculatorError
    from solver.library.context import Context
    from solver.library.core import _compute
    from solver.library.functions import FUNCTIONS

    reg = get_registry()
    slugs = {s for s, c in reg.calculators.items() if c.output.rounding == "integer" and s not in TIE_TESTS}
    seen: list[tuple[str, float]] = []
    for case in read_cases(REFERENCE_CASES):
        calc = reg.get(case.calculator_id)
        if calc.slug not in slugs:
            continue
        names = {i.name for i in calc.inputs}
        ents = {k: v for k, v in case.entities.items() if k in names}
        try:
            compute(calc.slug, ents, variant="published")
        except CalculatorError:
            continue
        raw = FUNCTIONS[calc.slug](Context(calc, ents, "published", reg, _compute))
        if float(raw) != int(raw):
            seen.append((calc.slug, raw))
    assert not seen


# ------------------------------------------------------------------ a conversion that lands on a band edge


def test_as_written_reads_a_converted_value_as_its_decimal():
    assert (89.6 - 32) / 1.8 == 31.999999999999996  # the float noise the published variant used to score
    assert as_written((89.6 - 32) / 1.8) == 32.0
    assert as_written(31.9999) == 31.9999 and as_written(0.0) == 0.0 and math.isnan(as_written(math.nan))


@pytest.mark.parametrize("fahrenheit, celsius", [(89.6, 32.0), (105.8, 41.0), (93.2, 34.0), (101.3, 38.5)])
def test_fahrenheit_on_an_apache_ii_temperature_edge_scores_the_band_of_its_celsius(fahrenheit, celsius):
    """89.6 degrees F is 32 degrees C by definition ((89.6 - 32) / 1.8), so 2 temperature points, as for 32 C
    (found by the clincalc differential test: exact float arithmetic gave 31.999999999999996 and 3 points)."""
    base = {"age": [40, "years"], "Systolic Blood Pressure": [120, "mm Hg"], "Diastolic Blood Pressure": [80, "mm Hg"],
            "Heart Rate or Pulse": [80, "beats per minute"], "respiratory rate": [16, "breaths per minute"],
            "FiO2": [21, "%"], "PaO2": [90, "mm Hg"], "pH": 7.4, "Sodium": [140, "mmol/L"], "Potassium": [4.0, "mmol/L"],
            "creatinine": [1.0, "mg/dL"], "Hematocrit": [40, "%"], "White blood cell count": [8000, "µL"],
            "Glasgow Coma Score": 15}
    for variant in ("published", "benchmark"):
        f = compute("apache-ii", {**base, "Temperature": [fahrenheit, "degrees fahrenheit"]}, variant=variant).value
        c = compute("apache-ii", {**base, "Temperature": [celsius, "degrees celsius"]}, variant=variant).value
        assert f == c, (variant, fahrenheit)
    points = {32.0: 2, 41.0: 4, 34.0: 1, 38.5: 1}[celsius]  # Knaus 1985 temperature rows, from each lower bound
    assert compute("apache-ii", {**base, "Temperature": [celsius, "degrees celsius"]}, variant="benchmark").value == points


def test_the_columnar_converter_reads_a_fahrenheit_column_as_the_scalar_converter_does():
    from solver.library.units import Converter
    from solver.library.vectorised import ArrayConverter

    units = get_registry().units
    temps = [89.6, 105.8, 93.2, 101.3, 98.6, 100.1, -40.0]
    column = ArrayConverter(units, exact=True).temperature_c(np.array(temps), "degrees fahrenheit")
    assert column.tolist() == [Converter(units, exact=True).temperature_c(t, "degrees fahrenheit") for t in temps]
    assert column[0] == 32.0 and column[-1] == -40.0
