"""The working against the benchmark's own explanations of the 2,200 reference cases, number by number.

    python bench/working_figures.py [--explanations FILE] [--format text|json]

For each reference case, `compute(..., working=True)` (benchmark variant) and the benchmark's explanation of the
same case (tests/solver/data/medcalc/reference_explanations.jsonl.gz: the text its reference code prints) are
compared as numbers:

- shown: the numbers the working shows beyond the inputs as given (every step's value and running total, other
  than a step that only restates an input), and how many of them the explanation shows too;
- covered: the explanation's case-specific numbers, and how many of them the working shows (any step, inputs
  included, as the explanation counts its inputs too).

A number matches when one, rounded to the decimals the other is written with, equals the other (the
explanation writes 22.18021 as 22.2 in one sentence and 22.18021 in the next). The explanation's case-specific
numbers leave out (1) the numbers of its generic text: a sentence or line it prints word for word in a quarter
or more of that calculator's cases (the formula statement, the list of criteria, "the current score is 0"),
(2) the formula's own numbers: a registry constant or band edge of the calculator or of one it depends on (a
threshold quoted in "greater than 44 years"; a whole number under 5 is kept, as it is as likely a case's points),
and the unit data's numbers (formulas/units.yaml: its factors, the ratio of two units of one table, molar masses;
whole numbers under 10 kept, for the same reason), (3) numbers inside words (CHA2DS2, CURB-65) and dates' parts.
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import re
import sys
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterable

ROOT = Path(__file__).resolve().parent.parent
EXPLANATIONS = ROOT / "tests" / "solver" / "data" / "medcalc" / "reference_explanations.jsonl.gz"
GENERIC_SHARE = 0.25  # a sentence printed word for word in this share of a calculator's cases is generic text

# a number not glued to a word (CURB-65, CHA2DS2, mL/min/1.73) nor part of a date (05/11/2008) or of a power of ten
# written out (x10^9/L); 1e-06 is one number
_NUMBER = re.compile(r"(?<![\w/.^])-?\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?(?![\w/^]|\.\d)")
_SENTENCE = re.compile(r"(?<=[.:!?])\s+|\n+")


_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")


def numbers(text: str) -> list[str]:
    """The numbers of a text as written (so their decimals are known), and its dates as ISO text."""
    found = [m.group(0).replace(",", "") for m in _NUMBER.finditer(text)]
    return found + [f"{y}-{int(m):02d}-{int(d):02d}" for m, d, y in _DATE.findall(text)]


def matches(value: float, written: str) -> bool:
    """Whether `value` and the number `written` agree at the decimals of the less precise of the two (a date: the
    same day)."""
    if isinstance(value, str) or _ISO.match(written):
        return value == written
    try:
        e = float(written)
        d = max(0, -int(Decimal(written).as_tuple().exponent))  # the decimals written (1e-06: 6, 9.9e-05: 6)
    except (ValueError, ArithmeticError):
        return False
    if not math.isfinite(value):
        return False
    if abs(value - e) <= 0.5 * 10 ** -d + 1e-9 * max(1.0, abs(e)):
        return True
    text = repr(float(value))
    dv = len(text.split(".")[1]) if "." in text and "e" not in text else 12
    return dv < d and (value != 0 or e == 0) and abs(round(e, dv) - value) <= 1e-9 * max(1.0, abs(value))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def generic_sentences(explanations: Iterable[str]) -> set[str]:
    texts = list(explanations)
    counts = Counter(s for t in texts for s in set(_sentences(t)))
    return {s for s, n in counts.items() if n >= max(2, GENERIC_SHARE * len(texts))}


def formula_numbers(slug: str) -> set[float]:
    """The registry's own numbers of a calculator and its dependencies: constants and band edges."""
    from solver.library import resolve

    out: set[float] = set()
    todo, seen = [slug], set()
    while todo:
        calc = resolve(todo.pop())
        if calc.slug in seen:
            continue
        seen.add(calc.slug)
        todo.extend(calc.depends_on)
        for c in calc.constants.values():
            if isinstance(c.value, (int, float)):
                out.add(float(c.value))
        for t in calc.tables.values():
            for b in t.bands or ():
                out.update(float(x) for x in (b.ge, b.gt, b.le, b.lt) if x is not None)
    return {x for x in out if not (x == int(x) and abs(x) < 5)} | unit_numbers()


def _walk(x: Any) -> Iterable[float]:
    if isinstance(x, dict):
        for v in x.values():
            yield from _walk(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _walk(v)
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        yield float(x)


def unit_numbers() -> set[float]:
    """The numbers of the registry's unit data, and the ratio of every two units of one of its tables."""
    from registry.loader import get_registry

    units = get_registry().units
    assert units is not None
    data = units.model_dump()
    out = set(_walk(data))
    for name in ("mass", "amount", "volume", "weight", "height"):
        table = data.get(name) or {}
        out.update(a / b for a in table.values() for b in table.values() if a and b)
    return {x for x in out if x != int(x) or abs(x) >= 10}


def _given_numbers(entities: dict[str, Any]) -> list[float]:
    out: list[float] = []
    for v in entities.values():
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, (int, float)) and not isinstance(x, bool):
                out.append(float(x))
    return out


