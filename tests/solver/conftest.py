"""Shared fixtures for the solver tests (the reference checks' tally lives in tests/summary.py)."""
from __future__ import annotations

import ast
import csv
import json

from solver.data import ONE_SHOT, REFERENCE_CASES
from tests.summary import REFERENCE_TALLY  # noqa: F401 - filled by the reference tests, printed by tests/conftest.py


def reference_cases() -> list[dict]:
    with REFERENCE_CASES.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def one_shot_rows() -> list[dict]:
    with ONE_SHOT.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        text = r["Relevant Entities"]
        try:
            r["entities"] = json.loads(text)
        except json.JSONDecodeError:
            r["entities"] = ast.literal_eval(text)
    return rows
