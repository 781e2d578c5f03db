"""The benchmark's scoring rules, on hand-made rows."""
import datetime as dt

from solver.scoring import is_correct, parse_gestational_age


def test_decimal_window_is_inclusive() -> None:
    assert is_correct(95.0, 100.0, 95.0, 105.0)
    assert is_correct(105.0, 100.0, 95.0, 105.0)
    assert not is_correct(105.00001, 100.0, 95.0, 105.0)


def test_negative_window_with_swapped_limits() -> None:
    assert is_correct(-10.2, -10.0, -10.5, -9.5)
    assert is_correct(-10.2, -10.0, -9.5, -10.5)


def test_exact_categories() -> None:
    assert is_correct(3, 3, 3, 3)
    assert not is_correct(4, 3, 3, 3)
    assert is_correct(1.5, 1.5, 1.5, 1.5)


def test_dates_and_gestational_age() -> None:
    assert is_correct(dt.date(2024, 2, 29), "02/29/2024", "02/29/2024", "02/29/2024")
    assert not is_correct(dt.date(2024, 3, 1), "02/29/2024", "02/29/2024", "02/29/2024")
    assert is_correct((39, 2), ["39 weeks", "2 days"], None, None)
    assert not is_correct((39, 3), ["39 weeks", "2 days"], None, None)
    assert parse_gestational_age("('4 weeks', '6 days')") == (4, 6)


def test_non_answers_are_wrong() -> None:
    for bad in (None, True, float("nan"), float("inf"), "3"):
        assert not is_correct(bad, 3, 3, 3)
