"""Pages generated from the registry and the audits: overview, audit tables, calculators, lineage, changelog.

Each function returns Markdown (with raw HTML tables from `markup`). Nothing here computes a
clinical result: numbers come from the registry files, the rendered texts and the audit layer.
"""
from __future__ import annotations

import datetime as dt
import difflib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from audit.completeness import AGREEMENT_RULE, agreement_words, completeness_words
from formula_site.markup import (
    CONCERN_LABELS,
    GROUP_ORDER,
    Raw,
    badge,
    cite,
    completeness_badge,
    esc,
    front_matter_title,
    group_badge,
    impact_page,
    link,
    num,
    pct,
    table,
    verified_badge,
)
from formula_site.pending_pages import calculator_section, overview_section
from formula_site.worked_example import worked_example
from registry import clock
from registry import versions as ver
from registry.loader import Registry
from registry.schema import Calculator, Version, VersionStatus
from registry.texts import TextError, band_condition, fmt_number, render, render_expression

DUE_WINDOW_DAYS = 30


@dataclass
class AuditInputs:
    """What the audit layer produced for the site, computed once per build."""

    completeness: dict[str, Any] = field(default_factory=dict)  # slug -> TextAudit
    fidelity: dict[str, Any] = field(default_factory=dict)  # slug -> FidelityRow
    fidelity_cases: int = 0
    fidelity_data: str = ""
    fidelity_hash: str = ""


def ordered(reg: Registry) -> list[Calculator]:
    return sorted(reg.calculators.values(), key=lambda c: (c.medcalc_id is None, c.medcalc_id or 0, c.slug))


def calc_href(slug: str, *, depth: int) -> str:
    return "../" * depth + f"calculators/{slug}.html"


def fhir_name(slug: str, version: str) -> str:
    return f"Library-{slug}-{version}.json"


# --------------------------------------------------------------------------- review status


def citations(reg: Registry, c: Calculator) -> list[Any]:
    """Every publication a calculator page cites: its own, its guidelines' and its successors'."""
    out = [c.formula.publication]
    for p in c.provenance:
        g = reg.guidelines.get(p.guideline)
        if g is not None and g.publication is not None:
            out.append(g.publication)
    out += [r.citation for r in c.replacements if r.citation is not None]
    return out


def review_status(v: Version, on: dt.date) -> str:
    if v.next_review is None:
        return "due"
    if v.next_review < on:
        return "overdue"
    if v.next_review <= on + dt.timedelta(days=DUE_WINDOW_DAYS):
        return "due"
    return "reviewed"


# --------------------------------------------------------------------------- overview


def _card(number: Any, label: str, href: str, detail: str = "") -> str:
    return (f'<a class="fr-card" href="{esc(href)}"><span class="fr-card-number">{esc(number)}</span>'
            f'<span class="fr-card-label">{esc(label)}</span>'
            + (f'<span class="fr-card-detail">{esc(detail)}</span>' if detail else "") + "</a>")


def _text_state(r: dict[str, Any]) -> Any:
    """The supplied text a run's row of a calculator page ran with: stale, current, or none shown (imported)."""
    if r.get("stale"):
        return Raw(badge("stale", "warn") + " the run used an older text")
    return "current" if r.get("text_shown", True) else "no formula text shown"


