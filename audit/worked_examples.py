"""One worked example per calculator, for its site page: a reference case and the working the library records.

The site presents; it never computes. This prepares what it shows: the library's own working
(`compute(..., working=True)`) for the calculator's first reference case (benchmark variant, the benchmark's
answer beside it), or, for a successor, the first reference case of a calculator it succeeds that it can
compute (published variant).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from registry.loader import Registry
from registry.schema import Calculator


@dataclass(frozen=True)
class WorkedExample:
    entities: dict[str, Any]
    variant: str
    lines: list[str]  # the working, numbered as `formula solve --explain` prints it (100 columns)
    source: str  # the calculator whose reference case it is
    benchmark_answer: str | None  # the benchmark's own answer to the case (benchmark calculators)


@lru_cache(maxsize=1)
def _cases() -> tuple[dict[str, Any], ...]:
    from solver.data import REFERENCE_CASES

    return tuple(json.loads(line) for line in REFERENCE_CASES.read_text(encoding="utf-8").splitlines() if line.strip())


def _candidates(reg: Registry, c: Calculator) -> list[tuple[dict[str, Any], str]]:
    """(case, variant) pairs to try, in order."""
    if c.medcalc_id is not None:
        return [(k, "benchmark") for k in _cases() if k["calculator_id"] == c.medcalc_id][:1]
    ids = {o.medcalc_id for o in reg.calculators.values() for r in o.replacements if r.successor == c.slug}
    return [(k, "published") for k in _cases() if k["calculator_id"] in ids]


def worked_example(reg: Registry, c: Calculator) -> WorkedExample | None:
    """The example, or None when no reference case can be computed (a successor whose inputs none gives)."""
    from solver.library import CalculatorError, compute
    from solver.library.working import fmt
    from solver.library.working_text import numbered

    names = {i.name for i in c.inputs}
    for case, variant in _candidates(reg, c):
        ents = case["entities"] if c.medcalc_id is not None else {k: v for k, v in case["entities"].items()
                                                                    if k in names}
        try:
            res = compute(c.slug, ents, variant=variant, registry=reg, working=True)
        except (CalculatorError, KeyError):
            continue
        return WorkedExample(ents, variant, numbered([s.to_json() for s in res.working], width=100),
                             case["calculator_name"], fmt(case["answer"]) if c.medcalc_id is not None else None)
    return None
