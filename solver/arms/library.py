"""Arms without a model: the verified library on the gold variables (benchmark, published, successor)."""
from __future__ import annotations

from typing import Any

from registry.schema import Calculator
from registry.texts import render, text_hash
from solver.arms import ARMS
from solver.arms.base import ArmResult, CaseInput, Env
from solver.arms.spec import ArmSpec


def successor_of(reg: Any, calc: Calculator) -> Calculator | None:
    """The registry calculator that replaced `calc` (a `replaced_by` link with a registry slug), if any."""
    for rep in calc.replacements:
        if rep.kind == "replaced_by" and rep.successor and rep.successor in reg.calculators:
            return reg.calculators[rep.successor]
    return None


def plain(value: Any) -> Any:
    import datetime as dt

    if isinstance(value, dt.date):
        return value.strftime("%m/%d/%Y")
    if isinstance(value, tuple):
        return list(value)
    return value


class LibraryArm:
    def __init__(self, spec: ArmSpec):
        self.spec = spec

    def prompts(self, case: CaseInput) -> dict[str, str]:
        return {}

    def target(self, case: CaseInput) -> tuple[Calculator, str]:
        """Which calculator and variant this arm computes for the case."""
        variant = self.spec.library_variant
        if variant == "successor":
            succ = successor_of(case.registry, case.calc)
            return (succ, "published") if succ is not None else (case.calc, "published")
        return case.calc, variant or "benchmark"

    async def run(self, case: CaseInput, env: Env) -> ArmResult:
        from solver.library import CalculatorError, compute

        calc, variant = self.target(case)
        entities = dict(case.row.entities)
        extra: dict[str, Any] = {"variant": variant, "text_slug": calc.slug}
        if calc.slug != case.calc.slug:
            names = {i.name for i in calc.inputs}
            entities = {k: v for k, v in entities.items() if k in names}
            text = render(calc, calcs=case.registry.calculators, units=case.registry.units)
            extra.update(text_version=calc.active.version, text_sha256=text_hash(text), successor=calc.slug)
        try:
            res = compute(calc.slug, entities, variant=variant, registry=case.registry)
        except CalculatorError as e:
            return ArmResult(outcome="no_answer", error=str(e), extra=extra)
        return ArmResult(outcome="answered", answer=plain(res.value), extra=extra)


for _name in ("gold-solve", "gold-solve-published", "gold-solve-successor"):
    ARMS.register(_name)(LibraryArm)
