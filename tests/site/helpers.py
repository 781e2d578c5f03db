"""Synthetic stored runs for the site tests, and reading the pages of the built site."""
from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable

from registry.loader import get_registry

# Hosts that appear only as XML namespaces (never fetched).
NAMESPACE_HOSTS = {"www.w3.org"}
URL_RE = re.compile(r"(?:https?:)?//([A-Za-z0-9.-]+\.[A-Za-z]{2,}|\d+\.\d+\.\d+\.\d+|localhost)(?::\d+)?")


def benchmark_ids() -> list[int]:
    return sorted(c.medcalc_id for c in get_registry().calculators.values() if c.medcalc_id is not None)


def current_text_versions() -> dict[int, str]:
    """Benchmark id -> the active text version, read from the rendered catalogue (formulas/texts/index.json)."""
    reg = get_registry()
    index = json.loads((reg.formulas_dir / "texts" / "index.json").read_text(encoding="utf-8"))
    return {e["medcalc_id"]: e["version"] for e in index["texts"] if e.get("medcalc_id") is not None}


def make_run(root: Path, arm: str, correct: Callable[[int, int], bool | None], *, rows_per_calc: int = 4,
             seeds: tuple[int, ...] = (42,), model: str = "none", lock: str = "sha256:test",
             text_version: Callable[[int], str] = lambda cid: "0.0.1") -> Path:
    """A run folder: `correct(calculator_id, k)` gives True/False, or None for no answer (outcome no_answer);
    `text_version(calculator_id)` is the supplied-text version the run records."""
    d = root / arm
    d.mkdir(parents=True)
    (d / "manifest.json").write_text(json.dumps({"arm": arm, "model": model, "engine": "synthetic",
                                                 "registry_lock_digest": lock, "seeds": list(seeds)}))
    rows, n = [], 0
    for seed in seeds:
        for cid in benchmark_ids():
            for k in range(rows_per_calc):
                ok = correct(cid, k)
                rows.append({"row_number": cid * 100 + k, "calculator_id": cid, "seed": seed, "arm": arm,
                             "model": model, "prompt_sha256": None, "text_version": text_version(cid),
                             "text_sha256": None, "reply": None, "program": None,
                             "outcome": "no_answer" if ok is None else "answered",
                             "answer": None if ok is None else 1.0, "correct": bool(ok), "ground_truth": 1.0,
                             "lower_limit": 0.95, "upper_limit": 1.05})
                n += 1
    (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return d


# Reading the built pages


def page(built, rel: str) -> str:
    return (built.out / rel).read_text(encoding="utf-8")


def rows(text: str, table_no: int = 0) -> list[list[str]]:
    """The body cells (as text) of the n-th table of a page."""
    t = re.findall(r"<table.*?</table>", text, re.S)[table_no]
    body = re.search(r"<tbody>(.*?)</tbody>", t, re.S).group(1)
    out = []
    for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        out.append([html.unescape(re.sub(r"<[^>]+>", "", td)).strip()
                    for td in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)])
    return out


def table_after(text: str, heading_id: str) -> list[list[str]]:
    """The body cells of the first table after the heading with this id."""
    at = text.index(f'id="{heading_id}"')
    return rows(text[at:], 0)


def header_after(text: str, heading_id: str) -> list[str]:
    at = text.index(f'id="{heading_id}"')
    head = re.search(r"<thead>(.*?)</thead>", text[at:], re.S).group(1)
    return [html.unescape(re.sub(r"<[^>]+>", "", th)).strip() for th in re.findall(r"<th[^>]*>(.*?)</th>", head, re.S)]


# Raw Python values in the built pages (issue 39)

# `None` as a value (a cell, a field, a repr inside a list); "None of the eleven factors" is English
_NONE = re.compile(r"\bNone\b(?!\s+[a-z])")
_EMPTY = re.compile(r"\{\}|\[\]")
_NEG_ZERO = re.compile(r"(?<![\w.])[-\u2212]0(?:\.0+)?(?![\d.])")
# a Python boolean as a value (issue 50: a `True` default reads "yes"); "True positive rate" is English
_BOOL = re.compile(r"(?:^|[\s(\[:,])(True|False)(?:$|[\s)\],;])(?!\s*[a-z])")
# where an ellipsis means a value was cut: a cell, a definition, code, a list item, a caption
_VALUE_TAGS = {"td", "th", "dd", "dt", "code", "pre", "li", "caption", "figcaption"}
_HIDDEN_TAGS = {"script", "style", "template"}


class _TextWalker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.found: list[tuple[str, str, str]] = []  # (what, enclosing tag, text)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if any(t in _HIDDEN_TAGS for t in self.stack):
            return
        text = " ".join(data.split())
        where = self.stack[-1] if self.stack else ""
        for what, pat in (("None", _NONE), ("empty container", _EMPTY), ("negative zero", _NEG_ZERO),
                          ("Python boolean", _BOOL)):
            if pat.search(text):
                self.found.append((what, where, text))
        if "\u2026" in text and any(t in _VALUE_TAGS for t in self.stack):
            self.found.append(("ellipsis in a value", where, text))


_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def raw_values(site: Path) -> list[str]:
    """Every place a built page's visible text shows a raw Python value: `None`, `{}` or `[]`, a negative
    zero (-0.00), `True` or `False`, or a value cut with an ellipsis; as 'page: what in <tag>: text'."""
    out = []
    for f in sorted(site.rglob("*.html")):
        walker = _TextWalker()
        walker.feed(f.read_text(encoding="utf-8"))
        out += [f"{f.relative_to(site)}: {what} in <{tag}>: {text[:160]}" for what, tag, text in walker.found]
    return out
