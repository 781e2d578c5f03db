"""From what a child left behind to a wire outcome.

Shared by the fork server's client (pool.py), which classifies the raw result
a server relays, and the fresh-interpreter runner (isolated.py).  Kept free of
the sandbox and the checker so the client loads only this.
"""
from __future__ import annotations

import json
import signal

from solver.executor.policy import CPU_SECONDS
from solver.executor.wire import CHECKED_MARK, decode_result

TYPE_CHECKING = False  # `typing` stays out of the fork server (see __init__)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

KINDS = frozenset(
    {"value", "no_program", "rejected", "raised", "timeout", "memory", "line_limit", "bad_kind", "crashed"}
)


def _valid_wire(result: Any) -> bool:
    if not isinstance(result, dict) or result.get("kind") not in KINDS:
        return False
    if not isinstance(result.get("detail", ""), str):
        return False
    if result["kind"] != "value":
        return "value" not in result or result["value"] is None
    value = result.get("value")
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in (
        "int", "float", "date", "weeks_days"
    )


def classify(
    data: bytes, sig: int | None, exit_code: int | None, cpu_s: float, wall_s: float, killed: bool
) -> dict[str, Any]:
    """Turn what a child left behind into a wire outcome.

    `sig` is the signal that ended the child (None if it exited), `exit_code`
    its exit status, `killed` True when the parent killed it at the wall limit.
    """
    checked = data.startswith(CHECKED_MARK)
    payload = data[len(CHECKED_MARK) :] if checked else data
    result: Any = None
    if payload:
        try:
            result = json.loads(payload)
        except (ValueError, RecursionError):
            result = None
        if not _valid_wire(result):
            result = None
    timing = {"cpu_s": round(cpu_s, 6), "wall_s": round(wall_s, 6)}
    if result is not None and not killed:
        return {"kind": result["kind"], "value": result.get("value"), "detail": result.get("detail", ""), **timing}
    if killed or sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu_s >= CPU_SECONDS):
        if not checked:
            return {"kind": "rejected", "detail": "the checker could not finish within the limits", **timing}
        limit = "wall-clock" if killed else "CPU"
        return {"kind": "timeout", "detail": f"{limit} time limit reached", **timing}
    if sig is not None:
        try:
            what = f"ended by signal {signal.Signals(sig).name}"
        except ValueError:
            what = f"ended by signal {sig}"
    elif exit_code is not None:
        what = f"exited with status {exit_code}"
    else:
        what = "ended"
    if not checked:
        return {"kind": "rejected", "detail": f"the checker could not analyse the program (child {what})", **timing}
    return {"kind": "crashed", "detail": f"child {what} without a readable result", **timing}


def early(kind: str, detail: str) -> dict[str, Any]:
    """An outcome decided before any child was forked (no program, too long)."""
    return {"kind": kind, "value": None, "detail": detail, "cpu_s": 0.0, "wall_s": 0.0}


def outcome_wire(payload: bytes) -> dict[str, Any]:
    """A fork server's answer as a wire outcome: a relayed child result (see
    wire.encode_result), classified here, or an outcome the server decided
    itself (JSON).  ValueError for anything else."""
    relayed = decode_result(payload)
    if relayed is not None:
        return classify(*relayed)
    wire = json.loads(payload)
    if not isinstance(wire, dict):
        raise ValueError("a server answer that is not an object")
    return wire
