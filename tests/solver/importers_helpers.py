"""Small MedCalc-Bench output files for the importer tests (invented cases; the note is a marker that must
never reach an imported run)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NOTE = "PLACEHOLDER-NOTE-7f3c: an invented patient note that must never be copied."


def line(row: int, calc: int, gold: str, answer: Any = None, result: str | None = "Correct", **extra: Any
         ) -> dict[str, Any]:
    """One line as MedCalc-Bench's run.py writes it (direct-answer shape unless `extra` says otherwise)."""
    out: dict[str, Any] = {"Row Number": row, "Calculator Name": f"calculator {calc}", "Calculator ID": str(calc),
                           "Note ID": f"note-{row}", "Patient Note": NOTE, "Question": "What is the value?",
                           "LLM Explanation": "N/A", "Ground Truth Answer": gold,
                           "Ground Truth Explanation": "invented"}
    if answer is not None:
        out["LLM Answer"] = answer
    if result is not None:
        out["Result"] = result
    out.update(extra)
    return {k: v for k, v in out.items() if v is not None}


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def results(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()]
