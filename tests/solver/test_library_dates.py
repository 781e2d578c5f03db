"""Pregnancy dating: due date, conception date, gestational age. Deviation, invariants and bad input."""
from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.library import BadValue, MissingInput, OutOfRange, UnknownInput, compute
from tests.solver.helpers import raises_calc_error

FAST = settings(max_examples=60, deadline=None)
EDD, EDC, GA = "estimated-due-date", "estimated-conception-date", "estimated-gestational-age"
dates = st.dates(min_value=dt.date(1950, 1, 1), max_value=dt.date(2090, 12, 31))


def s(d: dt.date) -> str:
    return d.strftime("%m/%d/%Y")


# ----------------------------------------------------------------------------- (a) deviation


@pytest.mark.deviation("estimated-gestational-age", "absolute-date-difference")
def test_gestational_age_before_lmp_benchmark_absolute_published_refuses():
    ents = {"Current Date": "01/01/2020", "Last menstrual date": "01/24/2020"}  # 23 days before the LMP
    assert compute(GA, ents, variant="benchmark").value == (3, 2)  # |-23| days = 3 weeks 2 days
    with pytest.raises(OutOfRange) as e:
        compute(GA, ents, variant="published")
    assert (e.value.calculator, e.value.variable) == (GA, "Current Date")


# ----------------------------------------------------------------------------- hand-computed values


def test_due_date_by_hand():
    # 02/24/2000 + 280 days = 11/30/2000; cycle 30 adds 2 days
    ents = {"cycle length": 30, "Last menstrual date": "02/24/2000"}
    for variant in ("benchmark", "published"):
        assert compute(EDD, ents, variant=variant).value == dt.date(2000, 12, 2)
    assert compute(EDD, {"cycle length": 21, "Last menstrual date": "1/1/2021"},
                   variant="benchmark").value == dt.date(2021, 10, 1)  # +273 days


def test_conception_and_gestational_age_by_hand():
    assert compute(EDC, {"Last menstrual date": "12/25/2016"}, variant="benchmark").value == dt.date(2017, 1, 8)
    # 12/23/2020 -> 08/21/2021 is 241 days = 34 weeks 3 days
    assert compute(GA, {"Current Date": "08/21/2021", "Last menstrual date": "12/23/2020"}, variant="benchmark").value == (34, 3)


# ----------------------------------------------------------------------------- (b) invariants


@FAST
@given(lmp=dates, cycle=st.integers(min_value=20, max_value=45))
def test_due_date_is_forty_weeks_shifted_by_cycle(lmp, cycle):
    due = compute(EDD, {"cycle length": cycle, "Last menstrual date": s(lmp)}, variant="benchmark").value
    assert (due - lmp).days == 280 + cycle - 28
    conception = compute(EDC, {"Last menstrual date": s(lmp)}, variant="benchmark").value
    assert (conception - lmp).days == 14
    if cycle == 28:  # at the due date of a 28-day cycle the pregnancy is 40 weeks 0 days
        assert compute(GA, {"Current Date": s(due), "Last menstrual date": s(lmp)}, variant="published").value == (40, 0)


@FAST
@given(lmp=dates, days=st.integers(min_value=0, max_value=315), variant=st.sampled_from(["benchmark", "published"]))
def test_gestational_age_counts_weeks_and_days(lmp, days, variant):
    today = lmp + dt.timedelta(days=days)
    w, d = compute(GA, {"Current Date": s(today), "Last menstrual date": s(lmp)}, variant=variant).value
    assert 0 <= d < 7
    assert w * 7 + d == days


def test_gestation_beyond_plausible_is_refused_as_published_and_warned_as_benchmark():
    # a last period ten years ago: the registry's gestation-range rule (0-45 weeks)
    ents = {"Current Date": "01/01/2030", "Last menstrual date": "03/01/2020"}
    with pytest.raises(OutOfRange, match="gestation-range"):
        compute(GA, ents, variant="published")
    r = compute(GA, ents, variant="benchmark")
    assert r.value[0] > 500 and any("gestation-range" in w for w in r.warnings)
    assert compute(GA, {"Current Date": "01/01/2030", "Last menstrual date": "10/01/2029"}, variant="benchmark").warnings == []


# ----------------------------------------------------------------------------- (c) bad input


@pytest.mark.parametrize("slug, ents, error, variable", [
    (EDD, {"Last menstrual date": "01/01/2020"}, MissingInput, "cycle length"),
    (EDD, {"cycle length": 28}, MissingInput, "Last menstrual date"),
    (EDD, {"cycle length": "28", "Last menstrual date": "01/01/2020"}, BadValue, "cycle length"),
    (EDD, {"cycle length": 28.5, "Last menstrual date": "01/01/2020"}, BadValue, "cycle length"),
    (EDD, {"cycle length": [28, "days"], "Last menstrual date": "01/01/2020"}, BadValue, "cycle length"),
    (EDD, {"cycle length": 5, "Last menstrual date": "01/01/2020"}, OutOfRange, "cycle length"),
    (EDD, {"cycle length": 28, "Last menstrual date": "2020-01-01"}, BadValue, "Last menstrual date"),
    (EDD, {"cycle length": 28, "Last menstrual date": "02/30/2020"}, BadValue, "Last menstrual date"),
    (EDD, {"cycle length": 28, "Last menstrual date": "01/01/2020", "parity": 1}, UnknownInput, "parity"),
    (EDC, {}, MissingInput, "Last menstrual date"),
    (EDC, {"Last menstrual date": 20200101}, BadValue, "Last menstrual date"),
    (EDC, {"Last Menstrual Date": "01/01/2020"}, UnknownInput, "Last Menstrual Date"),
    (GA, {"Last menstrual date": "01/01/2020"}, MissingInput, "Current Date"),
    (GA, {"Current Date": "13/01/2020", "Last menstrual date": "01/01/2020"}, BadValue, "Current Date"),
])
def test_bad_input_is_refused(slug, ents, error, variable):
    for variant in ("benchmark", "published"):
        raises_calc_error(error, slug, ents, variable, variant)
