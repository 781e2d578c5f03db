"""What a snapshot carries besides the registry: the values warm commands would otherwise work out by dumping
models (each version's record hash, the units file as plain data), made when the snapshot is written and taken up
by `registry.model_memo` when it is read."""
from __future__ import annotations

from typing import Any


def for_snapshot(reg: Any) -> list[tuple[str, Any, Any]]:
    """What warm commands would otherwise dump, worked out now, for `reg.derived` (pickled with the registry)."""
    from registry.texts import plain_units
    from registry.trust.decisionlog import record_hash

    out: list[tuple[str, Any, Any]] = []
    for c in reg.calculators.values():
        for v in c.versions:
            out.append(("record", v, record_hash(v)))
    if reg.units is not None:
        out.append(("units", reg.units, plain_units(reg.units)))
    return out
