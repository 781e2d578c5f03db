"""The benchmark's scoring rules: decimals within the row's limits, everything else exact."""
from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

WINDOW_CATEGORIES = {"lab test", "physical", "dosage"}


def parse_date(text: str) -> dt.date:
    m, d, y = (int(p) for p in text.split("/"))
    return dt.date(y, m, d)


def parse_gestational_age(answer: Any) -> tuple[int, int]:
    """('N weeks', 'M days') or [N, M] -> (N, M)."""
    if isinstance(answer, str):
        nums = re.findall(r"\d+", answer)
        if len(nums) != 2:
            raise ValueError(f"cannot read a gestational age from {answer!r}")
        return int(nums[0]), int(nums[1])
    w, d = answer
    if isinstance(w, str):
        w = int(re.findall(r"\d+", w)[0])
    if isinstance(d, str):
        d = int(re.findall(r"\d+", d)[0])
    return int(w), int(d)


def is_correct(value: Any, answer: Any, lower: Any, upper: Any) -> bool:
    """True when `value` scores correct against a benchmark row (answer and limits as stored)."""
    if value is None:
        return False
    if isinstance(value, dt.date):
        return isinstance(answer, str) and "/" in answer and parse_date(answer) == value
    if isinstance(value, tuple):
        try:
            return parse_gestational_age(answer) == value
        except (ValueError, TypeError, IndexError):
            return False
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    lo, hi = float(lower), float(upper)
    if lo != hi:
        return min(lo, hi) <= value <= max(lo, hi)
    return value == float(answer)


# ----------------------------------------------------------------------------------------------
# The pinned scorer and the final-answer line of the text arms (the paper's Appendix A.1, Scoring).

_NUMBER = re.compile(r"[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+−]?\.\d+")
_US_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_GA = re.compile(r"(\d+)\s*(?:weeks?|wks?|w)\b\W*(?:and\s*)?(\d+)\s*(?:days?|d)\b", re.IGNORECASE)
_PAIR = re.compile(r"[(\[]\s*(\d+)\s*,\s*(\d+)\s*[)\]]")
# "Answer: 42", "**Final answer:** 42", "Final Answer = 42"
_ANSWER_LINE = re.compile(r"^[\s>*_#`-]*(?:final\s+answer|answer)\s*[*_`]*\s*[:=]", re.IGNORECASE)


def _as_date(x: Any) -> dt.date | None:
    if isinstance(x, dt.datetime):
        return x.date()
    if isinstance(x, dt.date):
        return x
    if not isinstance(x, str):
        return None
    s = x.strip()
    for rx, order in ((_US_DATE, "mdy"), (_ISO_DATE, "ymd")):
        m = rx.search(s)
        if m:
            a, b, c = (int(g) for g in m.groups())
            y, mo, d = (c, a, b) if order == "mdy" else (a, b, c)
            try:
                return dt.date(y, mo, d)
            except ValueError:
                return None
    return None


def _as_ga(x: Any) -> tuple[int, int] | None:
    if isinstance(x, (tuple, list)) and len(x) == 2:
        try:
            return parse_gestational_age(x)
        except (ValueError, TypeError, IndexError):
            return None
    if isinstance(x, str):
        m = _GA.search(x) or _PAIR.search(x)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


def _as_number(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, str):
        m = _NUMBER.search(x)
        if m:
            v = float(m.group(0).replace(",", "").replace("−", "-"))
            return v if math.isfinite(v) else None
    return None


def is_gestational_age(ground_truth: Any) -> bool:
    """The benchmark writes a gestational age as a 'date' output: ('34 weeks', '3 days')."""
    return _as_ga(ground_truth) is not None and not isinstance(ground_truth, (int, float))


