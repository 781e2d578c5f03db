"""Reading benchmark data: the shipped reference cases (JSONL) or a user's MedCalc-Bench Verified split.

`read_cases` gives the gold variables and answers (the audits); `read_benchmark` reads every column
of the split, CSV or parquet, with its SHA-256 (the evaluation runner).
"""
from __future__ import annotations

import ast
import csv
import datetime as dt
import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from registry import jsontext

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
        data = jsontext.loads(text)
    except jsontext.JsonError:
        try:
            data = ast.literal_eval(text)
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            raise DatasetError(f"{where}: 'Relevant Entities' is neither JSON nor a Python literal") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: 'Relevant Entities' must be a mapping")
    return data


def _case_lines(path: Path) -> list[Case]:
    """The reference cases of a JSON-lines file, read a bounded line at a time (registry.jsontext)."""
    out = []
    lines = jsontext.read_lines(path, strict=True)
    n = 0
    try:
        for n, r in lines:
            out.append(Case(int(r["calculator_id"]), r["entities"], r["answer"], r["lower_limit"],
                            r["upper_limit"], f"{path}:{n}"))
    except jsontext.LineError as e:
        raise DatasetError(f"{path}:{e.line}: not a reference case ({e})") from None
    except OSError as e:
        raise DatasetError(f"{path}: not readable ({e})") from None
    except (KeyError, TypeError, ValueError) as e:
        raise DatasetError(f"{path}:{n}: not a reference case ({type(e).__name__}: {e}); expected "
                           "calculator_id, entities, answer, lower_limit, upper_limit") from None
    return out


def read_cases(path: Path) -> list[Case]:
    if not path.exists():
        raise DatasetError(f"{path}: no such file")
    if path.suffix == ".jsonl":
        return _case_lines(path)
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


# ----------------------------------------------------------------------------------------------
# The MedCalc-Bench Verified format: every column of the benchmark's split, every row checked.

BENCHMARK_COLUMNS = (
    "Row Number", "Calculator ID", "Calculator Name", "Category", "Output Type", "Note ID", "Note Type",
    "Patient Note", "Question", "Relevant Entities", "Ground Truth Answer", "Lower Limit", "Upper Limit",
    "Ground Truth Explanation",
)
OUTPUT_TYPES = ("decimal", "integer", "date")


@dataclass(frozen=True)
class BenchmarkRow:
    """One row of the benchmark split. `answer` is a float, an int, an MM/DD/YYYY string or a
    (weeks, days) tuple; `lower`/`upper` are floats for numbers and the answer itself otherwise."""

    row_number: int
    calculator_id: int
    calculator_name: str
    category: str
    output_type: str
    note_id: str
    note_type: str
    note: str
    question: str
    entities: dict[str, Any]
    answer: Any
    lower: Any
    upper: Any
    explanation: str
    source: str  # file:line


@dataclass(frozen=True)
class Dataset:
    path: Path
    sha256: str  # "sha256:<hex>" of the file's bytes
    rows: tuple[BenchmarkRow, ...]
    kind: str  # "benchmark" (all 14 columns) or "reference" (the shipped cases: no notes)


def _cell_error(where: str, column: str, problem: str) -> DatasetError:
    return DatasetError(f"{where}: column {column!r}: {problem}")


def _ga(text: Any) -> tuple[int, int] | None:
    """('34 weeks', '3 days') in any of its spellings -> (34, 3); None when it is not one."""
    if isinstance(text, (list, tuple)) and len(text) == 2:
        parts = [str(p) for p in text]
    elif isinstance(text, str) and "week" in text:
        parts = [text]
    else:
        return None
    joined = " ".join(parts)
    m = re.fullmatch(r"\W*(\d+)\W*weeks?\W+(\d+)\W*days?\W*", joined)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _typed_answer(raw: Any, output_type: str, where: str, column: str) -> Any:
    if output_type == "date":
        ga = _ga(raw)
        if ga is not None:
            return ga
        text = str(raw).strip()
        try:
            dt.datetime.strptime(text, "%m/%d/%Y")
        except ValueError:
            raise _cell_error(where, column, f"{raw!r} is neither an MM/DD/YYYY date nor a gestational age "
                              "like ('34 weeks', '3 days')") from None
        return text
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise _cell_error(where, column, f"{raw!r} is not a number") from None
    if not math.isfinite(value):
        raise _cell_error(where, column, f"{raw!r} is not a finite number")
    return value


def _int_cell(raw: Any, where: str, column: str) -> int:
    try:
        f = float(raw)
        if not f.is_integer():
            raise ValueError
        return int(f)
    except (TypeError, ValueError):
        raise _cell_error(where, column, f"{raw!r} is not a whole number") from None


