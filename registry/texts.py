"""Supplied formula texts: jinja2 templates rendered over a calculator's registry entry.

A text names its numbers through three objects, so that a number is written once (in the
registry) and the completeness audit can see, from the template's syntax tree, what a text uses:

    {{ c.female_factor }}             a constant's value (units are the writer's words)
    {{ t.weight_rule }}               a table, rendered in full (every band or weight)
    {{ i["creatinine"] }}             an input: its name and canonical unit or options
    {{ calc.name }}, {{ calc.unit }}  the calculator's name and output unit
    {{ i["creatinine"].molar_mass }}  the molar mass its conversions use
    {{ d["ideal-body-weight"].c.male_base_weight }}   the same, of a calculator it depends on
    {{ u.weight.lbs }}                shared unit factors (formulas/units.yaml)
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import jinja2
from jinja2 import nodes

from registry.schema import Band, Calculator, Input, InputKind, Table, UnitsFile, Version

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


def band_condition(b: Band) -> str:
    """A band's bounds in words, e.g. '≥ 18.5 and ≤ 24.9'."""
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
                if t.labels_only and b.label:
                    lines.append(f"- {var} {band_condition(b)}{unit}: {b.label}")
                    continue
                label = f" ({b.label})" if b.label else ""
                lines.append(f"- {var} {band_condition(b)}{unit}: {fmt_number(b.value)}{label}")
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
    molar_mass: float | None = None  # the effective molar mass for its conversions, g/mol
    valence: int | None = None

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


@lru_cache(maxsize=4096)
def _template(source: str) -> jinja2.Template:
    """Compiling dominates rendering; a source compiles once per process (validate renders every text)."""
    return _ENV.from_string(source)


def _inputs(calc: Calculator, units: UnitsFile | None) -> dict[str, InputView]:
    out = {}
    for inp in calc.inputs:
        a = units.analytes.get(inp.analyte) if (units and inp.analyte) else None
        mm = inp.molar_mass if inp.molar_mass is not None else (a.molar_mass if a else None)
        out[inp.name] = InputView(inp, mm, a.valence if a else None)
    return out


def _own(calc: Calculator, units: UnitsFile | None) -> dict[str, Any]:
    return {
        "c": {k: v.value for k, v in calc.constants.items()},
        "label": {k: v.label for k, v in calc.constants.items() if v.label},  # a variant's name beside its number
        "t": {k: TableView(k, v) for k, v in calc.tables.items()},
        "i": _inputs(calc, units),
        "calc": {"name": calc.name, "unit": calc.output.unit or "", "slug": calc.slug,
                 "published_rounding": rounding_words(calc)},
    }


def rounding_words(calc: Calculator) -> str:
    """The publication's rounding rule (output.published_rounding) in words, for `{{ calc.published_rounding }}`."""
    rule = calc.output.published_rounding
    if rule is None:
        return "the precision the result is reported to"
    to = "the nearest whole number" if rule.decimals == 0 else (
        f"{rule.decimals} decimal place{'s' if rule.decimals > 1 else ''}")
    tie = "x.5" if rule.decimals == 0 else "a final 5"
    how = "goes up (away from zero)" if rule.mode == "half_up" else "goes to the even neighbour"
    return f"{to}; a tie ({tie}) {how}"


def dependencies(calc: Calculator, calcs: Mapping[str, Calculator]) -> list[Calculator]:
    """Every calculator `calc` uses, directly or through another, each once."""
    seen: dict[str, Calculator] = {}
    stack = list(calc.depends_on)
    while stack:
        s = stack.pop(0)
        if s in seen or s not in calcs:
            continue
        seen[s] = calcs[s]
        stack.extend(calcs[s].depends_on)
    return list(seen.values())


def render_context(calc: Calculator, calcs: Mapping[str, Calculator] | None = None,
                   units: UnitsFile | None = None) -> dict[str, Any]:
    ctx = _own(calc, units)
    ctx["d"] = {dep.slug: _own(dep, units) for dep in dependencies(calc, calcs or {})}
    ctx["u"] = units.model_dump() if units is not None else {}
    return ctx


class TextError(ValueError):
    """A template that does not parse or names something the registry entry lacks."""


def render(calc: Calculator, version: Version | None = None, *, calcs: Mapping[str, Calculator] | None = None,
           units: UnitsFile | None = None) -> str:
    """Render a version's text (default: the active one) over the calculator and its dependencies."""
    version = version or calc.active
    try:
        template = _template(version.text)
        return template.render(**render_context(calc, calcs, units)).strip() + "\n"
    except jinja2.TemplateSyntaxError as e:
        raise TextError(f"{calc.slug} {version.version}: template syntax error at line {e.lineno}: {e.message}") from None
    except jinja2.UndefinedError as e:
        raise TextError(f"{calc.slug} {version.version}: the text names something the registry entry lacks: "
                        f"{e.message}") from None


