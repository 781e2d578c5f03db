"""Supplied formula texts: jinja2 templates rendered over a calculator's registry entry.

A text names its numbers through three objects, so that a number is written once (in the
registry) and the completeness audit can see, from the template's syntax tree, what a text uses:

    {{ c.female_factor }}             a constant's value (units are the writer's words)
    {{ t.weight_rule }}               a table, rendered in full (every band or weight)
    {{ i["creatinine"] }}             an input: its name and canonical unit or options
    {{ calc.name }}, {{ calc.unit }}  the calculator's name and output unit
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes

from registry.schema import Band, Calculator, Input, InputKind, Table, Version

TEXTS_DIR = "texts"
INDEX_FILE = "index.json"
INDEX_FORMAT = 1


def fmt_number(x: Any) -> str:
    """Numbers as a person writes them: 0.85, 140, 1e-05 only where unavoidable."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if x.is_integer() and abs(x) < 1e15:
            return str(int(x))
        text = repr(x)
        return text
    return str(x)


def _bound(b: Band) -> str:
    parts = []
    if b.ge is not None:
        parts.append(f"≥ {fmt_number(b.ge)}")
    if b.gt is not None:
        parts.append(f"> {fmt_number(b.gt)}")
    if b.lt is not None:
        parts.append(f"< {fmt_number(b.lt)}")
    if b.le is not None:
        parts.append(f"≤ {fmt_number(b.le)}")
    return " and ".join(parts) if parts else "any value"


@dataclass(frozen=True)
class TableView:
    """A table as a text shows it: one line per band, weight or option."""

    name: str
    table: Table

    def __str__(self) -> str:
        t = self.table
        unit = f" {t.unit}" if t.unit else ""
        lines: list[str] = []
        if t.bands is not None:
            var = t.variable or self.name
            for b in t.bands:
                label = f" ({b.label})" if b.label else ""
                lines.append(f"- {var} {_bound(b)}{unit}: {fmt_number(b.value)}{label}")
            if t.default is not None:
                lines.append(f"- any other value: {fmt_number(t.default)}")
        else:
            mapping = t.points if t.points is not None else t.lookup
            assert mapping is not None
            for key, val in mapping.items():
                lines.append(f"- {key}: {fmt_number(val)}")
            if t.default is not None:
                lines.append(f"- anything else: {fmt_number(t.default)}")
        return "\n".join(lines)


@dataclass(frozen=True)
class InputView:
    """An input as a text names it: its key and canonical unit, or its options."""

    spec: Input

    def __str__(self) -> str:
        s = self.spec
        if s.options:
            return f"{s.name} (one of: {', '.join(s.options)})"
        if s.kind == InputKind.boolean:
            return f"{s.name} (yes/no)"
        if s.kind == InputKind.date:
            return f"{s.name} (a date, MM/DD/YYYY)"
        if s.kind == InputKind.age:
            return f"{s.name} (years)"
        if s.unit:
            return f"{s.name} ({s.unit})"
        return s.name

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def unit(self) -> str:
        return self.spec.unit or ""


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=lambda x: fmt_number(x) if isinstance(x, (int, float)) else x,
    )


_ENV = environment()


def render_context(calc: Calculator) -> dict[str, Any]:
    return {
        "c": {k: v.value for k, v in calc.constants.items()},
        "t": {k: TableView(k, v) for k, v in calc.tables.items()},
        "i": {inp.name: InputView(inp) for inp in calc.inputs},
        "calc": {"name": calc.name, "unit": calc.output.unit or "", "slug": calc.slug},
    }


class TextError(ValueError):
    """A template that does not parse or names something the registry entry lacks."""


def render(calc: Calculator, version: Version | None = None) -> str:
    version = version or calc.active
    try:
        template = _ENV.from_string(version.text)
        return template.render(**render_context(calc)).strip() + "\n"
    except jinja2.TemplateSyntaxError as e:
        raise TextError(f"{calc.slug} {version.version}: template syntax error at line {e.lineno}: {e.message}") from None
    except jinja2.UndefinedError as e:
        raise TextError(f"{calc.slug} {version.version}: the text names something the registry entry lacks: "
                        f"{e.message}") from None


def text_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------- static analysis


@dataclass(frozen=True)
class References:
    constants: frozenset[str]
    tables: frozenset[str]
    inputs: frozenset[str]
    other: frozenset[str]  # references the audit cannot attribute (e.g. c[some_variable])


def references(source: str) -> References:
    """What a template refers to, read from jinja2's own syntax tree (no rendering)."""
    tree = _ENV.parse(source)
    found: dict[str, set[str]] = {"c": set(), "t": set(), "i": set()}
    other: set[str] = set()
    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        base = node.node
        if not isinstance(base, nodes.Name) or base.name not in found:
            continue
        if isinstance(node, nodes.Getattr):
            found[base.name].add(node.attr)
        elif isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            found[base.name].add(node.arg.value)
        else:
            other.add(f"{base.name}[...]")
    return References(frozenset(found["c"]), frozenset(found["t"]), frozenset(found["i"]), frozenset(other))


# ---------------------------------------------------------------------- catalogue


def catalogue_entry(calc: Calculator, text: str) -> dict[str, Any]:
    return {"slug": calc.slug, "medcalc_id": calc.medcalc_id, "name": calc.name, "version": calc.active.version,
            "file": f"{calc.slug}.md", "sha256": text_hash(text)}


def write_catalogue(calcs: list[Calculator], out_dir: Path) -> dict[str, Any]:
    """Render every active text into out_dir, one file each, plus index.json; returns the index."""
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = []
    for calc in sorted(calcs, key=lambda c: c.slug):
        text = render(calc)
        (out_dir / f"{calc.slug}.md").write_text(text, encoding="utf-8")
        entries.append(catalogue_entry(calc, text))
    index = {"format": INDEX_FORMAT,
             "about": "Supplied formula texts rendered from the registry by `formula texts render`. Each entry: "
                      "calculator slug, benchmark id, active text version, file, and the SHA-256 of the rendered "
                      "text. Evaluation runs record (slug, version, sha256) per case to detect stale results.",
             "texts": entries}
    (out_dir / INDEX_FILE).write_text(json.dumps(index, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return index
