"""Benign programs in the style of clinical calculators must return exactly the right value.

Every expected value is computed here with plain Python (or by hand), outside
the executor, from the same inputs.
"""
from __future__ import annotations

import datetime as dt
import math
from textwrap import dedent

import pytest

from solver.executor import Executor, Outcome, run_program

D = dt.date
TD = dt.timedelta


def _program(body: str) -> str:
    return dedent(body).strip("\n") + "\n"


# (id, program, expected value)
CASES: list[tuple[str, str, object]] = [
    (
        "due_date_naegele",
        """
        import datetime
        def solve():
            lmp = datetime.date(2021, 3, 15)
            cycle = 28
            return lmp + datetime.timedelta(days=280) + datetime.timedelta(days=cycle - 28)
        """,
        D(2021, 12, 20),  # by hand: 280 days after 15 March 2021
    ),
    (
        "due_date_long_cycle",
        """
        from datetime import date, timedelta
        def solve():
            lmp = date(2022, 1, 10)
            cycle_length = 32
            return lmp + timedelta(days=280 + (cycle_length - 28))
        """,
        D(2022, 10, 21),  # by hand: 284 days after 10 January 2022
    ),
    (
        "conception_date",
        """
        import datetime
        def solve():
            lmp = datetime.date(2023, 2, 20)
            cycle = 30
            return lmp + datetime.timedelta(days=14 + cycle - 28)
        """,
        D(2023, 2, 20) + TD(days=16),
    ),
    (
        "gestational_age_tuple",
        """
        import datetime
        def solve():
            lmp = datetime.date(2023, 1, 5)
            today = datetime.date(2023, 8, 17)
            days = (today - lmp).days
            return divmod(days, 7)
        """,
        divmod((D(2023, 8, 17) - D(2023, 1, 5)).days, 7),
    ),
    (
        "gestational_age_from_due_date",
        """
        from datetime import date
        def solve():
            due = date(2024, 5, 1)
            visit = date(2024, 1, 15)
            elapsed = 280 - (due - visit).days
            weeks = elapsed // 7
            days = elapsed % 7
            return (weeks, days)
        """,
        ((280 - (D(2024, 5, 1) - D(2024, 1, 15)).days) // 7, (280 - (D(2024, 5, 1) - D(2024, 1, 15)).days) % 7),
    ),
    (
        "due_date_strptime",
        """
        from datetime import datetime, timedelta
        def solve():
            lmp = datetime.strptime("03/15/2021", "%m/%d/%Y")
            return (lmp + timedelta(days=280)).date()
        """,
        D(2021, 12, 20),
    ),
    (
        "due_date_datetime_midnight",
        """
        import datetime
        def solve():
            lmp = datetime.datetime(2020, 2, 29)
            return lmp + datetime.timedelta(days=280)
        """,
        D(2020, 2, 29) + TD(days=280),  # a datetime at midnight is reported as its date
    ),
    (
        "module_and_class_share_a_name",
        """
        import datetime
        from datetime import datetime, timedelta
        def solve():
            lmp = datetime.strptime("07/04/2022", "%m/%d/%Y")
            return (lmp + timedelta(days=280)).date()
        """,
        D(2022, 7, 4) + TD(days=280),
    ),
    (
        "qtc_bazett",
        """
        import math
        def solve():
            qt = 400
            heart_rate = 75
            rr = 60 / heart_rate
            return qt / math.sqrt(rr)
        """,
        400 / math.sqrt(60 / 75),
    ),
    (
        "qtc_fridericia",
        """
        def solve():
            qt, hr = 380, 92
            rr = 60 / hr
            return qt / rr ** (1 / 3)
        """,
        380 / (60 / 92) ** (1 / 3),
    ),
    (
        "qtc_framingham",
        """
        def solve():
            qt = 410
            rr = 60 / 68
            return qt + 154 * (1 - rr)
        """,
        410 + 154 * (1 - 60 / 68),
    ),
    (
        "bmi",
        """
        def solve():
            weight_kg = 82.5
            height_cm = 176
            return weight_kg / (height_cm / 100) ** 2
        """,
        82.5 / (176 / 100) ** 2,
    ),
    (
        "bsa_mosteller",
        """
        import math
        def solve():
            return math.sqrt(170 * 70 / 3600)
        """,
        math.sqrt(170 * 70 / 3600),
    ),
    (
        "ckd_epi_2021_female",
        """
        import math
        def solve():
            scr, age, female = 1.1, 63, True
            kappa = 0.7 if female else 0.9
            alpha = -0.241 if female else -0.302
            egfr = 142 * min(scr / kappa, 1) ** alpha * max(scr / kappa, 1) ** -1.200 * 0.9938 ** age
            if female:
                egfr *= 1.012
            return egfr
        """,
        142 * min(1.1 / 0.7, 1) ** -0.241 * max(1.1 / 0.7, 1) ** -1.200 * 0.9938**63 * 1.012,
    ),
    (
        "mdrd",
        """
        def solve():
            scr, age = 1.4, 70
            gfr = 175 * scr ** -1.154 * age ** -0.203
            gfr = gfr * 0.742
            return round(gfr, 2)
        """,
        round(175 * 1.4**-1.154 * 70**-0.203 * 0.742, 2),
    ),
    (
        "cockcroft_gault",
        """
        def solve():
            age, weight, scr, sex = 58, 64.0, 0.9, "female"
            crcl = (140 - age) * weight / (72 * scr)
            if sex == "female":
                crcl = crcl * 0.85
            return crcl
        """,
        (140 - 58) * 64.0 / (72 * 0.9) * 0.85,
    ),
    (
        "anion_gap",
        """
        def solve():
            sodium, chloride, bicarbonate = 138, 101, 22
            return sodium - (chloride + bicarbonate)
        """,
        138 - (101 + 22),
    ),
    (
        "albumin_corrected_anion_gap",
        """
        def solve():
            ag = 140 - (104 + 18)
            albumin = 2.6
            return ag + 2.5 * (4 - albumin)
        """,
        (140 - (104 + 18)) + 2.5 * (4 - 2.6),
    ),
    (
        "delta_ratio",
        """
        def solve():
            ag = 141 - (100 + 14)
            return (ag - 12) / (24 - 14)
        """,
        ((141 - (100 + 14)) - 12) / (24 - 14),
    ),
    (
        "corrected_calcium",
        """
        def solve():
            calcium, albumin = 8.1, 2.9
            return calcium + 0.8 * (4.0 - albumin)
        """,
        8.1 + 0.8 * (4.0 - 2.9),
    ),
    (
        "serum_osmolality",
        """
        def solve():
            na, bun, glucose = 135, 28, 180
            return 2 * na + bun / 2.8 + glucose / 18
        """,
        2 * 135 + 28 / 2.8 + 180 / 18,
    ),
    (
        "mean_arterial_pressure",
        """
        def solve():
            sbp, dbp = 128, 76
            return (2 * dbp + sbp) / 3
        """,
        (2 * 76 + 128) / 3,
    ),
    (
        "curb65_banded",
        """
        def solve():
            confusion = False
            bun = 24
            rr = 31
            sbp, dbp = 88, 62
            age = 71
            score = 0
            if confusion:
                score += 1
            if bun > 19:
                score += 1
            if rr >= 30:
                score += 1
            if sbp < 90 or dbp <= 60:
                score += 1
            if age >= 65:
                score += 1
            return score
        """,
        4,  # by hand: BUN, RR, SBP, age
    ),
    (
        "cha2ds2_vasc_dict",
        """
        def solve():
            points = {"chf": 1, "htn": 1, "age75": 2, "dm": 1, "stroke": 2, "vascular": 1, "age65": 1, "female": 1}
            present = ["htn", "dm", "age65", "female"]
            return sum([points[k] for k in present])
        """,
        1 + 1 + 1 + 1,
    ),
    (
        "wells_pe_floats",
        """
        def solve():
            criteria = [("dvt_signs", True, 3.0), ("pe_likely", True, 3.0), ("hr_gt_100", False, 1.5),
                        ("immobilisation", True, 1.5), ("previous", False, 1.5), ("haemoptysis", False, 1.0),
                        ("malignancy", True, 1.0)]
            total = 0.0
            for name, present, pts in criteria:
                if present:
                    total += pts
            return total
        """,
        3.0 + 3.0 + 1.5 + 1.0,
    ),
    (
        "centor_age_bands",
        """
        def solve():
            age = 12
            score = 2
            if age < 15:
                score += 1
            elif age >= 45:
                score -= 1
            return score
        """,
        3,
    ),
    (
        "glasgow_coma_scale",
        """
        def solve():
            eye, verbal, motor = 3, 4, 5
            return eye + verbal + motor
        """,
        12,
    ),
    (
        "ibw_and_adjusted_weight",
        """
        def ideal_body_weight(height_in, male):
            base = 50.0 if male else 45.5
            return base + 2.3 * (height_in - 60)
        def solve():
            height_in = 70
            weight = 110.0
            ibw = ideal_body_weight(height_in, True)
            return ibw + 0.4 * (weight - ibw)
        """,
        (50.0 + 2.3 * (70 - 60)) + 0.4 * (110.0 - (50.0 + 2.3 * (70 - 60))),
    ),
    (
        "maintenance_fluids_4_2_1",
        """
        def solve():
            weight = 27
            if weight <= 10:
                rate = 4 * weight
            elif weight <= 20:
                rate = 40 + 2 * (weight - 10)
            else:
                rate = 60 + (weight - 20)
            return rate
        """,
        60 + (27 - 20),
    ),
    (
        "steroid_conversion",
        """
        def solve():
            prednisone_mg = 40
            equivalents = {"prednisone": 5.0, "dexamethasone": 0.75, "hydrocortisone": 20.0}
            return prednisone_mg / equivalents["prednisone"] * equivalents["dexamethasone"]
        """,
        40 / 5.0 * 0.75,
    ),
    (
        "free_water_deficit",
        """
        def solve():
            weight, sodium = 70, 155
            tbw = 0.6 * weight
            return tbw * (sodium / 140 - 1)
        """,
        0.6 * 70 * (155 / 140 - 1),
    ),
    (
        "ldl_friedewald",
        """
        def solve():
            total, hdl, tg = 210, 45, 150
            return total - hdl - tg / 5
        """,
        210 - 45 - 150 / 5,
    ),
    (
        "meld_log_clamped",
        """
        import math
        def clamp(x, lo):
            return max(x, lo)
        def solve():
            bili, inr, cr = 2.3, 1.7, 0.8
            bili, inr, cr = clamp(bili, 1.0), clamp(inr, 1.0), min(clamp(cr, 1.0), 4.0)
            meld = 3.78 * math.log(bili) + 11.2 * math.log(inr) + 9.57 * math.log(cr) + 6.43
            return round(meld)
        """,
        round(3.78 * math.log(2.3) + 11.2 * math.log(1.7) + 9.57 * math.log(1.0) + 6.43),
    ),
    (
        "child_pugh_match",
        """
        def points_for_bilirubin(b):
            match b:
                case x if x < 2:
                    return 1
                case x if x <= 3:
                    return 2
                case _other:
                    return 3
        def solve():
            return points_for_bilirubin(2.5) + 1 + 2
        """,
        5,  # by hand: 2.5 is in (2, 3], 2 points; 2 + 1 + 2.  `_other` is rejected under `paper`
    ),
    (
        "calendar_month_days",
        """
        import calendar
        def solve():
            first_weekday, days = calendar.monthrange(2024, 2)
            return days + (1 if calendar.isleap(2024) else 0)
        """,
        29 + 1,
    ),
    (
        "helpers_sorted_lambda_try",
        """
        import math
        def solve():
            readings = [("a", 7.2), ("b", 6.9), ("c", 7.41)]
            ordered = sorted(readings, key=lambda r: r[1], reverse=True)
            try:
                ratio = ordered[0][1] / 0
            except ZeroDivisionError:
                ratio = math.floor(ordered[0][1] * 100) / 100
            return ratio
        """,
        math.floor(7.41 * 100) / 100,
    ),
    (
        "fenced_model_reply",
        """
        Here is the program:

        ```python
        import math
        def solve():
            hr = 60
            qt = 440
            return qt / math.sqrt(60 / hr)
        ```
        The answer is printed by the executor.
        """,
        440 / math.sqrt(60 / 60),
    ),
    (
        "print_is_discarded",
        """
        def solve():
            for i in range(3):
                print("intermediate", i)
            return 2 ** 10
        """,
        1024,
    ),
]

BENIGN = [(cid, _program(src), expected) for cid, src, expected in CASES if expected is not None]


def _assert_matches(outcome: Outcome, expected: object) -> None:
    assert outcome.kind == "value", outcome
    if isinstance(expected, float):
        assert type(outcome.value) is float
        assert math.isclose(outcome.value, expected, rel_tol=1e-12, abs_tol=0.0), (outcome.value, expected)
    else:
        assert type(outcome.value) is type(expected)
        assert outcome.value == expected


def test_there_are_at_least_30_benign_programs() -> None:
    assert len(BENIGN) >= 30


@pytest.mark.parametrize("source, expected", [c[1:] for c in BENIGN], ids=[c[0] for c in BENIGN])
def test_benign_program_returns_exact_value(source: str, expected: object) -> None:
    _assert_matches(run_program(source), expected)  # the default policy, `clinical`


# Programs here that use a construct Table 17 rejects (see the last test).
PAPER_REJECTS = {"child_pugh_match"}
PAPER_BENIGN = [c for c in BENIGN if c[0] not in PAPER_REJECTS]


@pytest.mark.parametrize("source, expected", [c[1:] for c in PAPER_BENIGN], ids=[c[0] for c in PAPER_BENIGN])
def test_benign_program_returns_exact_value_under_paper(source: str, expected: object) -> None:
    _assert_matches(run_program(source, policy="paper"), expected)


def test_batch_matches_one_by_one() -> None:
    sources = [c[1] for c in BENIGN]
    with Executor(workers=2) as executor:
        outcomes = executor.map(sources)
    assert len(outcomes) == len(BENIGN)
    for outcome, (_, _, expected) in zip(outcomes, BENIGN):
        _assert_matches(outcome, expected)


def test_underscore_names_are_rejected_under_paper_and_accepted_under_clinical() -> None:
    cases = {c[0]: (c[1], c[2]) for c in CASES}
    source, expected = cases["child_pugh_match"]
    outcome = run_program(_program(source), policy="paper")
    assert outcome.kind == "rejected"
    assert "_other" in outcome.detail
    _assert_matches(run_program(_program(source), policy="clinical"), expected)


# Honest code `clinical` accepts beyond the paper's lists (issue 23): the calendar module's public
# constants, pure string methods, and a fence tagged with the Python version.
CLINICAL_EXTRAS: list[tuple[str, str, object]] = [
    (
        "calendar_weekday_constant",
        """
        import calendar
        def solve():
            # days from Wednesday 3 March 2021 to the next Monday, plus 10 x WEDNESDAY
            return (calendar.MONDAY - calendar.weekday(2021, 3, 3)) % 7 + 10 * calendar.WEDNESDAY
        """,
        5 + 10 * 2,  # by hand: Wed -> Mon is 5 days; calendar.WEDNESDAY is 2 (calendar docs)
    ),
    (
        "calendar_month_constants_from_import",
        """
        from calendar import DECEMBER, JANUARY, SUNDAY, monthrange
        def solve():
            return monthrange(2024, DECEMBER)[1] + JANUARY + SUNDAY
        """,
        31 + 1 + 6,  # December has 31 days; JANUARY is 1, SUNDAY is 6 (calendar docs)
    ),
    (
        "zfill_rjust_ljust_center",
        """
        import datetime
        def solve():
            day = datetime.date.fromisoformat("2021-" + "3".zfill(2) + "-" + "7".rjust(2, "0"))
            return day + datetime.timedelta(days=len("ab".ljust(4, ".") + "x".center(5, "-")))
        """,
        D(2021, 3, 7) + TD(days=4 + 5),  # "ab.." and "--x--"
    ),
    (
        "partition_removeprefix_casefold",
        """
        def solve():
            head, _, tail = "120/80 mmHg".partition("/")
            return int(head) + int(tail.removesuffix(" mmHg")) + len("MALE".casefold())
        """,
        120 + 80 + 4,
    ),
]


@pytest.mark.parametrize("source, expected", [c[1:] for c in CLINICAL_EXTRAS], ids=[c[0] for c in CLINICAL_EXTRAS])
def test_clinical_accepts_calendar_constants_and_string_methods(source: str, expected: object) -> None:
    _assert_matches(run_program(_program(source), policy="clinical"), expected)


def test_paper_still_rejects_string_padding_as_formatting() -> None:
    outcome = run_program(_program(CLINICAL_EXTRAS[2][1]), policy="paper")
    assert outcome.kind == "rejected" and "zfill" in outcome.detail


def test_fence_tagged_with_a_python_version_is_the_program() -> None:
    reply = "Here is the program:\n\n```python3.11\ndef solve():\n    return 2 + 3\n```\n"
    _assert_matches(run_program(reply), 5)
