"""A name that names a label: after a labelled constant changes its label, no text of the entry may keep the old one.

A constant's `label` names the variant its value is ("Hillier factor"); texts show it through
`{{ label.NAME }}`, so a fix that changes value and label updates them. But a calculator's own names are
plain text: after `formula fix --set correction=0.016 --label correction='Katz factor'` the formula's name
"Hillier sodium correction for hyperglycemia" would still name Hillier beside 0.016. This module finds such
leftovers: in the names (the calculator's `name` and `formula.name`) any word that only the old label has
("Hillier": "factor" is in both); in prose (the active text as written, constants' and inputs' descriptions)
the old label as a phrase, since prose may rightly compare the variants ("Katz (1973) proposed a smaller
factor than Hillier (1999)"). `formula fix` warns, naming `--name`; `formula validate` reports
R-LABEL-NAME (a warning: the registry stays valid). The formula's cited publication is checked the same way, for an
old label and for an old formula name (`fix --name`): `--publication FILE` cites the new source in the same release.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from registry.schema import Calculator

# words a label shares with names without naming its variant ("Hillier factor" names Hillier, not "factor")
GENERIC = frozenset({"factor", "formula", "equation", "correction", "corrected", "score", "version", "method",
                     "constant", "coefficient", "rule", "criteria", "the", "and", "for", "with", "value", "index"})
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]+")


def _words(text: str) -> set[str]:
    return {w.casefold().removesuffix("'s") for w in _WORD.findall(text)}


def distinctive(old: str, new: str) -> set[str]:
    """The words of `old` that name its variant: not in `new`, not generic, three letters or more."""
    return {w for w in _words(old) - _words(new) if len(w) >= 3 and w not in GENERIC}


def _named(text: str, words: set[str]) -> list[str]:
    return sorted(w for w in _words(text) if w in words)


def _phrase(text: str, label: str) -> bool:
    return re.search(rf"(?<![A-Za-z]){re.escape(label)}(?![A-Za-z])", text, re.I) is not None


def leftovers(calc: Calculator, changed: Mapping[str, tuple[str, str]]) -> list[tuple[tuple[Any, ...], str, str]]:
    """(YAML location, field, what it still says) for each text of `calc` that keeps an old label; `changed`:
    constant name -> (old label, new label)."""
    out: list[tuple[tuple[Any, ...], str, str]] = []
    for const, (old, new) in sorted(changed.items()):
        words = distinctive(old, new)
        for loc, fld, text in (((("name",), "name", calc.name)), (("formula", "name"), "formula.name",
                                                                   calc.formula.name)):
            hits = _named(text, words)
            if hits:
                out.append((loc, fld, f"{text!r} still names {', '.join(hits)} of constant {const!r}'s old label "
                                      f"{old!r}; its label is now {new!r}"))
        out += citation_leftovers(calc, words, f"constant {const!r}'s old label {old!r}; its label is now {new!r}")
        last = calc.versions[-1]  # the version as released or proposed (a draft's own file included)
        prose: list[tuple[tuple[Any, ...], str, str]] = [
            (("versions", len(calc.versions) - 1, "text"), f"versions[{last.version}].text", last.text)]
        prose += [(("constants", n, "description"), f"constants.{n}.description", c.description)
                  for n, c in calc.constants.items()]
        prose += [(("inputs", i, "description"), f"inputs[{x.name}].description", x.description or "")
                  for i, x in enumerate(calc.inputs)]
        for loc, fld, text in prose:
            if _phrase(text, old):
                out.append((loc, fld, f"still says {old!r}, constant {const!r}'s old label; its label is now "
                                      f"{new!r} (write {{{{ label.{const} }}}} in texts)"))
    return out


def citation_leftovers(calc: Calculator, words: set[str], what: str) -> list[tuple[tuple[Any, ...], str, str]]:
    """The formula's cited publication when its authors or title name one of `words` (the distinctive words of an old
    label or name, `what`): a Katz formula still cited to Hillier (1999)."""
    pub = calc.formula.publication
    hits = _named(" ".join([*pub.authors, pub.title]), words)
    if not hits:
        return []
    return [(("formula", "publication"), "formula.publication",
             f"cites {pub.authors[0]} ({pub.year}) {pub.title!r}, which names {', '.join(hits)} of {what}")]


def label_changes(before: Mapping[str, Any] | None, calc: Calculator) -> dict[str, tuple[str, str]]:
    """Constant name -> (old label, new label) between a released content (`before`, as snapshots hold it) and
    `calc`'s constants."""
    if not before:
        return {}
    old_consts = before.get("constants") or {}
    out = {}
    for name, c in calc.constants.items():
        old = old_consts.get(name)
        old_label = old.get("label") if isinstance(old, dict) else None
        if c.label and isinstance(old_label, str) and old_label and old_label.casefold() != c.label.casefold():
            out[name] = (old_label, c.label)
    return out