def render_expression(calc: Calculator, *, calcs: Mapping[str, Calculator] | None = None,
                      units: UnitsFile | None = None) -> str:
    """The one-line formula of `formula.expression`, a template over the same registry numbers."""
    if not calc.formula.expression:
        return ""
    try:
        return _template(calc.formula.expression).render(**render_context(calc, calcs, units)).strip()
    except jinja2.TemplateSyntaxError as e:
        raise TextError(f"{calc.slug}: formula.expression: template syntax error: {e.message}") from None
    except jinja2.UndefinedError as e:
        raise TextError(f"{calc.slug}: formula.expression names something the registry entry lacks: {e.message}") from None


def text_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------- static analysis


@dataclass(frozen=True)
class References:
    constants: frozenset[str]
    tables: frozenset[str]
    inputs: frozenset[str]
    dependency: frozenset[tuple[str, str, str]]  # (calculator slug, "c"|"t"|"i", name)
    other: frozenset[str]  # references the audit cannot attribute (e.g. c[some_variable])
    labels: frozenset[str] = frozenset()  # constants whose label the text shows ({{ label.NAME }})
    literal: str = ""  # the template's own words, outside every {{ }} and {% %}


def _path(node: nodes.Node) -> list[str] | None:
    """`d["x"].c.y` -> ["d", "x", "c", "y"]; None when a part is computed."""
    if isinstance(node, nodes.Name):
        return [node.name]
    if isinstance(node, nodes.Getattr):
        base = _path(node.node)
        return None if base is None else base + [node.attr]
    if isinstance(node, nodes.Getitem):
        base = _path(node.node)
        if base is None or not (isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str)):
            return None
        return base + [node.arg.value]
    return None


def references(source: str) -> References:
    """What a template refers to, read from jinja2's own syntax tree (no rendering)."""
    tree = _ENV.parse(source)
    found: dict[str, set[str]] = {"c": set(), "t": set(), "i": set(), "label": set()}
    dep: set[tuple[str, str, str]] = set()
    other: set[str] = set()
    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        path = _path(node)
        if path is None:
            root = node
            while isinstance(root, (nodes.Getattr, nodes.Getitem)):
                root = root.node
            if isinstance(root, nodes.Name) and root.name in ("c", "t", "i", "d", "label"):
                other.add(f"{root.name}[...]")
            continue
        if path[0] in found and len(path) >= 2:
            found[path[0]].add(path[1])
        elif path[0] == "d" and len(path) >= 4 and path[2] in found:
            dep.add((path[1], path[2], path[3]))
    literal = "".join(n.data for n in tree.find_all(nodes.TemplateData))
    return References(frozenset(found["c"]), frozenset(found["t"]), frozenset(found["i"]), frozenset(dep),
                      frozenset(other), frozenset(found["label"]), literal)


# ---------------------------------------------------------------------- catalogue


def catalogue_entry(calc: Calculator, text: str) -> dict[str, Any]:
    return {"slug": calc.slug, "medcalc_id": calc.medcalc_id, "name": calc.name, "version": calc.active.version,
            "file": f"{calc.slug}.md", "sha256": text_hash(text)}


def catalogue_files(calcs: Mapping[str, Calculator], units: UnitsFile | None) -> dict[str, str]:
    """The catalogue as file name -> content: one Markdown file per active text, plus index.json."""
    files: dict[str, str] = {}
    entries = []
    for calc in sorted(calcs.values(), key=lambda c: c.slug):
        text = render(calc, calcs=calcs, units=units)
        files[f"{calc.slug}.md"] = text
        entries.append(catalogue_entry(calc, text))
    index = {"format": INDEX_FORMAT,
             "about": "Supplied formula texts rendered from the registry by `formula texts render`. Each entry: "
                      "calculator slug, benchmark id, active text version, file, and the SHA-256 of the rendered "
                      "text. Evaluation runs record (slug, version, sha256) per case to detect stale results.",
             "texts": entries}
    files[INDEX_FILE] = json.dumps(index, indent=2, ensure_ascii=False) + "\n"
    return files


def write_catalogue(calcs: Mapping[str, Calculator], units: UnitsFile | None, out_dir: Path) -> dict[str, Any]:
    """Render every active text into out_dir, one file each, plus index.json (each write atomic); returns the index."""
    from registry.atomic import atomic_write

    files = catalogue_files(calcs, units)
    for name, text in files.items():
        atomic_write(out_dir / name, text)
    index: dict[str, Any] = json.loads(files[INDEX_FILE])
    return index
