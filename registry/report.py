"""Rows and readable text about calculators, shared by the CLI and the site."""
from __future__ import annotations

import textwrap
from typing import Any

from registry.loader import Registry
from registry.schema import Calculator
from registry.tables import render_table, terminal_width  # noqa: F401  (the one table helper; re-exported)
from registry.terminal import printable


def successors(c: Calculator) -> list[str]:
    return [r.successor or r.name for r in c.replacements if r.kind == "replaced_by"]


def original_text_label(status: str) -> str:
    """The paper's finding on the text the benchmark supplied, named apart from today's text's audit."""
    return status if status == "not audited" else f"{status} (paper)"


def calculator_rows(reg: Registry) -> list[dict[str, Any]]:
    rows = []
    for c in sorted(reg.calculators.values(), key=lambda c: (c.medcalc_id is None, c.medcalc_id or 0, c.slug)):
        rows.append({
            "slug": c.slug,
            "medcalc_id": c.medcalc_id,
            "name": c.name,
            "category": c.category.value,
            "output": c.output.kind.value,
            "intended_use": c.intended_use.value,
            "concern": c.literature_audit.concern.value,
            "audit_group": c.audit_group,
            "completeness": c.completeness.status.value if c.completeness else "not audited",
            "successors": successors(c),
            "alternatives": [r.successor or r.name for r in c.replacements if r.kind == "alternative"],
            "active_version": c.active.version,
        })
    return rows


def cite(c: Any) -> str:
    """A citation as one line of plain text: authors, title, venue, year, volume, pages, identifiers."""
    who = ", ".join(c.authors).rstrip(".")
    venue = c.journal or c.body
    bits = [f"{who}. {c.title}. {venue} {c.year}"]
    if c.volume:
        bits.append(f";{c.volume}")
    if c.pages:
        bits.append(f":{c.pages}")
    s = "".join(bits) + "."
    if c.doi:
        s += f" doi:{c.doi}"
    if c.pmid:
        s += f" PMID {c.pmid}"
    if not c.verified:
        s += " [unverified]"
    return s


def _spellings(reg: Registry, i: Any) -> str:
    """What else an input reads (docs/guide/inputs.md): "also reads lb, pounds" for unit aliases, "codes M = Male"
    for a choice; a yes/no input's codes are the same for every one and are left to the guide."""
    from registry.schema import InputKind
    from registry.spellings import spellings_of

    if reg.units is None or i.kind == InputKind.boolean:
        return ""
    found = spellings_of(reg.units, i)
    if not found:
        return ""
    if i.kind == InputKind.choice:
        return "codes " + ", ".join(s.replace(" -> ", " = ") for s in found)
    return "also reads " + ", ".join(s.split(" -> ")[0] for s in found)


def add_pending(reg: Registry, c: Calculator, add: Any) -> None:
    """The version waiting for approval or its date, if any (registry.governance.pending)."""
    from registry.governance.pending import pending_one

    p = pending_one(reg, c)
    if p is not None:
        who = f" by {p.drafted_by.who} ({p.drafted_by.role}) since {p.since}" if p.drafted_by else ""
        add(f"  pending version {p.version}{who}: {p.state}, effective {p.effective}: {p.reason}"
            " (`formula pending`, `formula diff " + f"{c.slug} {p.base} {p.version}`)")


def decision_lines(reg: Registry, c: Calculator, v: Any) -> list[str]:
    """The decisions on version `v` as `formula history` judges them: a signed one names its verified person,
    role and key and says "verified"; the history before signing says so; a typed record is never verified."""
    from registry.governance.signatures import views

    mine = [d for d in views(reg, c) if d.version == v.version]
    lines = [f"  decisions on version {v.version} (`formula history {c.slug}` for every version):"]
    for d in mine:
        if d.state == "verified":
            lines.append(f"    - {d.decision} by {d.name} ({d.role}) on {d.date}, key {d.fingerprint}: verified")
        elif d.state == "recorded_before_signing":
            lines.append(f"    - {d.decision} on {d.date}: recorded before signing (not verified)")
        else:
            lines.append(f"    - {d.decision} on {d.date}: does not verify ({d.why}; `formula verify`)")
    typed = ([f"released by {v.released_by.who} ({v.released_by.role})"] if v.released_by else []) + \
        ([f"approved by {v.approved_by.who} ({v.approved_by.role}) on {v.approved_by.date}"] if v.approved_by else []) \
        + [f"reviewed by {so.who} ({so.role}) on {so.date}" for so in v.signoffs]
    lines += [f"    - {t} (typed, not verified)" for t in typed]
    if len(lines) == 1:
        lines.append("    - none")
    return [printable(line) for line in lines]  # names, roles and reasons come from registry files


