"""A calculator page's worked example: one reference case, and the working the library shows for it.

The page presents what the library computed (`compute(..., working=True)`); nothing here does arithmetic. A
benchmark calculator shows its first reference case (the benchmark's own answer beside ours, benchmark variant);
a successor shows the first reference case of a calculator it succeeds that it can compute, as published.
"""
from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from formula_site.markup import esc
from registry.loader import Registry
from registry.schema import Calculator


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


def worked_example(reg: Registry, c: Calculator) -> list[str]:
    """The section's Markdown lines (none when no reference case can be computed)."""
    from solver.library import CalculatorError, compute
    from solver.library.working import fmt, numbered

    for case, variant in _candidates(reg, c):
        ents = case["entities"] if c.medcalc_id is not None else \
            {k: v for k, v in case["entities"].items() if any(i.name == k for i in c.inputs)}
        try:
            res = compute(c.slug, ents, variant=variant, registry=reg, working=True)
        except (CalculatorError, KeyError):
            continue
        lines = numbered([s.to_json() for s in res.working], width=100)
        where = (f"the first of the benchmark's reference cases for this calculator, computed as the benchmark "
                 f"computes it (its own answer: {esc(fmt(case['answer']))})" if c.medcalc_id is not None else
                 f"a reference case of {esc(case['calculator_name'])}, computed as published")
        return ["", "## Worked example", "",
                f"The working the library records for {where}; every number comes from the registry's "
                "constants and tables and the inputs below (`formula solve --explain` prints the same).", "",
                f'<pre class="fr-text">{esc(json.dumps(ents, ensure_ascii=False))}</pre>', "",
                f'<pre class="fr-text">{esc(chr(10).join(lines))}</pre>']
    return []
