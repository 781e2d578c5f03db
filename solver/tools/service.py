"""What the tools answer, independent of any transport: list, explain, and call a calculator.

A call runs the validation gates first (completeness -> type -> enum -> unit -> range; the
first failure is the error), then the library, and returns the answer record
(`solver.records.AnswerRecord`) with the registry's warnings (concern, successors) and the
sub-results of the calculators it depends on.
"""
from __future__ import annotations

from typing import Any

from registry.loader import Registry
from registry.report import successors
from registry.schema import Calculator, VersionStatus
from registry.texts import TextError, render, render_expression
from solver.records import AnswerRecord, as_given, cleaned, library_record, version_hash
from solver.tools.gates import check
from solver.tools.schema import warnings


def active_calculators(reg: Registry) -> list[Calculator]:
    """Calculators with an active version, in benchmark-id order (successors last)."""
    calcs = [c for c in reg.calculators.values() if any(v.status == VersionStatus.active for v in c.versions)]
    return sorted(calcs, key=lambda c: (c.medcalc_id is None, c.medcalc_id or 0, c.slug))


def list_calculators(reg: Registry) -> list[dict[str, Any]]:
    return [{"calculator": c.slug, "medcalc_id": c.medcalc_id, "name": c.name, "version": c.active.version,
             "content_hash": version_hash(reg, c), "output": c.output.kind.value, "unit": c.output.unit,
             "intended_use": c.intended_use.value, "concern": c.literature_audit.concern.value,
             "successors": successors(c)} for c in active_calculators(reg)]


def _cite(p: Any) -> dict[str, Any]:
    return {k: v for k, v in p.model_dump(mode="json").items() if v not in (None, [], "")}


def explain(reg: Registry, ref: str | int) -> dict[str, Any]:
    """The rendered formula text, provenance, literature concern and successors of one calculator."""
    c = reg.get(ref)
    try:
        text = render(c, calcs=reg.calculators, units=reg.units)
        expression = render_expression(c, calcs=reg.calculators, units=reg.units) if c.formula.expression else None
    except TextError as e:
        text, expression = f"(text cannot be rendered: {e})", None
    provenance = []
    for g in c.provenance:
        doc = reg.guidelines.get(g.guideline)
        provenance.append({"guideline": g.guideline, "relation": g.relation.value, "jurisdiction": g.jurisdiction,
                           "title": doc.title if doc else None, "body": doc.body if doc else None,
                           "year": doc.year if doc else None, "verified": doc.verified if doc else None,
                           "note": g.note})
    a = c.literature_audit
    return {
        "calculator": c.slug, "medcalc_id": c.medcalc_id, "name": c.name, "version": c.active.version,
        "content_hash": version_hash(reg, c), "formula": c.formula.name, "expression": expression,
        "publication": _cite(c.formula.publication), "text": text, "provenance": provenance,
        "concern": {"type": a.concern.value, "summary": a.summary, "guidelines": a.guidelines},
        "completeness": c.completeness.status.value if c.completeness else None,
        "successors": [{"name": r.name, "calculator": r.successor, "kind": r.kind, "jurisdiction": r.jurisdiction,
                        "since": r.since, "note": r.note} for r in c.replacements],
        "depends_on": list(c.depends_on), "deviations": [d.id for d in c.deviations],
        "warnings": warnings(c, reg),
    }


def call(reg: Registry, ref: str | int, arguments: Any, *, variant: str = "published") -> AnswerRecord:
    """Gates, then the library. Raises `GateError` or the library's `CalculatorError`."""
    calc = reg.get(ref)
    from solver.tools.schema import strict_arguments

    given = strict_arguments(calc, arguments)  # null for an optional input (OpenAI strict mode): absent
    found = cleaned(reg, calc, given)  # 'Sex' is 'sex', 'lb' is 'lbs', 'F' is 'Female', as `formula solve` reads them
    check(reg, calc.slug, found.entities)
    record = library_record(reg, calc, found.entities, variant=variant)
    as_given(record, found)
    record.warnings.extend(w for w in warnings(calc, reg) if w not in record.warnings)
    return record
