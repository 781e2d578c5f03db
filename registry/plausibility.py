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
        if rule.quantity != "output":
            continue
        lo, hi = rule.range
        if not lo <= x <= hi:
            unit = f" {rule.unit}" if rule.unit else ""
            out.append(f"implausible combination of inputs ({rule.id}): {rule.description} is {x:.4g}{unit}, "
                       f"outside {lo:g}-{hi:g}{unit}; check the inputs and their units")
    return out




def implausible_inputs(calc: Calculator, values: dict[str, Any]) -> list[str]:
    """One warning per `difference` rule the inputs break (systolic at or below diastolic, say).

    `values` are the inputs as the library used them (converted to the canonical unit); a rule whose
    inputs were not both given is skipped. These warn in both variants: the formula still computes.
    """
    out = []
    for rule in calc.plausibility:
        if rule.quantity != "difference" or rule.inputs is None:
            continue
        a, b = (values.get(name) for name in rule.inputs)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
            continue
        x = float(a) - float(b)  # type: ignore[arg-type]
        lo, hi = rule.range
        if not lo <= x <= hi:
            unit = f" {rule.unit}" if rule.unit else ""
            out.append(f"implausible combination of inputs ({rule.id}): {rule.description} is {x:.4g}{unit}, "
                       f"outside {lo:g}-{hi:g}{unit}; check {rule.inputs[0]!r} and {rule.inputs[1]!r}")
    return out