def _benchmark_row(r: dict[str, Any], where: str) -> BenchmarkRow:
    for col in BENCHMARK_COLUMNS:
        v = r.get(col)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            if col in ("Ground Truth Explanation", "Note Type", "Note ID"):
                r[col] = ""
                continue
            raise _cell_error(where, col, "empty")
    output_type = str(r["Output Type"]).strip()
    if output_type not in OUTPUT_TYPES:
        raise _cell_error(where, "Output Type", f"{output_type!r} is not one of {', '.join(OUTPUT_TYPES)}")
    raw_ent = r["Relevant Entities"]
    if isinstance(raw_ent, dict):
        entities = raw_ent
    else:
        try:
            entities = _entities(str(raw_ent), where)
        except DatasetError as e:
            raise _cell_error(where, "Relevant Entities", str(e).split(": ", 1)[-1]) from None
    answer = _typed_answer(r["Ground Truth Answer"], output_type, where, "Ground Truth Answer")
    lower = _typed_answer(r["Lower Limit"], output_type, where, "Lower Limit")
    upper = _typed_answer(r["Upper Limit"], output_type, where, "Upper Limit")
    if output_type == "integer" and isinstance(answer, float) and answer.is_integer() and lower == upper == answer:
        answer = lower = upper = int(answer)
    note = str(r["Patient Note"])
    if not note.strip():
        raise _cell_error(where, "Patient Note", "empty")
    return BenchmarkRow(
        row_number=_int_cell(r["Row Number"], where, "Row Number"),
        calculator_id=_int_cell(r["Calculator ID"], where, "Calculator ID"),
        calculator_name=str(r["Calculator Name"]), category=str(r["Category"]), output_type=output_type,
        note_id=str(r["Note ID"]), note_type=str(r["Note Type"]), note=note, question=str(r["Question"]),
        entities=entities, answer=answer, lower=lower, upper=upper,
        explanation=str(r["Ground Truth Explanation"]), source=where,
    )


def _check_columns(path: Path, columns: list[str]) -> None:
    missing = [c for c in BENCHMARK_COLUMNS if c not in columns]
    if missing:
        raise DatasetError(f"{path}: missing column(s) {', '.join(repr(c) for c in missing)}; the MedCalc-Bench "
                           "Verified split has the columns " + ", ".join(BENCHMARK_COLUMNS))


def _reference_rows(path: Path) -> list[BenchmarkRow]:
    """The shipped reference cases as benchmark rows without a note (for the no-model arms)."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            r = json.loads(line)
            output_type = r["output_type"]
            row = {"Row Number": n, "Calculator ID": r["calculator_id"], "Calculator Name": r["calculator_name"],
                   "Category": r["category"], "Output Type": output_type, "Note ID": "", "Note Type": "",
                   "Patient Note": "(no note: a reference case)", "Question": "", "Relevant Entities": r["entities"],
                   "Ground Truth Answer": r["answer"], "Lower Limit": r["lower_limit"],
                   "Upper Limit": r["upper_limit"], "Ground Truth Explanation": ""}
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise DatasetError(f"{where}: not a reference case ({type(e).__name__}: {e})") from None
        b = _benchmark_row(row, where)
        out.append(BenchmarkRow(**{**b.__dict__, "note": ""}))
    return out


def read_benchmark(path: Path | str) -> Dataset:
    """Read a MedCalc-Bench Verified split (.csv or .parquet) or the shipped reference cases (.jsonl).

    Checks every column and row; a problem raises `DatasetError` naming file, row and column.
    Never downloads anything: the user brings the file.
    """
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file (bring the benchmark's test split as CSV or parquet; "
                           "see the user guide, docs/guide/evaluators.md)")
    digest = file_hash(path)
    suffix = path.suffix.lower()
    rows: list[BenchmarkRow] = []
    if suffix == ".jsonl":
        return Dataset(path, digest, tuple(_reference_rows(path)), "reference")
    if suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            _check_columns(path, list(reader.fieldnames or []))
            for n, r in enumerate(reader, 2):
                rows.append(_benchmark_row(dict(r), f"{path}:{n}"))
    elif suffix == ".parquet":
        try:
            import pandas as pd
        except ImportError:
            from registry.terminal import install_hint

            raise DatasetError(f"{path}: reading parquet needs pyarrow ({install_hint('parquet')})") from None
        try:
            frame = pd.read_parquet(path)
        except Exception as e:  # noqa: BLE001 - pyarrow raises many types for a bad file
            raise DatasetError(f"{path}: not a readable parquet file ({type(e).__name__}: {e})") from None
        _check_columns(path, [str(c) for c in frame.columns])
        for n, rec in enumerate(frame.to_dict(orient="records"), 1):
            rows.append(_benchmark_row(rec, f"{path}:row {n}"))
    else:
        raise DatasetError(f"{path}: unsupported format {path.suffix!r}; give the benchmark split as .csv or "
                           ".parquet, or the shipped reference cases (.jsonl)")
    seen: dict[int, str] = {}
    for row in rows:
        if row.row_number in seen:
            raise _cell_error(row.source, "Row Number", f"{row.row_number} repeats {seen[row.row_number]}")
        seen[row.row_number] = row.source
    return Dataset(path, digest, tuple(rows), "benchmark")
