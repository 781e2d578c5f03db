"""Shared fixtures for the solver tests, and a per-calculator summary of the reference checks."""
from __future__ import annotations

import ast
import csv
import json

import pytest

from solver.data import ONE_SHOT, REFERENCE_CASES

# calculator id -> (correct, total), filled by the reference tests and printed at the end of the run
REFERENCE_TALLY: dict[str, dict[int, tuple[int, int]]] = {"reference cases": {}, "one-shot rows": {}}


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


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for label, tally in REFERENCE_TALLY.items():
        if not tally:
            continue
        ok = sum(c for c, _ in tally.values())
        total = sum(t for _, t in tally.values())
        terminalreporter.write_sep("-", f"library, benchmark variant, {label}: {ok}/{total} correct")
        line = "  ".join(f"{cid}:{c}/{t}" for cid, (c, t) in sorted(tally.items()))
        terminalreporter.write_line(line)
