"""Shared helpers for the evaluation tests: an oracle that answers a prompt with the case's gold answer
in each arm's reply format, and small run helpers. Test-only: it reads the gold answers on purpose."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, Callable

from solver.data import ONE_SHOT, BenchmarkRow, read_benchmark
from solver.runner.loopback import Scripted

ROWS: tuple[BenchmarkRow, ...] = read_benchmark(ONE_SHOT).rows


def prompt_text(request: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request["messages"])


def row_for(request: dict[str, Any], rows: tuple[BenchmarkRow, ...] = ROWS) -> BenchmarkRow:
    """The case a prompt is about: the row whose question appears last (after any worked example)."""
    text = request["messages"][0]["content"]
    best = max(rows, key=lambda r: (text.rfind(r.question), len(r.question)))
    if text.rfind(best.question) >= 0:
        return best
    by_note = [r for r in rows if r.note[:300] in text]  # prompts without the question (extraction)
    assert len(by_note) == 1, "no single row's note or question in the prompt"
    return by_note[0]


SUBSET_IDS = (2, 4, 13, 24, 68, 69, 9, 33, 49, 60)  # decimal, integer, both dates, gestational age, dosage windows


def subset_csv(path: Path) -> Path:
    """A 10-row benchmark file cut from the one-shot split, every output kind in it."""
    import csv

    with ONE_SHOT.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        rows = [r for r in reader if int(r["Calculator ID"]) in SUBSET_IDS]
        fields = reader.fieldnames
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    return path


def _python_value(row: BenchmarkRow) -> str:
    a = row.answer
    if isinstance(a, tuple):
        return f"({a[0]}, {a[1]})"
    if isinstance(a, str):
        d = dt.datetime.strptime(a, "%m/%d/%Y").date()
        return f"datetime.date({d.year}, {d.month}, {d.day})"
    return repr(a)


def program_for(row: BenchmarkRow) -> str:
    return f"```python\nimport datetime\n\ndef solve():\n    return {_python_value(row)}\n```"


def oracle_reply(request: dict[str, Any]) -> str:
    """The reply a perfect model would give, in the format the prompt asks for."""
    row = row_for(request)
    text = prompt_text(request)
    if "def solve():" in text:
        return "Here is the program.\n" + program_for(row)
    if '"tree"' in text:
        tree = {"calculation": row.calculator_name, "formula": "x", "variables": {"x": row.answer}, "missing": [],
                "tree": "x"}
        return "```json\n" + json.dumps(tree) + "\n```"
    if "Use exactly these keys" in text:
        return "```json\n" + json.dumps(row.entities, ensure_ascii=False) + "\n```"
    a = row.answer
    shown = f"({a[0]}, {a[1]})" if isinstance(a, tuple) else a
    return f"Step 1: read the note.\nStep 2: compute.\nAnswer: {shown}"


def scripted(fn: Callable[[dict[str, Any]], "str | Scripted"]) -> Callable[[dict[str, Any]], "str | Scripted"]:
    return fn


def read_rows(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines() if line]


def by_key(rows: list[dict[str, Any]]) -> dict[tuple[int, int], dict[str, Any]]:
    return {(r["row_number"], r["seed"]): r for r in rows}
N_SUBSET = len(SUBSET_IDS)
