"""Cross-input plausibility: a derived quantity outside its registry range means the inputs cannot all be right.

The calculator library applies these after computing: the `published` variant refuses, the
`benchmark` variant (which must reproduce the reference whatever it is given) reports warnings.
"""
from __future__ import annotations

from typing import Any

from registry.schema import Calculator


def implausible(calc: Calculator, value: Any) -> list[str]:
    """One message per plausibility rule the computed value breaks (none when all hold)."""
    if isinstance(value, tuple) and len(value) == 2:  # gestational age (weeks, days), read in weeks
        x = value[0] + value[1] / 7
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        x = float(value)
    else:  # a date, or anything not on a number line
        return []
    out = []
    for rule in calc.plausibility:
        lo, hi = rule.range
        if not lo <= x <= hi:
            unit = f" {rule.unit}" if rule.unit else ""
            out.append(f"implausible combination of inputs ({rule.id}): {rule.description} is {x:.4g}{unit}, "
                       f"outside {lo:g}-{hi:g}{unit}; check the inputs and their units")
    return out


