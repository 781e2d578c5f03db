"""Counted nouns in messages agree with their counts."""
from __future__ import annotations

import pytest

from registry.counted_nouns import agree, counted


@pytest.mark.parametrize(("n", "noun", "said"), [
    (0, "case", "0 cases"), (1, "case", "1 case"), (2, "problem", "2 problems"), (1, "version", "1 version"),
    (3, "signed approval", "3 signed approvals"), (2, "entry", "2 entries"), (2, "match", "2 matches"),
    (2, "key", "2 keys"), (2, "unreleased edit", "2 unreleased edits"),
])
def test_a_count_and_its_noun(n: int, noun: str, said: str) -> None:
    assert counted(n, noun) == said


def test_the_verb_agrees_and_an_irregular_plural_can_be_given() -> None:
    assert [agree(n, "differs", "differ") for n in (0, 1, 2)] == ["differ", "differs", "differ"]
    assert counted(2, "criterion", "criteria") == "2 criteria"
