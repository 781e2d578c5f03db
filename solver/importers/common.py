"""What every importer shares: reading JSON lines, MedCalc-Bench's tolerance rule, re-scoring with the
pinned scorer, and writing the run folder (`results.jsonl` + `manifest.json`, as `formula run` writes).

The tolerance rule is MedCalc-Bench's own: a decimal answer is right within the gold plus or minus 5 %;
an integer answer is rounded to the nearest whole number (Python's `round`, as their evaluation does)
and must equal the gold; dates and gestational ages must match exactly. The rule only sets the limits
and reads the answer; the verdict is `solver.scoring.score`, the same function the runner uses.
"""
from __future__ import annotations

import hashlib
import json
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from registry import jsontext
from solver.importers import ImportFailure, SourceFile, SourceRow
from solver.scoring import _as_date, _as_ga, _as_number, read_value, score

SEED = 0  # an imported run holds one answer per case; it is stored as seed 0
TOLERANCE = 0.05
RULE = ("MedCalc-Bench's rule: decimal answers within the gold plus or minus 5 %; integer answers rounded "
        "to the nearest whole number, then equal to the gold; dates and gestational ages exactly")


def safe_label(text: Any) -> str | None:
    """A name read from a log or a file name (a model, an arm) when it is printable text, else None:
    no control characters, not empty, not only dots (a file `...jsonl` has the stem `..`)."""
    if not isinstance(text, str) or not text.strip() or set(text) <= {"."}:
        return None
    if any(unicodedata.category(ch)[0] == "C" for ch in text) or len(text) > 200:
        return None
    return text


def safe_name(text: Any) -> str | None:
    """`text` when it can name a folder inside --out: a safe label that is one path component (no `/` or
    `\\`, not `.` or `..`, not hidden); else None."""
    label = safe_label(text)
    if label is None or "/" in label or "\\" in label or label.startswith(".") or len(label) > 100:
        return None
    return label


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; anything else is an ImportFailure naming the line.

    Bounded (registry.jsontext): a line over `LINE_MAX` bytes, a file over `LOG_MAX` bytes or over one budget of
    values is refused; so are a duplicate key and NaN or Infinity, which would make a row say two things."""
    seen = False
    try:
        for n, obj in jsontext.read_lines(path, file_limit=jsontext.LOG_MAX, strict=True):
            if not isinstance(obj, dict):
                raise ImportFailure(f"{path}:{n}: expected a JSON object, got {type(obj).__name__}")
            seen = True
            yield n, obj
    except FileNotFoundError:
        raise ImportFailure(f"{path}: no such file") from None
    except jsontext.LineError as e:
        raise ImportFailure(f"{path}:{e.line}: not a JSON line ({e}); expected JSONL, one JSON object per "
                            "line") from None
    except OSError as e:
        raise ImportFailure(f"{path}: not readable ({e})") from None
    if not seen:
        raise ImportFailure(f"{path}: no rows")


def output_kind(calc: Any) -> str:
    """decimal | integer | date | gestational_age, from the registry."""
    return str(calc.output.kind.value)


def gold_value(kind: str, text: Any, where: str) -> Any:
    """The gold answer as the runner stores it (number, MM/DD/YYYY, [weeks, days])."""
    if kind == "gestational_age":
        ga = _as_ga(text)
        if ga is None:
            raise ImportFailure(f"{where}: cannot read a gestational age from the gold answer {text!r}")
        return list(ga)
    if kind == "date":
        d = _as_date(text)
        if d is None:
            raise ImportFailure(f"{where}: cannot read a date from the gold answer {text!r}")
        return d.strftime("%m/%d/%Y")
    v = _as_number(text)
    if v is None:
        raise ImportFailure(f"{where}: cannot read a number from the gold answer {text!r}")
    return int(v) if kind == "integer" and v.is_integer() else v


def limits(kind: str, gold: Any) -> tuple[Any, Any]:
    """MedCalc-Bench's window: gold -/+ 5 % for decimals; the gold itself otherwise."""
    if kind == "decimal":
        lo, hi = gold * (1 - TOLERANCE), gold * (1 + TOLERANCE)
        return min(lo, hi), max(lo, hi)
    return gold, gold


def scored_type(kind: str) -> str:
    """The output type a row carries: the benchmark writes gestational ages as `date`."""
    return "date" if kind == "gestational_age" else kind


