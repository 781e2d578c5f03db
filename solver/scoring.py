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
