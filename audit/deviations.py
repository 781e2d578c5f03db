"""Benchmark fidelity: where the benchmark's reference departs from the published formulas, and how often it matters."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from registry.loader import Registry
from solver.data import Case
from solver.library import CalculatorError, RegistryInvalid, compute
from solver.scoring import is_correct


@dataclass
class FidelityRow:
    slug: str
    medcalc_id: int | None
    deviations: list[str]
    cases: int = 0
    differ: int = 0
    errors: int = 0
    verified: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def share(self) -> float | None:
        return self.differ / self.cases if self.cases else None

    def to_json(self) -> dict[str, Any]:
        return {"slug": self.slug, "medcalc_id": self.medcalc_id, "deviations": self.deviations,
                "verified_deviations": self.verified, "cases": self.cases, "differ": self.differ,
                "share_differ": None if self.share is None else round(self.share, 4), "errors": self.errors}


def fidelity(reg: Registry, cases: list[Case]) -> list[FidelityRow]:
    """Per calculator: its deviations and how many cases score differently under the published variant."""
    rows: dict[int, FidelityRow] = {}
    for c in reg.calculators.values():
        if c.medcalc_id is None:
            continue
        rows[c.medcalc_id] = FidelityRow(c.slug, c.medcalc_id, [d.id for d in c.deviations],
                                         verified=sum(d.verified for d in c.deviations))
    for case in cases:
        row = rows.get(case.calculator_id)
        if row is None:
            continue
        row.cases += 1
        try:
            pub = compute(case.calculator_id, case.entities, variant="published", registry=reg).value
        except RegistryInvalid:
            raise  # not a property of the case: the whole registry is refused
        except CalculatorError:
            row.errors += 1
            continue
        if not is_correct(pub, case.answer, case.lower, case.upper):
            row.differ += 1
    return sorted(rows.values(), key=lambda r: r.medcalc_id or 0)
