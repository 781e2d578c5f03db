"""The library route: the verified calculator library, reading the version's registry content."""
from __future__ import annotations

from solver.library import FUNCTIONS
from solver.records import AnswerRecord, library_record
from solver.router import ROUTES, Request
from solver.router._common import skeleton


def has_function(slug: str) -> bool:
    return slug in FUNCTIONS


@ROUTES.register("library")
def library(req: Request) -> AnswerRecord:
    """Raises `CalculatorError` for bad input (the caller's to fix); abstains when it cannot compute."""
    if not has_function(req.calc.slug):
        return skeleton(req, "abstain", abstained=True,
                        reason=f"the library has no function for {req.calc.slug}")
    try:
        rec = library_record(req.reg, req.calc, req.entities, variant=req.variant)  # the entry solve resolved
    except KeyError as e:  # the library reads a constant or table this version's content lacks
        return skeleton(req, "abstain", abstained=True,
                        reason=f"the current library function cannot compute version {req.calc.active.version}: "
                        f"{e.args[0] if e.args else e}")
    rec.warnings = list(req.warnings) + rec.warnings  # registry flags, then the library's plausibility warnings
    return rec
