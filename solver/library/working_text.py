"""The working as text: numbered lines for a terminal, and the first step a recomputation changed."""
from __future__ import annotations

import textwrap
from typing import Any, Iterable

from solver.library.working import fmt


def numbered(steps: Iterable[dict[str, Any]], width: int = 80) -> list[str]:
    """The working as numbered lines for a terminal, each wrapped to `width` columns (a running total after
    its criterion)."""
    out: list[str] = []
    for i, s in enumerate(steps, 1):
        text = str(s.get("step", ""))
        if s.get("total") is not None:
            text += f" (total {fmt(s['total'])})"
        head = f"{i:>3}. "
        out += textwrap.wrap(text, width=width, initial_indent=head, subsequent_indent=" " * len(head),
                             break_long_words=True, break_on_hyphens=False) or [head.rstrip()]
    return out


def first_difference(recorded: list[dict[str, Any]], now: list[dict[str, Any]]) -> str | None:
    """The first step of a recomputed working that differs from the recorded one, worded; None when they agree."""
    for i, (a, b) in enumerate(zip(recorded, now), 1):
        if a != b:
            keys = [k for k in ("value", "total", "unit", "step", "from", "kind") if a.get(k) != b.get(k)]
            k = keys[0] if keys else "step"
            return f"working step {i} ({str(b.get('step', ''))[:60]}): {k} recorded {a.get(k)!r}, now {b.get(k)!r}"
    if len(recorded) != len(now):
        return f"working: recorded {len(recorded)} steps, now {len(now)}"
    return None
