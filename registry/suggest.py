""""Did you mean ...?" for a mistyped calculator slug, arm or other name (difflib, no guessing beyond that)."""
from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


def closest(name: object, choices: Iterable[str], n: int = 3) -> list[str]:
    """The known names nearest to `name`, best first (at most `n`; none when nothing is close)."""
    text = str(name).strip().lower()
    pool = sorted(set(choices))
    found = difflib.get_close_matches(text, pool, n=n, cutoff=0.6)
    if not found:  # a fragment of a long slug: "cockcroft" -> creatinine-clearance-cockcroft-gault
        found = [c for c in pool if len(text) >= 3 and text in c][:n]
    return found


def did_you_mean(name: object, choices: Iterable[str]) -> str:
    """' (did you mean mdrd-gfr?)' (or ' or '-joined alternatives), '' when nothing is close."""
    found = closest(name, choices)
    return f" (did you mean {' or '.join(found)}?)" if found else ""


def unknown_calculator(reg: Any, ref: object, how: str = "give a slug or benchmark id (see `formula list`)") -> str:
    """The one message for a calculator reference the registry does not hold."""
    return f"unknown calculator {str(ref)!r}{did_you_mean(ref, reg.calculators)}: {how}"