def score(answer: Any, output_type: str, ground_truth: Any, lower: Any, upper: Any) -> bool:
    """True when `answer` scores correct under the benchmark's rules.

    decimal: within [lower, upper]; integer: exactly the gold (or within the row's limits where the
    benchmark gives a window: its dosage rows typed integer carry one); date: the same calendar day
    (MM/DD/YYYY or ISO, or a `date`); gestational age: exact (weeks, days), from a tuple or the
    benchmark's ("34 weeks", "3 days") form. An answer that cannot be read is wrong.
    """
    if answer is None:
        return False
    kind = output_type.strip().lower()
    if kind in ("gestational age", "gestational_age") or (kind == "date" and is_gestational_age(ground_truth)):
        got, want = _as_ga(answer), _as_ga(ground_truth)
        return got is not None and got == want
    if kind == "date":
        got_d, want_d = _as_date(answer), _as_date(ground_truth)
        return got_d is not None and got_d == want_d
    if isinstance(answer, (dt.date, tuple, list)):
        return False
    value = _as_number(answer)
    if value is None:
        return False
    lo, hi = _as_number(lower), _as_number(upper)
    if kind == "decimal" or (lo is not None and hi is not None and lo != hi):
        if lo is None or hi is None:
            gold = _as_number(ground_truth)
            return gold is not None and value == gold
        return min(lo, hi) <= value <= max(lo, hi)
    if kind == "integer":
        gold = _as_number(ground_truth)
        return gold is not None and value == gold
    raise ValueError(f"unknown output type {output_type!r}; expected decimal, integer or date")


def final_answer_line(reply: str | None) -> str | None:
    """The text after the last 'Answer:' / 'Final answer:' line of a reply, or None."""
    from solver.replies import too_long

    if not reply or too_long(reply):
        return None
    found = None
    for line in reply.splitlines():
        m = _ANSWER_LINE.match(line)
        if m:
            found = line[m.end():].strip().strip("*_` ")
    return found


def read_answer(reply: str | None, output_type: str, ground_truth: Any = None) -> tuple[str, Any]:
    """(`answered` | `no_answer` | `unreadable`, value) for a text arm's reply.

    The value is the first number on the final-answer line (a date, or a (weeks, days) pair, for
    date outputs); no final-answer line is `no_answer`, a line without a readable value `unreadable`.
    """
    from solver.replies import too_long

    if too_long(reply):  # never parsed: bounded cost whatever the model sent
        return "unreadable", None
    line = final_answer_line(reply)
    if line is None:
        return "no_answer", None
    kind = output_type.strip().lower()
    if kind in ("gestational age", "gestational_age") or (kind == "date" and is_gestational_age(ground_truth)):
        ga = _as_ga(line)
        return ("answered", list(ga)) if ga else ("unreadable", None)
    if kind == "date":
        d = _as_date(line)
        return ("answered", d.strftime("%m/%d/%Y")) if d else ("unreadable", None)
    v = _as_number(line)
    if v is None:
        return "unreadable", None
    return "answered", (int(v) if v.is_integer() and kind == "integer" else v)


def read_value(text: Any, kind: str) -> tuple[str, Any]:
    """(`answered` | `no_answer` | `unreadable`, value) from the answer a log recorded."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return "no_answer", None
    if kind == "gestational_age":
        ga = _as_ga(text)
        return ("answered", list(ga)) if ga else ("unreadable", None)
    if kind == "date":
        d = _as_date(text)
        return ("answered", d.strftime("%m/%d/%Y")) if d else ("unreadable", None)
    v = _as_number(text)
    if v is None:
        return "unreadable", None
    if kind == "integer":
        return "answered", int(round(v))
    return "answered", v


def rescore_row(row: dict[str, Any]) -> None:
    """Re-read an imported row's recorded answer with the current reading (`formula score` on an imported
    run; it lives here, below the runner and the importers, so that neither reaches up into the other)."""
    kind = "gestational_age" if row.get("output_type") == "date" and isinstance(row.get("ground_truth"), list) \
        else str(row.get("output_type"))
    outcome, answer = read_value(row.get("source_answer"), kind)
    row["outcome"], row["answer"] = outcome, answer
    row["table8"] = None if outcome == "answered" else outcome