def overview(reg: Registry, *, on: dt.date, package_version: str, runs: Sequence[Any],
             changes: list[Any], audits: AuditInputs | None = None, impact_pairs: Sequence[str] = ()) -> str:
    # long: one page, section by section
    calcs = ordered(reg)
    digest = ver.lock_digest(reg.lock_path)
    released = sum(len(ver.released(c)) for c in calcs)
    groups = Counter(c.audit_group for c in calcs if c.medcalc_id is not None)
    concerns = Counter(c.literature_audit.concern.value for c in calcs if c.medcalc_id is not None)
    complete = Counter(c.completeness.status.value if c.completeness else "not audited" for c in calcs)
    reviews = Counter(review_status(c.active, on) for c in calcs)
    never = sum(1 for c in calcs if c.active.last_review is None)
    bench = sum(1 for c in calcs if c.medcalc_id is not None)
    audits = audits or AuditInputs()
    replaced = [c.name for c in calcs if c.medcalc_id is not None and c.audit_group == "replaced"]
    differ = sum(f.differ for f in audits.fidelity.values())
    n_dev = sum(len(c.deviations) for c in calcs)
    cites = list({(x.title, x.year): x for c in calcs for x in citations(reg, c)}.values())  # each publication once
    n_cites, n_unverified = len(cites), sum(not x.verified for x in cites)
    cards = [
        _card(bench - groups.get("none", 0), f"of {bench} benchmark calculators carry a literature concern",
              "audits/literature.html", f"{groups.get('replaced', 0)} replaced by a guideline: " + ", ".join(replaced)),
        _card(complete.get("wrong", 0) + complete.get("incomplete", 0),
              f"of {bench} supplied texts were wrong or incomplete", "audits/completeness.html",
              f"{complete.get('wrong', 0)} wrong, {complete.get('incomplete', 0)} incomplete (the paper's audit)"),
        _card(n_dev, "recorded departures of the benchmark from the publications", "audits/fidelity.html",
              f"{differ} of {audits.fidelity_cases} reference cases score differently" if audits.fidelity_cases else ""),
        _card(reviews.get("overdue", 0) + reviews.get("due", 0), "active versions due or overdue for review",
              "calculators/index.html", f"{reviews.get('overdue', 0)} overdue; {never} never reviewed"),
        _card(n_unverified, f"of {n_cites} cited publications not yet checked by a person", "calculators/index.html",
              f"and {sum(not d.verified for c in calcs for d in c.deviations)} of {n_dev} recorded deviations"),
        _card(len(runs), "stored runs scored by audit group", "results/index.html",
              ", ".join(dict.fromkeys(r.arm for r in runs)) or "none yet: see About this report"),
    ]
    if impact_pairs:
        more = f" and {len(impact_pairs) - 4} more" if len(impact_pairs) > 4 else ""
        cards.append(_card(len(impact_pairs), "predecessor → successor pairs with a version-impact report",
                           "impact/index.html", ", ".join(impact_pairs[:4]) + more))
    out = [
        "# Formula provenance audit",
        "",
        "The published audit of the clinical calculators in this registry: which formula and version each "
        "calculator uses, which guideline supports or replaced it, whether its supplied text is complete, "
        "where the benchmark departs from the publication, and how the stored runs score by audit group.",
        "",
        '<div class="fr-cards">' + "".join(cards) + "</div>",
        "",
        '<div class="fr-facts">',
        table(["", ""], [
            ["Registry package version", package_version],
            ["Registry lock digest", Raw(f"<code>{esc(digest)}</code>")],
            ["Calculators", f"{len(calcs)} ({bench} of the benchmark, {len(calcs) - bench} successors)"],
            ["Released versions", released],
            ["Guidelines and source documents", len(reg.guidelines)],
            ["Stored runs on the results page", len(runs)],
            ["Review status as of", on.isoformat()],
        ], sortable=False),
        "</div>",
        "",
        "## Literature audit groups",
        "",
        "The paper's Table 11 groups the benchmark's 55 calculators by literature concern; accuracy on the "
        "results page is reported by the same groups.",
        "",
        table(["Audit group", "Calculators"], [[Raw(group_badge(g), sort=g), groups.get(g, 0)] for g in GROUP_ORDER],
              sortable=False),
        "",
        table(["Concern type", "Calculators"],
              [[CONCERN_LABELS[k], concerns.get(k, 0)] for k in CONCERN_LABELS], sortable=False),
        "",
        "## Completeness of the supplied texts",
        "",
        table(["Status (paper's audit)", "Calculators"],
              [[Raw(completeness_badge(k), sort=k), n] for k, n in sorted(complete.items())], sortable=False),
        "",
        "## Review status",
        "",
        f"Of the active versions: reviewed (next review more than {DUE_WINDOW_DAYS} days away), due (no next "
        f"review date, or one within {DUE_WINDOW_DAYS} days) and overdue (the next review date has passed), "
        f"as of {on.isoformat()}. {never} active versions have never been reviewed.",
        "",
        table(["Review status", "Calculators"], [[k, reviews.get(k, 0)] for k in ("reviewed", "due", "overdue")],
              sortable=False),
        "",
        overview_section(reg),
        "## Latest changes",
        "",
    ]
    rows = [[e.effective, link(f"calculators/{e.slug}.html", e.name), e.version, e.status, e.reason]
            for e in changes[:10]]
    out.append(table(["Effective", "Calculator", "Version", "Status", "Why"], rows, sortable=False) if rows
               else "No released versions yet.")
    out.append("\nEvery release is on the [changelog](changelog.md).\n")
    return "\n".join(out)


# --------------------------------------------------------------------------- audit tables


def literature_audit(reg: Registry) -> str:
    rows = []
    for c in ordered(reg):
        la = c.literature_audit
        if c.medcalc_id is None or la.concern.value == "none":
            continue
        guides = [reg.guidelines[g] for g in la.guidelines if g in reg.guidelines]
        body = "; ".join(sorted({g.body for g in guides})) or "–"
        juris = "; ".join(sorted({g.jurisdiction for g in guides} | {p.jurisdiction for p in c.provenance})) or "–"
        years = ", ".join(str(y) for y in sorted({g.year for g in guides})) or "–"
        sources = "<br>".join(f"{esc(g.title)} ({g.year}) {verified_badge(g.verified)}" for g in guides)
        rows.append([
            link(f"../calculators/{c.slug}.html", c.name),
            f"{c.category.value}; {c.intended_use.value}",
            body, juris, years,
            Raw(f'<div class="fr-wide"><strong>{esc(CONCERN_LABELS[la.concern.value])}</strong><br>'
                f"{esc(la.summary)}</div>", sort=la.concern.value),
            Raw(sources or esc(la.source), sort=la.source or ""),
        ])
    return "\n".join([
        "---\nhide:\n  - navigation\n  - toc\n---",
        "# Literature audit",
        "",
        f"The {len(rows)} benchmark calculators with a version, use or coefficient concern against current "
        "guidelines (the paper's Table 11, a preliminary single-annotator audit). The other calculators "
        "have no concern recorded. Click a column header to sort; type in the box to filter.",
        "",
        table(["Formula", "Type and use", "Body", "Jurisdiction", "Date", "Concern", "Sources"], rows),
    ])


