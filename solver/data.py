"""Reading benchmark cases: the shipped reference cases (JSONL) or a user's benchmark split (CSV/JSONL)."""
from __future__ import annotations

import ast
import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EMBEDDED = Path(__file__).resolve().parent / "embedded"
REFERENCE_CASES = EMBEDDED / "reference_cases.jsonl"  # 2,200 cases, answers from the benchmark's own code
ONE_SHOT = EMBEDDED / "one_shot_data.csv"  # the benchmark's 55 one-shot rows (CC-BY-SA 4.0)


class DatasetError(ValueError):
    """A dataset that cannot be read; the message names the file, row and column."""


@dataclass(frozen=True)
class Case:
    calculator_id: int
    entities: dict[str, Any]
    answer: Any
    lower: Any
    upper: Any
    source: str  # file:row


CSV_COLUMNS = ("Calculator ID", "Relevant Entities", "Ground Truth Answer", "Lower Limit", "Upper Limit")


def file_hash(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _entities(text: str, where: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            raise DatasetError(f"{where}: 'Relevant Entities' is neither JSON nor a Python literal") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: 'Relevant Entities' must be a mapping")
    return data


def read_cases(path: Path) -> list[Case]:
    if not path.exists():
        raise DatasetError(f"{path}: no such file")
    if path.suffix == ".jsonl":
        out = []
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                r = json.loads(line)
                out.append(Case(int(r["calculator_id"]), r["entities"], r["answer"], r["lower_limit"],
                                r["upper_limit"], where))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
                raise DatasetError(f"{where}: not a reference case ({type(e).__name__}: {e}); expected "
                                   "calculator_id, entities, answer, lower_limit, upper_limit") from None
        return out
    if path.suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise DatasetError(f"{path}: missing column(s) {', '.join(missing)}; the benchmark split has "
                                   + ", ".join(CSV_COLUMNS))
            out = []
            for n, r in enumerate(reader, 2):
                where = f"{path}:{n}"
                try:
                    cid = int(r["Calculator ID"])
                except ValueError:
                    raise DatasetError(f"{where}: 'Calculator ID' is not a number") from None
                out.append(Case(cid, _entities(r["Relevant Entities"], where), r["Ground Truth Answer"],
                                r["Lower Limit"], r["Upper Limit"], where))
            return out
    raise DatasetError(f"{path}: unsupported format {path.suffix!r}; give .csv (the benchmark split) or .jsonl")
