"""The cells of `formula batch`'s output table, shared by the in-memory and the streamed writers."""
from __future__ import annotations

import json
from typing import Any


def csv_frame(frame: Any, *, guard: bool = True, values: list[str] | None = None) -> Any:
    """The output table as CSV cells (every CSV write goes through here): a [weeks, days] value (in the columns
    `values`, default `value`) as JSON text, and, unless `guard` is off, no cell a spreadsheet would run as a
    formula (solver/csv_guard.py)."""
    from solver.csv_guard import guard_frame

    out = frame.copy()
    for name in values or ["value"]:
        out[name] = [json.dumps(v) if isinstance(v, list) else v for v in out[name]]
    return guard_frame(out) if guard else out
