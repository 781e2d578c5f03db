"""CSV cells that a spreadsheet would run as a formula, neutralised on the way out.

A cohort table comes from anywhere, and `formula batch` writes its cells back; a cell such as
`=HYPERLINK("http://...")` or `@SUM(...)` opens as a live formula in Excel, LibreOffice or Google
Sheets. In CSV output every text cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage
return gets a leading single quote (`'=HYPERLINK(...)`), which spreadsheets show as text. Numbers
are never altered: numeric columns, and text cells that are a plain number (`-3.5`, `+2`, `-1e-3`),
stay as they are, so negative values keep their minus sign. Column names get the same treatment.
`formula batch --no-csv-guard` writes every cell verbatim. Parquet output is typed and never altered.
"""
from __future__ import annotations

import re
from typing import Any

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def guard_cell(v: Any) -> Any:
    """One cell: text starting with a formula trigger gets a leading quote, unless it is a plain number."""
    if isinstance(v, str) and v.startswith(TRIGGERS) and not _NUMBER.fullmatch(v):
        return "'" + v
    return v


def guard_frame(frame: Any) -> Any:
    """A copy of a pandas DataFrame with every text cell and column name guarded (numeric columns untouched)."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object or str(out[col].dtype) in ("string", "str"):
            out[col] = [guard_cell(v) for v in out[col]]
    out.columns = [guard_cell(c) if isinstance(c, str) else c for c in out.columns]
    return out
