"""The Impact section: one page per predecessor -> successor pair the registry links.

`audit.impact.impact` computes both formulas on the shipped reference cases (the audit layer calls
the library); these pages lay out its report: how many cases could be compared and why not, the
distribution of the differences, and reclassification across the registry's clinical bands.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from audit.impact import ImpactError, ImpactReport, impact
from formula_site import plots
from formula_site.markup import Raw, badge, esc, fixed, front_matter_title, impact_page, link, table
from registry.loader import Registry
from registry.schema import Replacement
from solver.data import Case

RELATION_LABELS = {"replaced_by": "replaced by", "alternative": "alternative", "not linked": "not linked"}


@dataclass
class ImpactPage:
    predecessor: str
    successor: str
    replacement: Replacement
    report: ImpactReport | None  # None when the audit layer refused the pair
    refusal: str | None = None

    @property
    def name(self) -> str:
        return impact_page(self.predecessor, self.successor)


def linked_pairs(reg: Registry) -> list[tuple[str, Replacement]]:
    """(predecessor slug, replacement) for every replacement naming a successor the registry holds."""
    out = []
    for c in sorted(reg.calculators.values(), key=lambda c: (c.medcalc_id is None, c.medcalc_id or 0, c.slug)):
        for r in c.replacements:
            if r.successor is not None and r.successor in reg.calculators:
                out.append((c.slug, r))
    return out


def compute_pages(reg: Registry, cases: list[Case]) -> list[ImpactPage]:
    pages = []
    for pred, r in linked_pairs(reg):
        assert r.successor is not None
        try:
            pages.append(ImpactPage(pred, r.successor, r, impact(reg, pred, r.successor, cases)))
        except ImpactError as e:
            pages.append(ImpactPage(pred, r.successor, r, None, str(e)))
    return pages


def _n(x: float) -> Raw:
    return Raw(fixed(x), sort=f"{x:.6f}")


def _mean(x: float, unit: str | None) -> Raw:
    """A mean difference with its unit (rows mix mL/min, ms, points...), kept on one line."""
    shown = fixed(x) + (f"\u00a0{unit}" if unit else "")
    return Raw(f'<span class="fr-nowrap">{esc(shown)}</span>', sort=f"{x:.6f}")


def _calc(reg: Registry, slug: str) -> Raw:
    return link(f"../calculators/{slug}.html", reg.calculators[slug].name)


def index_page(reg: Registry, pages: Sequence[ImpactPage], data_label: str) -> str:
    rows = []
    for p in pages:
        rep = p.report
        summ = rep.summary() if rep else {}
        rec = rep.reclassified() if rep and rep.band_tables else None
        none = rep is not None and rep.compared == 0  # said as such, not as an empty mean and band count
        rows.append([
            _calc(reg, p.predecessor), RELATION_LABELS.get(p.replacement.kind, p.replacement.kind),
            _calc(reg, p.successor), p.replacement.jurisdiction,
            rep.cases if rep else "–",
            (Raw('0 <span class="fr-note">(no shared inputs)</span>', sort="0") if none
             else rep.compared if rep else Raw(badge("refused", "warn"))),
            "none compared" if none else _mean(summ["mean"], reg.calculators[p.successor].output.unit) if summ else "–",
            "none compared" if none else f"{rec['moved']} of {rep.compared}" if rec and rep else "no bands",
            link(f"{p.name}.html", "report"),
        ])
    return "\n".join([
        "---\nhide:\n  - navigation\n  - toc\n---",  # the table needs the width
        "# Version impact",
        "",
        "What changes for patients when a formula is replaced by its successor (or an alternative is used): for "
        "each pair the registry links, both formulas computed by the library on every reference case of the "
        f"predecessor whose inputs the successor can use ({esc(data_label)}). The computation is the audit "
        "layer's (`formula impact PREDECESSOR SUCCESSOR`); these pages present it.",
        "",
        table(["Predecessor", "Relation", "Successor", "Jurisdiction", "Cases", "Compared",
               "Mean difference (successor's unit)", "Change band", "Page"], rows),
        "",
        "The reference cases were written for the benchmark's formulas, so they often lack inputs the "
        "successor needs; each page says how many cases could not be compared and why. Where a successor input "
        "is optional and absent, the registry's default was used, and the page counts how often.",
        "",
    ])


def _why_none(reg: Registry, p: ImpactPage) -> str:
    """Why a pair compares no case, from the audit layer's counts: the successor's required inputs the cases lack,
    and whether the predecessor takes them at all (if not, its cases were never written to hold them)."""
    pred, succ = reg.calculators[p.predecessor], reg.calculators[p.successor]
    rep = p.report
    assert rep is not None
    if rep.cases == 0:
        return f"No case could be compared: the data holds no case of {esc(pred.slug)}."
    if not rep.unavailable:
        return (f"No case could be compared: {esc(pred.slug)} could not be computed on any of its {rep.cases} "
                "reference cases (the reasons per case are below).")
    out = (f"No case could be compared: no reference case of {esc(pred.slug)} holds every input {esc(succ.slug)} "
           "requires")
    if not rep.missing_inputs:
        return out + " (the reasons per case are below)."
    out += (" (the first one each case lacks: "
            + ", ".join(f"{esc(k)} in {n} of {rep.cases}" for k, n in rep.missing_inputs.most_common()) + ")")
    taken = {i.name.casefold() for i in pred.inputs}
    foreign = [k for k in rep.missing_inputs if k.casefold() not in taken]
    if foreign:
        one = len(foreign) == 1
        out += (f". {esc(pred.slug)} does not take {esc(', '.join(foreign))}, so its cases, written for it, were never "
                f"meant to hold {'it' if one else 'them'}: the formulas do not share {'that input' if one else 'those inputs'}")
    return out + "."


def pair_page(reg: Registry, p: ImpactPage, data_label: str, figures: dict[str, str]) -> str:
    # long: one page, section by section
    pred, succ = reg.calculators[p.predecessor], reg.calculators[p.successor]
    r = p.replacement
    out = [front_matter_title(f"{pred.name} → {succ.name}"), f"# {esc(pred.name)} → {esc(succ.name)}", ""]
    facts: list[list[Any]] = [
        ["Predecessor", Raw(f"{_calc(reg, pred.slug).html} <code>{esc(pred.slug)}</code>")],
        ["Successor", Raw(f"{_calc(reg, succ.slug).html} <code>{esc(succ.slug)}</code>")],
        ["Relation in the registry", f"{RELATION_LABELS.get(r.kind, r.kind)} ({r.jurisdiction}, since {r.since})"],
    ]
    if r.guideline and r.guideline in reg.guidelines:
        g = reg.guidelines[r.guideline]
        facts.append(["Guideline", f"{g.title} ({g.year})"])
    if r.note:
        facts.append(["Note", r.note])
    facts.append(["Data", data_label])
    rep = p.report
    if rep is not None:
        facts += [["Versions compared", f"{pred.slug} {rep.predecessor_version} → {succ.slug} {rep.successor_version}"],
                  ["Library variant", rep.variant]]
    out += [table(["", ""], facts, sortable=False), ""]
    if rep is None:
        out += ["The audit layer cannot compare this pair:", "", f"> {esc(p.refusal)}", ""]
        return "\n".join(out)

    n_un, n_fail = sum(rep.unavailable.values()), sum(rep.predecessor_failed.values())
    out += ["## Cases", ""]
    if rep.compared == 0:
        out += [_why_none(reg, p), ""]
    out += [
            table(["", "Cases"], [[f"reference cases of {pred.slug}", rep.cases],
                                  ["compared (both computed)", rep.compared],
                                  ["successor not computable", n_un],
                                  ["predecessor not computable", n_fail]], sortable=False), ""]
    why = [[f"successor: {k}", n, rep.examples.get(k, "")] for k, n in rep.unavailable.most_common()]
    why += [[f"predecessor: {k}", n, rep.examples.get(k, "")] for k, n in rep.predecessor_failed.most_common()]
    if why:
        out += ["### Why cases could not be compared", "", table(["Reason", "Cases", "Example"], why), ""]
    if rep.defaults_used:
        out += ["### Successor inputs absent from the data", "",
                "These optional inputs of the successor are not in the reference cases; the registry's default "
                "was used (typically: the condition is absent).", "",
                table(["Input", "Cases"], [[k, n] for k, n in rep.defaults_used.most_common()]), ""]

    s = rep.summary()
    out += [f"## Difference ({succ.slug} minus {pred.slug})", ""]
    if not s:
        out += ["No case could be compared (see [Cases](#cases)), so there is no difference or reclassification "
                "to show.", ""]
        return "\n".join(out)
    unit = succ.output.unit or ""
    out += [f"In the successor's unit{f' ({unit})' if unit else ''}; higher / lower / same count the cases.", "",
            table(["Cases", "Higher", "Lower", "Same", "Mean", "SD"],
                  [[s["n"], s["higher"], s["lower"], s["same"], _n(s["mean"]), _n(s["sd"])]], sortable=False), "",
            table(["Min", "5th", "25th", "Median", "75th", "95th", "Max"],
                  [[_n(s[k]) for k in ("min", "p5", "p25", "median", "p75", "p95", "max")]], sortable=False,
                  caption="Percentiles of the difference")]
    fig = f"{p.name}.svg"
    figures[fig] = plots.differences(rep.differences, f"{succ.slug} minus {pred.slug}" + (f" ({unit})" if unit else ""))
    out += ["", f'<figure class="fr-figure"><img src="{fig}" alt="Distribution of the differences">'
            "<figcaption>Distribution of the differences, one count per compared case.</figcaption></figure>", ""]

    if rep.band_tables and rep.transitions:
        rec = rep.reclassified()
        cats = sorted(set(rep.from_labels) | set(rep.to_labels))
        none_from = any(a is None for a, _ in rep.transitions)
        none_to = any(b is None for _, b in rep.transitions)
        rows_c: list[Any] = cats + ([None] if none_from else [])
        cols_c: list[Any] = cats + ([None] if none_to else [])
        out += ["## Reclassification", "",
                f"Bands: `{rep.band_tables[0]}` for {pred.slug}, `{rep.band_tables[1]}` for {succ.slug} (registry "
                f"tables). **{rec['moved']} of {rep.compared}** cases change band: {rec['up']} to a higher one (a "
                f"later stage, i.e. lower function, or a higher risk category) and {rec['down']} to a lower one. "
                f"Rows: the predecessor's band; columns: the successor's.", "",
                table(["from \\ to"] + [rep.to_labels.get(b, "no band") if b is not None else "no band" for b in cols_c],
                      [[rep.from_labels.get(a, "no band") if a is not None else "no band"]
                       + [Raw(f"<strong>{n}</strong>" if n and a != b else str(n), sort=str(n))
                          for b in cols_c for n in [rep.transitions.get((a, b), 0)]] for a in rows_c],
                      sortable=False), ""]
    else:
        out += ["## Reclassification", "", "The registry holds no band table for this pair, so only the differences "
                "are reported.", ""]
    return "\n".join(out)
