"""A calculator page's worked example: one reference case and the library's working for it, as the audit
layer prepared it (`audit.worked_examples`); the site only presents it."""
from __future__ import annotations

import json

from audit.worked_examples import worked_example as prepare
from formula_site.markup import esc
from registry.loader import Registry
from registry.schema import Calculator


def worked_example(reg: Registry, c: Calculator) -> list[str]:
    """The section's Markdown lines (none when no reference case can be computed)."""
    ex = prepare(reg, c)
    if ex is None:
        return []
    where = (f"the first of the benchmark's reference cases for this calculator, as the benchmark computes it "
             f"(its own answer: {esc(ex.benchmark_answer)})" if ex.benchmark_answer is not None else
             f"a reference case of {esc(ex.source)}, as published")
    return ["", "## Worked example", "",
            f"The working the library records for {where}; every number comes from the registry's constants and "
            "tables and the inputs below (`formula solve --explain` prints the same).", "",
            f'<pre class="fr-text">{esc(json.dumps(ex.entities, ensure_ascii=False))}</pre>', "",
            f'<pre class="fr-text">{esc(chr(10).join(ex.lines))}</pre>']