PROSE_WIDTH = 100  # prose is wrapped at most this wide (long lines read badly), narrower on a narrower terminal


def show_width() -> int:
    """The width `show` wraps to: the terminal's, at most PROSE_WIDTH (PROSE_WIDTH when not a terminal)."""
    return min(terminal_width() or PROSE_WIDTH, PROSE_WIDTH)


def fit_lines(lines: list[str], width: int) -> list[str]:
    """Every line within `width`, wrapped at spaces (never at a hyphen: slugs and 'ssh-agent' stay whole), a
    continuation indented two spaces deeper than its line; only a token longer than the whole width is cut."""
    out: list[str] = []
    for line in (part for entry in lines for part in entry.split("\n")):
        if len(line) <= width:
            out.append(line)
            continue
        body = line.lstrip(" ")
        indent = " " * (len(line) - len(body))
        hang = indent + "  "  # under a list item's text, or a paragraph's first word
        out += textwrap.wrap(line, width=width, subsequent_indent=hang, break_on_hyphens=False) or [line[:width]]
    return out


def open_hazard_lines(reg: Registry, slug: str, w: textwrap.TextWrapper) -> list[str]:
    """The open hazards of the registry's hazard log that apply to `slug` (registry-wide ones marked)."""
    from registry.hazards import SAFETY_DIR, open_hazards

    if not (reg.formulas_dir / SAFETY_DIR).is_dir():
        return []
    mine = open_hazards(reg.root, slug)
    out = [f"Open hazards: {len(mine) or 'none'} (`formula safety trace {slug}`)"]
    for hid, title, risk, residual, wide in mine:
        out.append(w.fill(f"  - {hid} {title} [risk {risk}, residual {residual}" + ("; registry-wide]" if wide else "]")))
    return [printable(x) for x in out]


def show_text(reg: Registry, c: Calculator, width: int | None = None) -> str:
    """`formula show`: one section per part a clinician reads, in order, fitted to the terminal."""
    fit = width is not None or terminal_width() is not None  # piped: whole lines for tools (grep, a diff)
    width = width or show_width()
    w = textwrap.TextWrapper(width=width, subsequent_indent="    ", break_on_hyphens=False)
    out = (_identity(reg, c, w) + [""] + _inputs(reg, c, w) + _data(c, w) + [""] + _provenance(reg, c, w)
           + _deviations(c, width) + open_hazard_lines(reg, c.slug, w) + [""] + _current_text(reg, c))
    return "\n".join(fit_lines(out, width) if fit else out)


def _identity(reg: Registry, c: Calculator, w: textwrap.TextWrapper) -> list[str]:
    """What the calculator is, its formula and source, the active version, who decided it, what is pending."""
    from registry.texts import render_expression  # jinja2: only `show` needs it

    out: list[str] = []
    add = out.append
    add(printable(f"{c.name}  ({c.slug}, benchmark id {c.medcalc_id if c.medcalc_id is not None else '-'})"))
    add(f"  category {c.category.value}; output {c.output.kind.value}"
        + (f" in {c.output.unit}" if c.output.unit else "") + f"; intended use {c.intended_use.value}")
    expr = render_expression(c, calcs=reg.calculators, units=reg.units)
    add(w.fill(f"  formula: {c.formula.name}" + (f": {expr}" if expr else "")))
    add(w.fill("  source: " + cite(c.formula.publication)))
    v = c.active
    add(f"  active version {v.version} since {v.effective}: {v.changelog}")
    out.extend(decision_lines(reg, c, v))
    add(f"  next review due {v.next_review}" if v.next_review else "  not yet reviewed (see `formula review`)")
    add_pending(reg, c, add)
    return out


