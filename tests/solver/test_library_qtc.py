"""QT corrections (Bazett, Fridericia, Framingham, Hodges, Rautaharju): invariants and bad input.

None of the five has a recorded deviation: the benchmark's only departure is rounding RR to five
decimals, which the published variant skips. Rautaharju's QTcMod = QT x (120 + HR) / 180 is one formula
for both sexes in its 2014 publication (the sex-specific part is the threshold), as the benchmark computes it.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.library import BadValue, CalculatorError, MissingInput, OutOfRange, UnknownInput, UnknownUnit, compute

FAST = settings(max_examples=50, deadline=None)
SLUGS = ["qtc-bazett", "qtc-fridericia", "qtc-framingham", "qtc-hodges", "qtc-rautaharju"]


def ents(hr, qt):
    return {"Heart Rate or Pulse": [hr, "beats per minute"], "QT Interval": [qt, "msec"]}


# ----------------------------------------------------------------------------- hand-computed values

# HR 75 -> RR 0.8 s exactly, QT 400 ms
HAND = {
    "qtc-bazett": 400 / math.sqrt(0.8),  # 447.21
    "qtc-fridericia": 400 / 0.8 ** (1 / 3),  # 430.89
    "qtc-framingham": 400 + 154 * (1 - 0.8),  # 430.8
    "qtc-hodges": 400 + 1.75 * (75 - 60),  # 426.25
    "qtc-rautaharju": 400 * (120 + 75) / 180,  # 433.33
}


@pytest.mark.parametrize("slug", SLUGS)
@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_hand_computed(slug, variant):
    assert compute(slug, ents(75, 400), variant=variant).value == pytest.approx(HAND[slug], abs=1e-5)


@pytest.mark.deviation("qtc-hodges", "heart-rate-from-rounded-rr")
def test_hodges_published_uses_heart_rate_directly():
    # HR 101: the benchmark rounds RR = 0.594059... to 0.59406 and uses 60 / 0.59406 = 100.9999
    bench = compute("qtc-hodges", ents(101, 280), variant="benchmark").value
    pub = compute("qtc-hodges", ents(101, 280), variant="published").value
    assert pub == pytest.approx(280 + 1.75 * 41, abs=1e-5)  # 351.75
    assert bench == pytest.approx(351.74982, abs=1e-5)
    assert 0 < pub - bench < 1e-3


# ----------------------------------------------------------------------------- (b) invariants

hr_s = st.integers(min_value=30, max_value=200)
qt_s = st.integers(min_value=200, max_value=700)


@FAST
@given(qt=qt_s, variant=st.sampled_from(["benchmark", "published"]))
def test_qtc_equals_qt_at_sixty_beats(qt, variant):
    for slug in SLUGS:
        assert compute(slug, ents(60, qt), variant=variant).value == pytest.approx(qt, abs=1e-5)


@FAST
@given(hr=hr_s, qt=qt_s, variant=st.sampled_from(["benchmark", "published"]))
def test_correction_direction_follows_heart_rate(hr, qt, variant):
    for slug in SLUGS:
        v = compute(slug, ents(hr, qt), variant=variant).value
        if hr > 60:
            assert v > qt
        elif hr < 60:
            assert v < qt


@FAST
@given(hr=hr_s, qt=qt_s, extra=st.integers(min_value=1, max_value=100))
def test_monotone_in_qt(hr, qt, extra):
    for slug in SLUGS:
        assert compute(slug, ents(hr, qt + extra), variant="benchmark").value > compute(slug, ents(hr, qt), variant="benchmark").value


@FAST
@given(hr=hr_s, qt=qt_s)
def test_benchmark_and_published_agree_to_rounding(hr, qt):
    for slug in SLUGS:
        a = compute(slug, ents(hr, qt), variant="benchmark").value
        b = compute(slug, ents(hr, qt), variant="published").value
        assert a == pytest.approx(b, rel=1e-4)


# ----------------------------------------------------------------------------- (c) bad input


@pytest.mark.parametrize("slug", SLUGS)
@pytest.mark.parametrize("change, error, variable", [
    ({"QT Interval": None}, MissingInput, "QT Interval"),
    ({"Heart Rate or Pulse": None}, MissingInput, "Heart Rate or Pulse"),
    ({"RR interval": [0.8, "s"]}, UnknownInput, "RR interval"),
    ({"Heart Rate or Pulse": [75, "bpm"]}, UnknownUnit, "Heart Rate or Pulse"),
    ({"QT Interval": [0.4, "s"]}, UnknownUnit, "QT Interval"),
    ({"QT Interval": ["400", "msec"]}, BadValue, "QT Interval"),
    ({"Heart Rate or Pulse": 75}, BadValue, "Heart Rate or Pulse"),
    ({"Heart Rate or Pulse": [0, "beats per minute"]}, OutOfRange, "Heart Rate or Pulse"),
    ({"Heart Rate or Pulse": [-60, "beats per minute"]}, OutOfRange, "Heart Rate or Pulse"),
    ({"QT Interval": [4000, "msec"]}, OutOfRange, "QT Interval"),
])
def test_bad_input_is_refused(slug, change, error, variable):
    e_ = ents(75, 400)
    for k, v in change.items():
        if v is None:
            e_.pop(k)
        else:
            e_[k] = v
    for variant in ("benchmark", "published"):
        with pytest.raises(error) as e:
            compute(slug, e_, variant=variant)
        assert isinstance(e.value, CalculatorError)
        assert (e.value.calculator, e.value.variable) == (slug, variable)