def _shown(working: Iterable[Any]) -> tuple[list[Any], list[Any]]:
    """(every number of the working, the numbers beyond the inputs as given); a date as ISO text."""
    every: list[Any] = []
    beyond: list[Any] = []
    for s in working:
        for v, restated in ((s.value, s.kind == "input"), (s.total, False)):
            if hasattr(v, "isoformat"):
                every.append(v.isoformat())
                if not restated:
                    beyond.append(v.isoformat())
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                every.append(float(v))
                if not restated:
                    beyond.append(float(v))
            elif isinstance(v, tuple):  # (weeks, days)
                every.extend(map(float, v))
                beyond.extend(map(float, v))
    return every, beyond


def case_figures(working: Any, explanation: str, generic: set[str], own: set[float],
                 given: list[float]) -> dict[str, int]:
    every, beyond = _shown(working)
    written = numbers(explanation)
    specific = [w for s in _sentences(explanation) if s not in generic for w in numbers(s)
                if not any(matches(c, w) for c in own)]
    derived = [w for w in specific if not any(matches(g, w) for g in given)]
    return {"shown": len(beyond), "shown_found": sum(any(matches(v, w) for w in written) for v in beyond),
            "specific": len(specific), "specific_found": sum(any(matches(v, w) for v in every) for w in specific),
            "derived": len(derived), "derived_found": sum(any(matches(v, w) for v in every) for w in derived)}


def figures(path: Path = EXPLANATIONS, variant: str = "benchmark") -> dict[str, dict[str, Any]]:
    """Per calculator: the cases, the working's numbers found in the explanation, the explanation's found in the
    working, and the calculators whose working does not end at the answer."""
    from solver.data import REFERENCE_CASES
    from solver.library import compute, resolve

    cases = [json.loads(line) for line in REFERENCE_CASES.read_text().splitlines() if line.strip()]
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        explained = [json.loads(line) for line in fh if line.strip()]
    by_calc: dict[int, list[str]] = defaultdict(list)
    for e in explained:
        by_calc[e["calculator_id"]].append(e["explanation"])
    generic = {k: generic_sentences(v) for k, v in by_calc.items()}
    out: dict[str, dict[str, Any]] = {}
    for case, e in zip(cases, explained):
        ident = case["calculator_id"]
        calc = resolve(ident)
        row = out.setdefault(calc.slug, {"id": ident, "cases": 0, "ends_at_answer": 0, "shown": 0, "shown_found": 0,
                                         "specific": 0, "specific_found": 0, "derived": 0, "derived_found": 0,
                                         "own": formula_numbers(calc.slug)})
        res = compute(ident, case["entities"], variant=variant, working=True)
        row["cases"] += 1
        row["ends_at_answer"] += bool(res.working) and res.working[-1].value == res.value
        for k, v in case_figures(res.working, e["explanation"], generic[ident], row["own"],
                                 _given_numbers(case["entities"])).items():
            row[k] += v
    for row in out.values():
        del row["own"]
    return out


def totals(rows: dict[str, dict[str, Any]]) -> dict[str, float]:
    t = {k: sum(r[k] for r in rows.values()) for k in ("cases", "ends_at_answer", "shown", "shown_found", "specific",
                                                        "specific_found", "derived", "derived_found")}
    t["shown_share"] = t["shown_found"] / t["shown"] if t["shown"] else 1.0
    t["specific_share"] = t["specific_found"] / t["specific"] if t["specific"] else 1.0
    t["derived_share"] = t["derived_found"] / t["derived"] if t["derived"] else 1.0
    return t


def table(rows: dict[str, dict[str, Any]]) -> str:
    lines = [f"{'calculator':<33} {'id':>3} {'shown':>11} {'covered':>11} {'derived':>11}"]
    for slug, r in sorted(rows.items(), key=lambda kv: kv[1]["id"]):
        a = f"{r['shown_found']}/{r['shown']}"
        b = f"{r['specific_found']}/{r['specific']}"
        c = f"{r['derived_found']}/{r['derived']}"
        lines.append(f"{slug[:33]:<33} {r['id']:>3} {a:>11} {b:>11} {c:>11}")
    t = totals(rows)
    lines.append(f"{'all':<33} {'':>3} {t['shown_share']:>11.1%} {t['specific_share']:>11.1%} "
                 f"{t['derived_share']:>11.1%}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="The working's numbers against the benchmark's explanations "
                                 "of the 2,200 reference cases, per calculator.")
    ap.add_argument("--explanations", type=Path, default=EXPLANATIONS, help="the explanations (JSON lines, .gz too)")
    ap.add_argument("--format", choices=("text", "json"), default="text")
    args = ap.parse_args(argv)
    rows = figures(args.explanations)
    if args.format == "json":
        print(json.dumps({"calculators": rows, "totals": totals(rows)}, indent=1))
    else:
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