def completeness_audit(reg: Registry, audits: AuditInputs) -> str:
    rows = []
    for c in ordered(reg):
        cp = c.completeness
        a = audits.completeness.get(c.slug)
        now = "–" if a is None else completeness_words(a.missing)
        rows.append([
            link(f"../calculators/{c.slug}.html", c.name),
            num(c.medcalc_id),
            Raw(completeness_badge(cp.status.value), sort=cp.status.value) if cp else "not audited",
            cp.finding if cp else None,
            cp.change if cp else None,
            Raw(completeness_badge("complete" if a is not None and a.complete else "incomplete"), sort=now)
            if a is not None else "–",
            agreement_words(a.agree, a.cases) if a is not None and a.cases else "–",
        ])
    counts = Counter(c.completeness.status.value for c in reg.calculators.values() if c.completeness)
    return "\n".join([
        "---\nhide:\n  - navigation\n  - toc\n---",
        "# Completeness audit",
        "",
        "Whether each supplied formula text is enough to reproduce the benchmark's answer. *Original text* (the "
        "paper's audit): the paper's Tables 21 and 22 (what was wrong in the text the benchmark supplied, and what the repair "
        f"changed): {counts.get('wrong', 0)} wrong, {counts.get('incomplete', 0)} incomplete, "
        f"{counts.get('complete', 0)} complete. *Current text* (this registry's, now): the automatic audit "
        "(`formula audit completeness`) of the active text rendered from the registry: every input, constant, "
        "table and branch named and units stated. *Agreement with the benchmark* is reported apart, since a "
        "deliberate factor change moves answers without making the text incomplete: how many of the benchmark's "
        f"reference answers the library, reading the same constants, reproduces ({AGREEMENT_RULE}).",
        "",
        table(["Calculator", "Benchmark id", "Original text (paper's audit)", "What was wrong", "What changed",
               "Current text (this registry's, now)", "Agreement with the benchmark"], rows),
    ])


def fidelity_audit(reg: Registry, audits: AuditInputs) -> str:
    rows = []
    n_dev = 0
    for c in ordered(reg):
        f = audits.fidelity.get(c.slug)
        for d in c.deviations:
            n_dev += 1
            changed = (f"{f.differ} of {f.cases}" if f is not None and f.cases else "–")
            rows.append([
                link(f"../calculators/{c.slug}.html", c.name),
                Raw(f"<code>{esc(d.id)}</code>", sort=d.id),
                Raw(esc(changed), sort=str(f.differ if f is not None else -1)),
                Raw(verified_badge(d.verified), sort=str(d.verified)),
                d.benchmark, d.published, d.citation,
                ", ".join(d.inputs) or "–",
            ])
    wide = reg.units.deviations if reg.units else []
    wide_rows = [[Raw(f"<code>{esc(d.id)}</code>", sort=d.id), d.benchmark, d.published, d.citation,
                  Raw(verified_badge(d.verified), sort=str(d.verified))] for d in wide]
    differ = sum(f.differ for f in audits.fidelity.values())
    share = f"{100 * differ / audits.fidelity_cases:.1f}%" if audits.fidelity_cases else "–"
    return "\n".join([
        "---\nhide:\n  - navigation\n  - toc\n---",
        "# Benchmark-fidelity audit",
        "",
        "Every recorded place where the benchmark's reference implementation departs from the formula as "
        "published: what the benchmark does, what the publication says, and how many of the shipped reference "
        "cases score differently when the published formula is used instead (`formula audit deviations`). "
        "The case count is per calculator: when a calculator has several deviations, they share one count.",
        "",
        f"Reference cases: <code>{esc(audits.fidelity_data)}</code> ({audits.fidelity_cases} cases, "
        f"<code>{esc(audits.fidelity_hash[:19])}</code>). {n_dev} deviations in "
        f"{len({c.slug for c in reg.calculators.values() if c.deviations})} calculators; {differ} of "
        f"{audits.fidelity_cases} cases ({share}) score differently under the published formulas.",
        "",
        table(["Calculator", "Deviation", "Cases changed", "Checked", "The benchmark does", "The publication says",
               "Where stated", "Inputs"], rows),
        "",
        "## Benchmark-wide deviations",
        "",
        "Departures that affect every calculator converting units (`formulas/units.yaml`).",
        "",
        table(["Deviation", "The benchmark does", "The publication says", "Where stated", "Checked"], wide_rows,
              sortable=False) if wide_rows else "None recorded.",
    ])


