"""Recorded facts (a run's manifest, nested as the runner or importer wrote it) as definition lists for people.

A reader never sees a raw Python or JSON value: an absent or null field reads "not recorded", a mapping becomes
a nested list of its fields, a mapping of like records (every formula text's version and hash) a table folded
under its count, a list its items; nothing is cut short. Absolute folders are left out (they are the layout of
the machine that ran it); the file name stays.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from formula_site.markup import Raw, esc, table

NOT_RECORDED = '<span class="fr-note">not recorded</span>'
FOLD_AT = 8  # entries: a longer mapping or list is folded under <details>, its count in the summary
MAX_DEPTH = 6  # manifests nest two or three levels; deeper is shown flat (bounded work for any manifest)

_ABS = re.compile(r"(?<![\w.:/])/(?:[^/\s\"',;]+/)+")


def no_paths(text: str) -> str:
    """Text with absolute folders dropped, the file name kept: /home/a/runs/x.jsonl -> x.jsonl."""
    return _ABS.sub("", text)


def label(key: str) -> str:
    """A manifest key as a term: `rows_expected` -> "rows expected"."""
    return key.replace("_", " ")


def definition_list(items: Sequence[tuple[str, Any]], cls: str = "fr-details") -> str:
    """<dl> of (term, value); a value is Raw HTML, or any recorded value (see `value_html`)."""
    body = "".join(f"<dt>{esc(term)}</dt><dd>{v.html if isinstance(v, Raw) else value_html(v)}</dd>"
                   for term, v in items)
    return f'<dl class="{cls}">{body}</dl>'


def value_html(v: Any, depth: int = 0) -> str:
    """One recorded value as HTML, escaped."""
    if v is None or v == {} or (isinstance(v, str) and not v.strip()):
        return NOT_RECORDED
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        return esc(v)
    if isinstance(v, str):
        text = esc(no_paths(v))
        return text if " " in v.strip() else f'<code class="fr-break">{text}</code>'
    if depth >= MAX_DEPTH:
        return esc(no_paths(str(v)))
    if isinstance(v, dict):
        return _mapping(v, depth)
    if isinstance(v, (list, tuple)):
        return _sequence(list(v), depth)
    return esc(no_paths(str(v)))


def _fold(summary: str, inner: str, n: int) -> str:
    if n <= FOLD_AT:
        return inner
    return f"<details><summary>{esc(summary)}</summary>{inner}</details>"


def _records(v: dict[str, Any]) -> list[str] | None:
    """The shared fields when every value is a mapping of scalars with the same keys (a table), else None."""
    if len(v) < 2 or not all(isinstance(x, dict) and x for x in v.values()):
        return None
    keys = list(next(iter(v.values())))
    if any(list(x) != keys or any(isinstance(y, (dict, list)) for y in x.values()) for x in v.values()):
        return None
    return keys


def _mapping(v: dict[str, Any], depth: int) -> str:
    keys = _records(v)
    if keys is not None:
        rows = [[Raw(f"<code>{esc(k)}</code>", sort=str(k))] + [Raw(value_html(x.get(f), depth + 1)) for f in keys]
                for k, x in v.items()]
        return _fold(f"{len(v)} entries", table([""] + [label(f) for f in keys], rows, sortable=False), len(v))
    items = [(label(str(k)), Raw(value_html(x, depth + 1))) for k, x in v.items()]
    return _fold(f"{len(v)} entries", definition_list(items, "fr-details fr-nested"), len(v))


def _sequence(v: list[Any], depth: int) -> str:
    if not v:
        return "none"
    if all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v) and len(v) <= FOLD_AT:
        return ", ".join(value_html(x, depth + 1) for x in v)
    inner = "<ol>" + "".join(f"<li>{value_html(x, depth + 1)}</li>" for x in v) + "</ol>"
    return _fold(f"{len(v)} items", inner, len(v))
