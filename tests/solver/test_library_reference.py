"""The library against the benchmark's own reference: every case must score correct (benchmark variant)."""
from __future__ import annotations

import collections

import pytest

from registry.loader import get_registry
from solver.library import compute
from solver.scoring import is_correct
from tests.solver.conftest import REFERENCE_TALLY, one_shot_rows, reference_cases

CASES = reference_cases()
BY_CALC: dict[int, list[dict]] = collections.defaultdict(list)
for _c in CASES:
    BY_CALC[_c["calculator_id"]].append(_c)
SHOTS = one_shot_rows()


def test_fixture_is_complete() -> None:
    assert len(CASES) == 2200
    assert len(BY_CALC) == 55
    assert all(len(v) == 40 for v in BY_CALC.values())


def test_every_benchmark_calculator_is_in_the_registry() -> None:
    reg = get_registry()
    for cid, rows in BY_CALC.items():
        calc = reg.by_id(cid)
        assert calc.name == rows[0]["calculator_name"]
        assert calc.category.value == rows[0]["category"]


@pytest.mark.parametrize("cid", sorted(BY_CALC))
def test_reference_cases(cid: int) -> None:
    wrong = []
    for case in BY_CALC[cid]:
        value = compute(cid, case["entities"], variant="benchmark").value
        if not is_correct(value, case["answer"], case["lower_limit"], case["upper_limit"]):
            wrong.append((case["entities"], value, case["answer"]))
    REFERENCE_TALLY["reference cases"][cid] = (len(BY_CALC[cid]) - len(wrong), len(BY_CALC[cid]))
    assert not wrong, f"{len(wrong)} wrong, first: {wrong[0]}"


@pytest.mark.parametrize("row", SHOTS, ids=lambda r: f"id{r['Calculator ID']}")
def test_one_shot_rows(row: dict) -> None:
    cid = int(row["Calculator ID"])
    value = compute(cid, row["entities"], variant="benchmark").value
    good = is_correct(value, row["Ground Truth Answer"], row["Lower Limit"], row["Upper Limit"])
    REFERENCE_TALLY["one-shot rows"][cid] = (int(good), 1)
    assert good, f"got {value!r}, benchmark {row['Ground Truth Answer']!r}"