# --------------------------------------------------------------------------- calculator pages


def version_text(reg: Registry, c: Calculator, v: Version) -> str | None:
    """A version's supplied text, rendered over that version's own numbers (its snapshot when superseded)."""
    calc = c
    if v.status not in (VersionStatus.active, VersionStatus.draft):
        snap = ver.read_snapshot(reg.formulas_dir, c.slug, v.version)
        if snap is None:
            return None
        data = c.model_dump(mode="json")
        data.update({k: snap[k] for k in ver.CONTENT_FIELDS if k in snap})
        try:
            calc = Calculator.model_validate(data)
        except ValueError:
            return None
    try:
        return render(calc, v, calcs=reg.calculators, units=reg.units)
    except TextError:
        return None


def predecessors(reg: Registry, slug: str) -> list[Calculator]:
    return [c for c in ordered(reg) if any(r.successor == slug for r in c.replacements)]


def _range(i: Any) -> str:
    if i.range is None:
        return "–"
    return f"{fmt_number(i.range[0])} to {fmt_number(i.range[1])}"


def _table_rows(t: Any) -> str:
    if t.bands is not None:
        items = [f"{esc(band_condition(b))}: {esc(fmt_number(b.value))}" + (f" ({esc(b.label)})" if b.label else "")
                 for b in t.bands]
    elif t.points is not None:
        items = [f"{esc(k)}: {esc(fmt_number(v))}" for k, v in t.points.items()]
    else:
        items = [f"{esc(k)}: {esc(fmt_number(v))}" for k, v in (t.lookup or {}).items()]
    if t.default is not None:
        items.append(f"otherwise: {esc(fmt_number(t.default))}")
    return "<br>".join(items)


def calculator_page(reg: Registry, c: Calculator, *, audits: AuditInputs, on: dt.date,  # noqa: C901,PLR0915  one page, section by section
                    accuracy: list[dict[str, Any]], safety: list[str] | None = None) -> str:
    """One calculator: text, inputs, constants, provenance, audits, lineage, versions, hazards (`safety`: its
    section, formula_site.safety_pages), accuracy, FHIR."""
    lock = ver.read_lock(reg.lock_path).get(c.slug, {})
    v = c.active
    out: list[str] = [front_matter_title(c.name), f"# {esc(c.name)}", ""]
    out.append(" ".join([group_badge(c.audit_group) if c.medcalc_id is not None else badge("successor, outside the paper's audit"),
                         badge(f"original text: {c.completeness.status.value} (paper)",
                               {"complete": "ok", "incomplete": "warn", "wrong": "bad"}.get(
                                   c.completeness.status.value, "info")) if c.completeness else "",
                         badge(f"version {v.version} {v.status.value}", "info"),
                         badge(f"review {review_status(v, on)}", {"overdue": "bad", "due": "warn"}.get(review_status(v, on), "ok"))]))
    out.append("")
    out.append(table(["", ""], [
        ["Slug", Raw(f"<code>{esc(c.slug)}</code>")],
        ["Benchmark id", c.medcalc_id if c.medcalc_id is not None else "– (not in the benchmark)"],
        ["Category", c.category.value],
        ["Intended use", c.intended_use.value],
        ["Output", c.output.kind.value + (f" in {c.output.unit}" if c.output.unit else "")],
        ["Formula", c.formula.name],
        ["Active version", f"{v.version} (effective {v.effective.isoformat()})"],
        ["Content hash", Raw(f"<code>{esc(lock.get(v.version, 'not locked'))}</code>")],
        ["FHIR Library", link(f"../fhir/{fhir_name(c.slug, v.version)}", fhir_name(c.slug, v.version))],
    ], sortable=False))
    out += calculator_section(reg, c)
    out += _formula_and_text(reg, c)
    out += _inputs_and_data(reg, c)
    out += worked_example(reg, c)
    out += _provenance(reg, c)
    out += _completeness(c, audits)
    out += _lineage(reg, c)
    out += _deviations(c, audits)
    out += _versions(reg, c, lock)
    out += safety or []
    out += _accuracy(c, accuracy)
    return "\n".join(out) + "\n"


def _formula_and_text(reg: Registry, c: Calculator) -> list[str]:
    """The formula as an expression and the supplied text of the active version."""
    out: list[str] = []
    v = c.active
    try:
        expr = render_expression(c, calcs=reg.calculators, units=reg.units)
    except TextError as e:
        expr = f"(cannot render: {e})"
    if expr:
        out += ["", "## Formula", "", f'<div class="fr-expression">{esc(expr)}</div>']
    text = version_text(reg, c, v)
    out += ["", "## Supplied text", "",
            f"The text a model or clinician is given for version {v.version}, rendered from the registry "
            "(every number below comes from the constants and tables further down).", "",
            f'<pre class="fr-text">{esc(text or "(cannot render)")}</pre>']
    return out


