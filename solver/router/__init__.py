"""The router: which way an answer is computed, and the record it carries.

The paper's defensible configuration, as a tool: the verified library where a calculator has a
function, a model-written program (run in the restricted executor) where it has not, and an
explicit abstention where neither can be trusted. Each way is a `Route`, registered by name in
`ROUTES`; `solver.router.core.solve` chooses among them and cross-checks library against program.

    from solver.router.core import solve
    rec = solve("mdrd-gfr", entities)            # an AnswerRecord
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from registry.loader import Registry
from registry.schema import Calculator
from solver.plugins import Plugins
from solver.records import AnswerRecord


@dataclass
class Request:
    """Everything a route may use: the registry (possibly with a reconstructed version), the inputs."""

    reg: Registry
    calc: Calculator  # the calculator at the version asked for
    entities: dict[str, Any]
    variant: str = "published"
    program: str | None = None  # program source for the program route
    warnings: list[str] = field(default_factory=list)
    reason: str | None = None  # why the router abstains (abstain route)


class Route(Protocol):
    """One way of answering; returns a record, never raises for an answer it cannot give."""

    def __call__(self, req: Request) -> AnswerRecord: ...


ROUTES: Plugins[Route] = Plugins("route", "solver.router")
