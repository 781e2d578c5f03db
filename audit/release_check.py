"""Every release runs the calculator's reference cases and says how many still match.

A changed formula may change answers (that can be the point of the release), but never silently:
`formula release`, `fix`, `approve` and `activate` print, per calculator, how many of its shipped
reference cases the library reproduces before and after. The registry layer cannot import the
library, so the command line hands this check to `registry.governance.writeplan.on_release` before a releasing
command runs (`cli.main`): wired where the layers are composed, never by importing this module.
"""
from __future__ import annotations

from functools import lru_cache

from registry.loader import Registry
from solver.data import REFERENCE_CASES, Case, DatasetError, read_cases
from solver.library import CalculatorError, compute
from solver.scoring import is_correct


@lru_cache(maxsize=1)
def _cases() -> tuple[Case, ...]:
    try:
        return tuple(read_cases(REFERENCE_CASES))
    except (OSError, DatasetError):
        return ()


def matches(reg: Registry, slug: str, cases: list[Case]) -> int:
    """How many cases the library reproduces for `slug` from this registry (a refused case misses)."""
    n = 0
    for case in cases:
        try:
            value = compute(slug, case.entities, variant="benchmark", registry=reg).value
        except CalculatorError:
            value = None
        n += bool(is_correct(value, case.answer, case.lower, case.upper))
    return n


def reference_lines(before: Registry, after: Registry, slugs: list[str]) -> list[str]:
    """One line per released calculator: its reference cases matched after the release (and before)."""
    out = []
    for slug in slugs:
        calc = after.calculators.get(slug)
        mine = [c for c in _cases() if calc is not None and calc.medcalc_id is not None
                and c.calculator_id == calc.medcalc_id]
        if not mine:
            out.append(f"reference cases {slug}: none shipped for this calculator")
            continue
        now, was = matches(after, slug, mine), matches(before, slug, mine)
        change = "unchanged" if now == was else f"was {was}: this release changes answers"
        out.append(f"reference cases {slug}: {now} of {len(mine)} match the benchmark's answers ({change})")
    return out