def _value_words(value: Any) -> str:
    """A registry value as a reader reads it: yes/no for a boolean, a number as the texts print it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return fmt_number(value)
    return str(value)


def _options_and_default(i: Any) -> Raw | str:
    """A choice's options, and what the calculator assumes when the input is not given: the registry's default,
    named as such (with the registry's reason, where it gives one), never a Python value."""
    options = ", ".join(i.options)
    if i.default is None:
        return options or "–"
    why = f": {i.description}" if i.description else ""
    assumed = f"{_value_words(i.default)} when not given"
    text = f"{options}; {assumed}" if options else assumed
    return Raw(f"{esc(text)}<br><small>the registry's default{esc(why)}</small>", sort=text)


def _inputs_and_data(reg: Registry, c: Calculator) -> list[str]:
    """Inputs, constants, tables and dependencies."""
    out: list[str] = []
    out += ["", "## Inputs", ""]
    out.append(table(["Input", "Kind", "Unit", "Accepted units", "Plausible range", "Required", "Options / default"],
                     [[Raw(f"<code>{esc(i.name)}</code>", sort=i.name), i.kind.value, i.unit,
                       ", ".join(i.accepted_units) or "–", _range(i),
                       "yes" if i.required else "no", _options_and_default(i)]
                      for i in c.inputs], sortable=False) if c.inputs else "No inputs.")
    if c.constants:
        out += ["", "## Constants", ""]
        out.append(table(["Name", "Value", "Unit", "Meaning", "Source", "Used by"],
                         [[Raw(f"<code>{esc(k)}</code>", sort=k), fmt_number(k_.value), k_.unit, k_.description,
                           k_.source, k_.applies_to if k_.applies_to != "both" else "both variants"]
                          for k, k_ in c.constants.items()], sortable=False))
    if c.tables:
        out += ["", "## Tables", ""]
        out.append(table(["Name", "Meaning", "Reads", "Entries", "Used by"],
                         [[Raw(f"<code>{esc(k)}</code>", sort=k), t.description, t.variable,
                           Raw(_table_rows(t)), t.applies_to if t.applies_to != "both" else "both variants"]
                          for k, t in c.tables.items()], sortable=False))
    if c.depends_on:
        out += ["", "## Dependencies", "", "Calculators this one uses; a fix to them lands here too.", ""]
        out += [f"- [{esc(reg.calculators[d].name)}]({d}.md)" if d in reg.calculators else f"- {esc(d)}"
                for d in c.depends_on]
    return out


def _provenance(reg: Registry, c: Calculator) -> list[str]:
    """The original publication, guidelines and the literature audit."""
    out: list[str] = []
    out += ["", "## Provenance", "", f"**Original publication.** {cite(c.formula.publication)}", ""]
    if c.formula.publication.note:
        out += [f"<small>{esc(c.formula.publication.note)}</small>", ""]
    if c.provenance:
        out += ["**Guidelines and source documents.**", "", '<ul class="fr-provenance">']
        for p in c.provenance:
            g = reg.guidelines.get(p.guideline)
            if g is None:
                out.append(f"<li>{badge(p.relation.value)} {esc(p.guideline)} ({esc(p.jurisdiction)})</li>")
                continue
            item = (f"<li>{badge(p.relation.value)} <strong>{esc(g.title)}</strong> ({esc(g.body)}, {g.year}; "
                    f"{esc(p.jurisdiction)}; {esc(g.kind.value)})")
            if g.publication is not None:
                item += f"<br>{cite(g.publication)}"
            else:
                item += " " + verified_badge(g.verified)
            if p.note:
                item += f"<br><small>{esc(p.note)}</small>"
            out.append(item + "</li>")
        out.append("</ul>")

    la = c.literature_audit
    out += ["", "## Literature audit", "",
            f"**Concern:** {esc(CONCERN_LABELS[la.concern.value])}" + (f". {esc(la.summary)}" if la.summary else "")]
    if la.source:
        out += ["", f"<small>Source: {esc(la.source)}</small>"]
    return out


def _completeness(c: Calculator, audits: AuditInputs) -> list[str]:
    """The paper's completeness finding and today's automatic audit."""
    out: list[str] = []
    out += ["", "## Completeness history", ""]
    if c.completeness:
        cp = c.completeness
        out.append(table(["Audit", "Status", "What was wrong", "What changed", "Source"],
                         [["original text: the paper's audit of the text the benchmark supplied",
                           Raw(completeness_badge(cp.status.value)),
                           cp.finding, cp.change, cp.source]], sortable=False))
    a = audits.completeness.get(c.slug)
    if a is not None:
        out += ["", f"Completeness of the current text (this registry's active text, {a.version}, checked by "
                f"`formula audit completeness`): **{esc(completeness_words(a.missing))}**."]
        if a.cases:
            out += ["", f"Agreement with the benchmark: **{esc(agreement_words(a.agree, a.cases))}** "
                    f"({esc(AGREEMENT_RULE)})."]
    return out


def _lineage(reg: Registry, c: Calculator) -> list[str]:
    """Successors, alternatives and predecessors, with their impact reports."""
    out: list[str] = []
    succ = [r for r in c.replacements]
    preds = predecessors(reg, c.slug)
    if succ or preds:
        out += ["", "## Replacements and lineage", ""]
        for r in succ:
            target = (f"[{esc(r.name)}]({r.successor}.md)" if r.successor in reg.calculators else esc(r.name))
            kind = "Replaced by" if r.kind == "replaced_by" else "Alternative"
            g = reg.guidelines.get(r.guideline) if r.guideline else None
            line = f"- **{kind}** {target} ({esc(r.jurisdiction)}, since {esc(r.since)})"
            if g:
                line += f", per {esc(g.title)} ({esc(g.body)} {g.year})"
            if r.note:
                line += f". {esc(r.note)}"
            if r.successor in reg.calculators:  # the Impact section has a page for every linked pair
                line += f" ([version-impact report](../impact/{impact_page(c.slug, r.successor)}.md))"
            out.append(line)
        for pc in preds:
            out.append(f"- **Successor of** [{esc(pc.name)}]({pc.slug}.md) ([version-impact report]"
                       f"(../impact/{impact_page(pc.slug, c.slug)}.md))")
        out += ["", "See the [lineage diagram](../lineage.md)."]
    return out


def _deviations(c: Calculator, audits: AuditInputs) -> list[str]:
    """Where the benchmark departs from the publication."""
    out: list[str] = []
    if c.deviations:
        out += ["", "## Where the benchmark departs from the publication", ""]
        f = audits.fidelity.get(c.slug)
        if f is not None and f.cases:
            out += [f"{f.differ} of {f.cases} reference cases score differently under the published formula.", ""]
        out.append(table(["Deviation", "The benchmark does", "The publication says", "Where stated", "Checked"],
                         [[Raw(f"<code>{esc(d.id)}</code>"), d.benchmark, d.published, d.citation,
                           Raw(verified_badge(d.verified))] for d in c.deviations], sortable=False))
    return out


def _versions(reg: Registry, c: Calculator, lock: dict[str, str]) -> list[str]:
    """Every version with its review, sign-offs and hash, and the text changes between released ones."""
    out: list[str] = []
    out += ["", "## Version history", ""]
    rows = []
    from registry.governance.signatures import views as decision_views

    decided = decision_views(reg, c)
    for x in sorted(c.versions, key=lambda x: x.key, reverse=True):
        typed = [f"{esc(s.who)} ({esc(s.role)}, {s.date.isoformat()}; typed, not signed)" for s in x.signoffs]
        signs = "<br>".join([_decision(d) for d in decided if d.version == x.version] + typed) or "none"
        review = "<br>".join(_review_cell(decided, x))
        h = lock.get(x.version, "")
        content = f"<code>{esc(h[:19] or '–')}</code>"
        if x.status in (VersionStatus.active, VersionStatus.superseded):
            content += f'<br><a href="../fhir/{esc(fhir_name(c.slug, x.version))}">FHIR Library</a>'
        rows.append([Raw(f"<strong>{esc(x.version)}</strong><br>{esc(x.status.value)}", sort=x.version),
                     x.effective.isoformat(), Raw(review), Raw(signs), x.changelog, Raw(content)])
    out.append(table(["Version", "Effective", "Review", "Decisions and sign-offs", "What changed and why", "Content hash"], rows,
                     sortable=False))
    rel = sorted(ver.released(c), key=lambda x: x.key)
    for old, new in zip(rel, rel[1:]):
        a_text, b_text = version_text(reg, c, old), version_text(reg, c, new)
        if a_text is None or b_text is None:
            continue
        diff = list(difflib.unified_diff(a_text.splitlines(), b_text.splitlines(), f"{c.slug} {old.version}",
                                         f"{c.slug} {new.version}", lineterm=""))
        out += ["", f"### Text changes {old.version} → {new.version}", ""]
        out.append('<pre class="fr-diff">' + "\n".join(_diff_line(d) for d in diff) + "</pre>" if diff
                   else "The rendered text did not change.")
    return out


def _accuracy(c: Calculator, accuracy: list[dict[str, Any]]) -> list[str]:
    """Accuracy of every stored run on this calculator."""
    out: list[str] = []
    out += ["", "## Accuracy per arm", ""]
    if accuracy:
        out.append(table(["Run", "Arm", "Model", "Rows", "Accuracy (%)", "Text"],
                         [[link(f"../results/index.html#{r['anchor']}", r["label"]), r["arm"], r["model"], r["n"],
                           pct(r["accuracy"]), _text_state(r)] for r in accuracy], sortable=False))
    elif c.medcalc_id is None:
        out.append("Not in the benchmark, so no stored run scores it.")
    else:
        out.append("No stored run includes this calculator.")
    return out


def _diff_line(line: str) -> str:
    cls = {"+": "fr-add", "-": "fr-del", "@": "fr-hunk"}.get(line[:1])
    return f'<span class="{cls}">{esc(line)}</span>' if cls else esc(line)


def calculators_index(reg: Registry, on: dt.date | None = None) -> str:
    rows = []
    for c in ordered(reg):
        rows.append([num(c.medcalc_id), link(f"{c.slug}.html", c.name), c.category.value, c.intended_use.value,
                     Raw(group_badge(c.audit_group), sort=c.audit_group) if c.medcalc_id is not None else "successor",
                     CONCERN_LABELS[c.literature_audit.concern.value],
                     c.completeness.status.value if c.completeness else "not audited",
                     c.active.version, review_status(c.active, on or clock.today()),
                     c.active.last_review.isoformat() if c.active.last_review else "never", len(c.deviations),
                     sum(not x.verified for x in citations(reg, c))])
    return "\n".join([
        "---\nhide:\n  - navigation\n  - toc\n---",
        "# Calculators",
        "",
        f"All {len(rows)} calculators of the registry. Each page shows the supplied text, inputs, constants, "
        "provenance, audits, lineage, version history and accuracy per arm.",
        "",
        table(["Benchmark id", "Calculator", "Category", "Intended use", "Audit group", "Concern", "Original text (paper)",
               "Version", "Review", "Last review", "Deviations", "Unverified citations"], rows),
    ])


# --------------------------------------------------------------------------- lineage


def lineage_svg(reg: Registry) -> str:
    """Predecessor -> successor boxes, drawn as SVG at build time (links to the calculator pages)."""
    edges = []
    for c in ordered(reg):
        for r in c.replacements:
            label = f"{'replaced by' if r.kind == 'replaced_by' else 'alternative'} · {r.jurisdiction} · since {r.since}"
            edges.append((c, r, label))
    h_row, width = 64, 980
    height = max(1, len(edges)) * h_row + 20
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
             f'role="img" aria-label="Lineage of formulas: predecessors and their successors" class="fr-lineage">']
    for n, (c, r, label) in enumerate(edges):
        y = 10 + n * h_row
        parts.append(_svg_box(10, y, 300, 40, c.name, f"{c.slug}.html"))
        target = f"{r.successor}.html" if r.successor in reg.calculators else None
        parts.append(_svg_box(670, y, 300, 40, r.name, target, dashed=target is None))
        parts.append(f'<line x1="310" y1="{y + 20}" x2="662" y2="{y + 20}" class="fr-edge" '
                     f'stroke-dasharray="{"6 4" if r.kind == "alternative" else "0"}"/>')
        parts.append(f'<polygon points="662,{y + 14} 670,{y + 20} 662,{y + 26}" class="fr-arrow"/>')
        above, below = _two_lines(label, 56)  # above the arrow, and below it when the label is long
        parts.append(f'<text x="490" y="{y + 14}" text-anchor="middle" class="fr-label">{esc(above)}</text>')
        if below:
            parts.append(f'<text x="490" y="{y + 34}" text-anchor="middle" class="fr-label">{esc(below)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _two_lines(text: str, width: int) -> tuple[str, str]:
    """Split at a space into at most two lines of about `width` characters; nothing is cut."""
    if len(text) <= width:
        return text, ""
    cut = text.rfind(" ", 0, width + 1)
    cut = cut if cut > 0 else text.find(" ")
    return (text, "") if cut < 0 else (text[:cut], text[cut + 1:])


def _svg_box(x: int, y: int, w: int, h: int, text: str, href: str | None, dashed: bool = False) -> str:
    first, second = _two_lines(text, 38)  # a long name takes two lines of the box, whole
    lines = (f'<tspan x="{x + w / 2}" dy="-0.55em">{esc(first)}</tspan><tspan x="{x + w / 2}" dy="1.15em">'
             f'{esc(second)}</tspan>') if second else esc(first)
    box = (f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" class="fr-node{" fr-external" if dashed else ""}"/>'
           f'<text x="{x + w / 2}" y="{y + h / 2 + 5}" text-anchor="middle" class="fr-node-text">{lines}</text>')
    return f'<a href="{esc(href)}">{box}</a>' if href else box


def lineage(reg: Registry) -> str:
    rows = []
    for c in ordered(reg):
        for r in c.replacements:
            g = reg.guidelines.get(r.guideline) if r.guideline else None
            succ = (link(f"calculators/{r.successor}.html", r.name) if r.successor in reg.calculators
                    else Raw(esc(r.name) + (" " + verified_badge(r.citation.verified) if r.citation else ""), sort=r.name))
            rows.append([link(f"calculators/{c.slug}.html", c.name), "replaced by" if r.kind == "replaced_by"
                         else "alternative", succ, r.jurisdiction, r.since,
                         Raw(f"{esc(g.title)} ({esc(g.body)} {g.year}) {verified_badge(g.verified)}", sort=g.title)
                         if g else "–", r.note])
    svg = lineage_svg(reg).replace('href="', 'href="calculators/')
    return "\n".join([
        "---\nhide:\n  - navigation\n  - toc\n---",  # the table and the diagram need the width
        "# Lineage",
        "",
        "Predecessor and successor formulas, and the guidelines behind each replacement. Solid arrows: "
        "replaced by; dashed arrows: an alternative. Boxes with a dashed border are successors the registry "
        "cites but does not hold. Click a box to open its calculator page.",
        "",
        f'<div class="fr-figure">{svg}</div>',
        "",
        table(["Predecessor", "Relation", "Successor", "Jurisdiction", "Since", "Guideline", "Note"], rows),
    ])


# --------------------------------------------------------------------------- changelog


def _review_cell(decided: list[Any], x: Version) -> list[str]:
    """Approval and reviews as the decisions say: a verified signed approval names who and their role
    ("approved 2026-12-02 (Dr A. Chair, chair), verified"); a typed one says it is not signed."""
    from registry.governance.signatures import last_of, signed_phrase

    ok, review = last_of(decided, x.version, "approve"), last_of(decided, x.version, "review")
    bad = [d for d in decided if d.version == x.version and d.decision == "approve" and d.state == "invalid"]
    if ok is not None:
        approved = esc(signed_phrase("approved", ok))
    elif bad:
        approved = f"approval {esc(bad[-1].date)}: <strong>signature invalid</strong>"
    elif x.approved and x.approved_by:
        approved = f"approved {x.approved.isoformat()} ({esc(x.approved_by.who)}, {esc(x.approved_by.role)}; typed, not signed)"
    else:
        approved = f"approved {x.approved.isoformat() if x.approved else '–'}"
    last = esc(signed_phrase("last review", review)) if review is not None else \
        f"last review {x.last_review.isoformat() if x.last_review else 'never'}"
    return [approved, last, f"next review {x.next_review.isoformat() if x.next_review else '–'}"]


def _decision(d: Any) -> str:
    """A decision (registry.governance.signatures.DecisionView) as the site shows it: verified ones name person, role and key."""
    if d.state == "recorded_before_signing":
        return f"{esc(d.decision)}: recorded before signing ({esc(d.date)}; not verified)"
    if d.state == "invalid":
        return f"{esc(d.decision)} by {esc(d.role or '?')} on {esc(d.date)}: <strong>signature invalid</strong> ({esc(d.why)})"
    return (f"{esc(d.decision)}: {esc(d.name or d.principal)} ({esc(d.role)}, {esc(d.date)}), verified, key "
            f"<code>{esc(d.fingerprint)}</code>")


def _signoff(s: Any) -> str:
    """A sign-off as 'who (role, date)', from a dict or an object with those fields."""
    get = s.get if isinstance(s, dict) else (lambda k: getattr(s, k, None))
    if get("who") is None:
        return esc(s)
    return f"{esc(get('who'))} ({esc(get('role'))}, {esc(get('date'))})"


def _plain(x: Any) -> str:
    if isinstance(x, dict):
        return "; ".join(f"{k}: {v}" for k, v in x.items())
    return str(x)


def _nowrap(x: Any) -> Raw:
    """A date or version on one line (a table column never breaks 2026-12-01 as 2026-12-/01)."""
    return Raw(f'<span class="fr-nowrap">{esc(x)}</span>', sort=str(x))


def changelog_page(entries: list[Any]) -> str:
    from registry.governance.changelog import grouped, people

    rows = []
    for g in grouped(entries):
        e = g.entries[0]
        if g.bulk:
            names = ", ".join(f"{x.slug} {x.version}" for x in g.entries)
            rows.append([_nowrap(e.effective), f"{len(g.entries)} calculators (released together)", "–", "–", "–",
                         e.reason, names, "–"])
            continue
        signs = "<br>".join(_signoff(s) for s in (e.signoffs or [])) or "none"
        changes = "<br>".join(esc(_plain(x)) for x in (e.changes or [])) or "–"
        who = " ".join(people(e)) or "–"
        rows.append([_nowrap(e.effective), link(f"calculators/{e.slug}.html", e.name), _nowrap(e.version), e.status,
                     who, e.reason,
                     Raw(changes), Raw(signs)])
    return "\n".join([
        "---\nhide:\n  - navigation\n  - toc\n---",
        "# Changelog",
        "",
        f"Every version released across the registry ({len(entries)}), newest first; within a day the substantive "
        "changes come before bulk migrations, each migration shown as one row. Who released and approved a "
        "version is shown where it is recorded.",
        "",
        table(["Effective", "Calculator", "Version", "Status", "Released and approved by", "Why", "What changed",
               "Sign-offs"], rows),
    ])