def _words(value: Any) -> str:
    """A registry value as a person reads it: yes/no for a boolean, never Python's True/False or quotes."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _inputs(reg: Registry, c: Calculator, w: textwrap.TextWrapper) -> list[str]:
    out = ["Inputs"]
    for i in c.inputs:
        bits = [i.kind.value]
        if i.unit:
            bits.append(i.unit)
        if i.accepted_units:
            bits.append("accepts " + ", ".join(i.accepted_units))
        if i.options:
            bits.append("one of " + " | ".join(i.options))
        also = _spellings(reg, i)
        if also:
            bits.append(also)
        if i.range:
            bits.append(f"plausible {i.range[0]:g} to {i.range[1]:g}")
        bits.append("required" if i.required else f"optional (when absent: {_words(i.default)}, the registry's "
                    "default)" if i.default is not None else "optional")
        if not i.used:
            bits.append("not used by the calculation")
        out.append(w.fill(f"  - {i.name}: " + "; ".join(bits)))
    return out


def _data(c: Calculator, w: textwrap.TextWrapper) -> list[str]:
    """Constants, tables and the calculators it uses."""
    from registry.texts import band_condition

    out: list[str] = []
    if c.constants:
        out += ["", "Constants"]
        out += [w.fill(f"  - {k} = {const.value}" + (f" {const.unit}" if const.unit else "") + f": {const.description}")
                for k, const in c.constants.items()]
    if c.tables:
        out += ["", "Tables"]
        for k, t in c.tables.items():
            out.append(w.fill(f"  - {k}: {t.description}"))
            out += [f"      {band_condition(b)} -> {b.value}" + (f" ({b.label})" if b.label else "")
                    for b in t.bands or []]
            out += [f"      {key}: {val}" for m in (t.points, t.lookup) if m for key, val in m.items()]
    if c.depends_on:
        out += ["", "Uses: " + ", ".join(c.depends_on)]
    return out


def _provenance(reg: Registry, c: Calculator, w: textwrap.TextWrapper) -> list[str]:
    """The literature audit and its guidelines, the paper's audit of the original text, successors, predecessors."""
    out: list[str] = []
    add = out.append
    la = c.literature_audit
    add(f"Literature audit: {la.concern.value} (group {c.audit_group})")
    if la.summary:
        add(w.fill("  " + la.summary))
    for ref in c.provenance:
        g = reg.guidelines.get(ref.guideline)
        name = f"{g.body}, {g.title} ({g.year})" if g else ref.guideline
        add(w.fill(f"  - {ref.relation.value} [{ref.jurisdiction}]: {name}" + ("" if not g or g.verified else " [unverified]")))
    if c.completeness:
        add(f"Original text: {original_text_label(c.completeness.status.value)}, the paper's audit of the text the "
            f"benchmark supplied ({c.completeness.source})")
        if c.completeness.finding:
            add(w.fill("  found: " + c.completeness.finding))
        if c.completeness.change:
            add(w.fill("  changed: " + c.completeness.change))
    if c.replacements:
        add("Successors and alternatives")
        for r in c.replacements:
            target = r.successor or r.name
            add(w.fill(f"  - {r.kind.replace('_', ' ')} {target} [{r.jurisdiction}, since {r.since}]"
                       + (f": {r.note}" if r.note else "")))
    preds = [o.slug for o in reg.calculators.values() for r in o.replacements if r.successor == c.slug]
    if preds:
        add("Predecessors or alternatives of: " + ", ".join(sorted(preds)))
    return out


def _deviations(c: Calculator, width: int) -> list[str]:
    if not c.deviations:
        return []
    out = ["Benchmark deviations from the published formula"]
    sub = textwrap.TextWrapper(width=width, initial_indent="      ", subsequent_indent="        ",
                               break_on_hyphens=False)
    for d in c.deviations:
        out += [f"  - {d.id}" + ("" if d.verified else " [unverified]"), sub.fill(f"benchmark: {d.benchmark}"),
                sub.fill(f"published: {d.published}")]
    return out


def _current_text(reg: Registry, c: Calculator) -> list[str]:
    from registry.texts import TextError, render

    v = c.active
    out = [f"Current text (version {v.version}; `formula audit completeness` checks whether it is complete)"]
    try:
        body = render(c, calcs=reg.calculators, units=reg.units)
    except TextError as e:
        body = f"(does not render: {e})"
    return out + ["  " + line if line else "" for line in body.rstrip().splitlines()]
