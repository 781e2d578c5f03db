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


# ---------------------------------------------------------------------------- the pinned score()
import pytest  # noqa: E402

from solver.scoring import final_answer_line, read_answer, score  # noqa: E402


@pytest.mark.parametrize("answer,ok", [(63.6547, True), (70.3552, True), (63.65, False), (70.36, False),
                                       ("67.0", True), (None, False), ("abc", False), (float("nan"), False)])
def test_score_decimal_window(answer, ok):
    assert score(answer, "decimal", 67.00495, 63.6547, 70.3552) is ok


def test_score_integer_exact_and_dosage_window():
    assert score(3, "integer", 3, 3, 3) and score(3.0, "integer", 3, 3, 3)
    assert not score(4, "integer", 3, 3, 3) and not score(2.9999, "integer", 3, 3, 3)
    # the benchmark's dosage rows typed integer carry a +-5% window (steroid conversion, one-shot row)
    assert score(2.5, "integer", 2.47001, 2.34651, 2.59351) and not score(2.6, "integer", 2.47001, 2.34651, 2.59351)


def test_score_dates_same_day_both_spellings():
    assert score("01/21/2017", "date", "01/21/2017", "01/21/2017", "01/21/2017")
    assert score("2017-01-21", "date", "01/21/2017", None, None)
    assert score(dt.date(2017, 1, 21), "date", "01/21/2017", None, None)
    assert not score("01/22/2017", "date", "01/21/2017", None, None)
    assert not score("02/30/2017", "date", "01/21/2017", None, None) and not score(21, "date", "01/21/2017", None, None)


def test_score_gestational_age_tuple_and_benchmark_form():
    gold = "('34 weeks', '3 days')"
    assert score((34, 3), "date", gold, gold, gold) and score([34, 3], "date", ("34 weeks", "3 days"), None, None)
    assert score("34 weeks and 3 days", "gestational age", gold, None, None)
    assert not score((34, 4), "date", gold, None, None) and not score(34.3, "date", gold, None, None)


def test_final_answer_line_is_the_last_and_first_number_wins():
    reply = "Answer: 12 is a guess\nwork...\n**Final Answer:** 1,234.5 mL/min (about 1200)"
    assert final_answer_line(reply) == "1,234.5 mL/min (about 1200)"
    assert read_answer(reply, "decimal") == ("answered", 1234.5)
    assert read_answer("the answer is 5", "integer") == ("no_answer", None)
    assert read_answer("Answer: unknown", "integer") == ("unreadable", None)
    assert read_answer("Answer: -3", "integer") == ("answered", -3)
    assert read_answer("Answer: 02/29/2024", "date") == ("answered", "02/29/2024")
    assert read_answer("Answer: 2024-02-30", "date") == ("unreadable", None)
    assert read_answer("Answer: (34, 3)", "date", ("34 weeks", "3 days")) == ("answered", [34, 3])
    assert read_answer("", "decimal") == ("no_answer", None) and read_answer(None, "decimal") == ("no_answer", None)
