"""Replay: recompute an answer from its record alone (no model), and say what differs.

The whole record is recomputed and compared, field by field (nested fields by their path, such as
`inputs.weight.value` or `executor_outcome.kind`): a record whose inputs, constants, sub-results,
cross-check, warnings, executor outcome or lock digest were edited does not reproduce. Only what
cannot repeat is left out: the `timestamp`, and the executor's measured `cpu_s` and `wall_s`.
"""
from __future__ import annotations

from typing import Any

from registry.loader import Registry
from solver.records import AnswerRecord
from solver.router.core import solve

NOT_COMPARED = frozenset({"timestamp", "working"})  # the working is compared step by step (the first that differs)
NOT_COMPARED_OUTCOME = frozenset({"cpu_s", "wall_s"})  # measured on each run


def _comparable(rec: AnswerRecord) -> dict[str, Any]:
    data = {k: v for k, v in rec.model_dump(mode="json").items() if k not in NOT_COMPARED}
    if isinstance(data.get("executor_outcome"), dict):
        data["executor_outcome"] = {k: v for k, v in data["executor_outcome"].items()
                                    if k not in NOT_COMPARED_OUTCOME}
    return data


def differences(recorded: Any, now: Any, path: str = "") -> list[str]:
    """Every difference between two JSON values, one line per differing leaf (a dict key present on one
    side only counts as a difference of that key)."""
    if isinstance(recorded, dict) and isinstance(now, dict):
        out: list[str] = []
        for k in list(recorded) + [k for k in now if k not in recorded]:
            where = f"{path}.{k}" if path else str(k)
            if k not in now:
                out.append(f"{where}: recorded {recorded[k]!r}, now absent")
            elif k not in recorded:
                out.append(f"{where}: recorded absent, now {now[k]!r}")
            else:
                out += differences(recorded[k], now[k], where)
        return out
    if recorded != now or type(recorded) is not type(now):
        return [f"{path}: recorded {recorded!r}, now {now!r}"]
    return []


def replay(record: AnswerRecord, registry: Registry | None = None) -> tuple[AnswerRecord, list[str]]:
    """The recomputed record and the list of differences (empty when it reproduces)."""
    mode = record.requested_route or ("auto" if record.route == "abstain" else record.route)
    new = solve(record.calculator, record.entities, version=record.version, route=mode, program=record.program,
                variant=record.variant, registry=registry)
    new.requested_route = record.requested_route  # a record without one replays as its route, and says so
    diffs = differences(_comparable(record), _comparable(new))
    if record.working:  # (a record made before answers carried their working has none to compare)
        from solver.library.working_text import first_difference

        step = first_difference(record.working, new.working)
        if step:
            diffs.append(step)
    return new, diffs
