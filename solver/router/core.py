"""`solve`: choose a route, cross-check library against program, warn about flagged formulas."""
from __future__ import annotations

import math
from typing import Any

from registry.loader import Registry, get_registry
from registry.schema import Calculator, ConcernType, OutputKind
from solver.library import resolve
from solver.records import AnswerRecord, CrossCheck, as_given, cleaned
from solver.router import ROUTES, Request
from solver.router.library import has_function
from solver.router.versions import with_version

MODES = ("auto", "library", "program")
RELATIVE_TOLERANCE = 0.05  # the benchmark's limits for decimal answers: the reference value +-5 %


def flags(reg: Registry, calc: Calculator) -> list[str]:
    """Warnings a person should see with any answer of this calculator (successors, audit concerns)."""
    out = []
    for r in calc.replacements:
        what = "is replaced by" if r.kind == "replaced_by" else "has an alternative:"
        where = f" in {r.jurisdiction} since {r.since}"
        by = ""
        if r.guideline:
            g = reg.guidelines.get(r.guideline)
            by = f" ({g.body}: {g.title})" if g else f" ({r.guideline})"
        slug = f" [registry: {r.successor}]" if r.successor else ""
        out.append(f"{calc.name} {what} {r.name}{slug}{where}{by}")
    la = calc.literature_audit
    if la.concern != ConcernType.none:
        out.append(f"literature audit: {la.concern.value.replace('_', ' ')}: {la.summary}")
    return out


def tolerance(calc: Calculator) -> str:
    return f"relative {RELATIVE_TOLERANCE}" if calc.output.kind == OutputKind.decimal else "exact"


def agree(calc: Calculator, lib: Any, prog: Any) -> bool:
    """Within the benchmark's tolerance: decimals +-5 % of the library's value, everything else exact."""
    if calc.output.kind == OutputKind.decimal:
        nums = all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in (lib, prog))
        return nums and abs(prog - lib) <= RELATIVE_TOLERANCE * abs(lib)
    if calc.output.kind == OutputKind.integer:
        return isinstance(prog, (int, float)) and not isinstance(prog, bool) and prog == lib
    return prog == lib  # ISO dates and [weeks, days] as JSON holds them


def solve(calculator: str | int | Calculator, entities: dict[str, Any], *, version: str | None = None,
          route: str = "auto", program: str | None = None, variant: str = "published",
          registry: Registry | None = None) -> AnswerRecord:
    """One answer as a record. Raises `CalculatorError` for bad input, `VersionError` for an unknown version.

    `calculator` may be the registry's entry (a caller that resolved it passes it: looked up once per answer).
    The entities are read in the registry's spelling first (`solver.records.cleaned`: names without case, unit
    aliases, choice codes), as the command line and the tools read them; the record keeps what was written
    otherwise in `read_as`."""
    if route not in MODES:
        raise ValueError(f"route must be one of {', '.join(MODES)}, got {route!r}")
    reg = registry or get_registry()
    calc = calculator if isinstance(calculator, Calculator) else resolve(calculator, reg)
    warnings = flags(reg, calc)
    if version is not None and version != calc.active.version:
        warnings.append(f"computed with {calc.slug} {version}, not the active version {calc.active.version}")
        reg, calc = with_version(reg, calc, version)
    found = cleaned(reg, calc, entities)
    req = Request(reg, calc, found.entities, variant, program, warnings)
    if route == "library":
        rec = ROUTES.get("library")(req)
    elif route == "program":
        rec = ROUTES.get("program")(req)
    elif has_function(calc.slug):
        rec = ROUTES.get("library")(req)
        if program and not rec.abstained:
            rec = _cross_check(req, rec)
    elif program:
        rec = ROUTES.get("program")(req)
    else:
        req.reason = f"no verified library function for {calc.slug} and no program supplied"
        rec = ROUTES.get("abstain")(req)
    rec.requested_route = route
    return as_given(rec, found)


def _cross_check(req: Request, lib: AnswerRecord) -> AnswerRecord:
    prog = ROUTES.get("program")(req)
    extra = {"program": prog.program, "executor_outcome": prog.executor_outcome}
    if prog.abstained:  # the program failed; the verified answer stands, and says so
        return lib.model_copy(update={**extra, "warnings": lib.warnings + [f"the supplied program was not used: {prog.reason}"]})
    check = CrossCheck(library_value=lib.value, program_value=prog.value, tolerance=tolerance(req.calc),
                       agree=agree(req.calc, lib.value, prog.value))
    if check.agree:
        return lib.model_copy(update={**extra, "cross_check": check})
    reason = f"library ({lib.value}) and program ({prog.value}) disagree beyond the tolerance ({check.tolerance})"
    return lib.model_copy(update={
        **extra, "cross_check": check, "route": "abstain", "abstained": True, "value": None, "reason": reason,
        "working": lib.working + [{"step": f"no answer: {reason}", "value": None, "unit": None, "from": [],
                                   "kind": "note"}],
    })
