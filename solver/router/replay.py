"""Replay: recompute an answer from its record alone (no model), and say what differs."""
from __future__ import annotations

from registry.loader import Registry
from solver.records import AnswerRecord
from solver.router.core import solve

COMPARED = ("value", "abstained", "unit", "content_hash", "route")


def replay(record: AnswerRecord, registry: Registry | None = None) -> tuple[AnswerRecord, list[str]]:
    """The recomputed record and the list of differences (empty when it reproduces)."""
    mode = record.requested_route or ("auto" if record.route == "abstain" else record.route)
    new = solve(record.calculator, record.entities, version=record.version, route=mode, program=record.program,
                variant=record.variant, registry=registry)
    diffs = [f"{f}: recorded {getattr(record, f)!r}, now {getattr(new, f)!r}"
             for f in COMPARED if getattr(record, f) != getattr(new, f)]
    return new, diffs
