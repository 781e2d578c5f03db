"""The cells of `formula batch`'s output table, shared by the in-memory and the streamed writers."""
from __future__ import annotations

import json
from typing import Any


def csv_frame(frame: Any) -> Any:
    """The output table as CSV cells: a [weeks, days] value as JSON text (every CSV write goes through here)."""
    out = frame.copy()
    out["value"] = [json.dumps(v) if isinstance(v, list) else v for v in out["value"]]
    return out