@dataclass
class Difference:
    file: str
    line: int
    row_number: int
    ours: bool
    theirs: bool
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "row_number": self.row_number,
                "ours": "Correct" if self.ours else "Incorrect", "theirs": "Correct" if self.theirs else "Incorrect",
                "why": self.why}


def explain(src: SourceRow, kind: str, outcome: str, answer: Any, gold: Any, lo: Any, hi: Any) -> str:
    """Why our verdict differs from the log's, in the rule's terms."""
    said = json.dumps(src.answer_text, ensure_ascii=False)[:80]
    if outcome != "answered":
        return f"no value can be read from the recorded answer {said}"
    if kind == "decimal":
        return (f"recorded answer {said} read as {answer}; the window gold {gold} -/+ 5 % is "
                f"[{lo:.6g}, {hi:.6g}]")
    if kind == "integer":
        return f"recorded answer {said} rounds to {answer}; the gold is {gold}"
    return f"recorded answer {said} read as {answer}; the gold is {gold} (exact match)"


@dataclass
class Built:
    rows: list[dict[str, Any]]
    differences: list[Difference] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _calc(reg: Any, src: SourceFile, r: SourceRow) -> Any:
    try:
        calc = reg.by_id(r.calculator_id)
    except KeyError:
        calc = None
    if calc is None:
        raise ImportFailure(f"{src.path}:{r.line}: Calculator ID {r.calculator_id} is not a benchmark calculator of "
                            "the registry (see `formula list`)")
    return calc


def build_rows(src: SourceFile, reg: Any, *, arm: str, model: str | None) -> Built:
    """Results rows of one log, re-scored; every verdict that differs from the log's own is listed."""
    out = Built(rows=[])
    for r in src.rows:
        calc = _calc(reg, src, r)
        kind = output_kind(calc)
        where = f"{src.path}:{r.line}"
        gold = gold_value(kind, r.ground_truth, where)
        lo, hi = (r.lower, r.upper) if r.lower is not None and r.upper is not None else limits(kind, gold)
        outcome, answer = read_value(r.answer_text, kind)
        correct = outcome == "answered" and bool(score(answer, scored_type(kind), gold, lo, hi))
        category = calc.category.value
        if r.category is not None and r.category != category and not category.startswith(str(r.category)):
            out.warnings.append(f"{where}: Category {r.category!r}; the registry files calculator "
                                f"{calc.medcalc_id} under {category!r} (the registry's is used)")
        if r.source_verdict is not None and r.source_verdict != correct:
            out.differences.append(Difference(src.path.name, r.line, r.row_number, correct, r.source_verdict,
                                              explain(r, kind, outcome, answer, gold, lo, hi)))
        out.rows.append({
            "row_number": r.row_number, "calculator_id": r.calculator_id, "calculator": calc.slug, "seed": r.seed,
            "arm": arm, "arm_version": "imported", "model": model, "prompt_sha256": None,
            "text_slug": None, "text_version": None, "text_sha256": None,
            "reply": r.reply, "program": None, "outcome": outcome, "answer": answer, "correct": correct,
            "ground_truth": gold, "lower_limit": lo, "upper_limit": hi, "output_type": scored_type(kind),
            "category": category, "table8": None if outcome == "answered" else outcome, "error": None,
            "example": None, "calls": r.calls,
            "note_id": r.note_id, "source_answer": r.answer_text, "source_category": r.category,
            "source_result": None if r.source_verdict is None else ("Correct" if r.source_verdict else "Incorrect"),
            "source_file": src.path.name, "source_line": r.line,
            "text_shown": False, "audit_group": calc.audit_group,
        })
    return out


def check_rows(sources: Sequence[SourceFile]) -> None:
    """One run: every file on the same dataset, no case twice."""
    first = sources[0]
    for s in sources[1:]:
        if s.dataset.key != first.dataset.key:
            raise ImportFailure(f"{s.path}: scored on {s.dataset.title}, but {first.path} on {first.dataset.title}; "
                                "one run holds one dataset: import them as separate runs")
    seen: dict[tuple[int, int], str] = {}
    for s in sources:
        for r in s.rows:
            key = (r.row_number, r.seed)
            if key in seen:
                raise ImportFailure(f"{s.path}:{r.line}: Row Number {r.row_number} is already on {seen[key]}; "
                                    "a run holds each case once")
            seen[key] = f"{s.path}:{r.line}"
