"""Version-impact reports: what changes for patients when a formula is replaced by its successor.

For every case of the predecessor in a dataset whose inputs the successor can use, compute both
(with the library, the same variant), report the distribution of the differences, and how many
cases move between the clinically used bands (CKD G-stages, anticoagulation categories, 10-year
risk categories). The band edges are registry tables; this module only says which table each
side of a pair is classified with.
"""
from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from registry.loader import Registry
from registry.schema import Calculator, Table
from solver.data import Case
from solver.library import CalculatorError, MissingInput, compute


@dataclass(frozen=True)
class Bands:
    """Classify a result with a registry table; `minus_points` removes one criterion's points first."""

    calculator: str  # registry slug holding the table
    table: str
    minus_points: tuple[str, str, str, str] | None = None  # (points table, key, input, value that scores it)

    def resolve(self, reg: Registry) -> Table:
        try:
            return reg.calculators[self.calculator].tables[self.table]
        except KeyError:
            raise ImpactError(f"band table {self.calculator}:{self.table} is not in the registry") from None

    def category(self, reg: Registry, value: float, entities: dict[str, Any]) -> float | None:
        """The band's value (its category: higher means lower GFR or higher risk), None when no band holds."""
        t = self.resolve(reg)
        if self.minus_points:
            ptable, key, name, scoring = self.minus_points
            if entities.get(name) == scoring:
                value -= reg.calculators[self.calculator].tables[ptable].points[key]  # type: ignore[index]
        for b in t.bands or []:
            if b.holds(value):
                return b.value
        return None

    def labels(self, reg: Registry) -> dict[float, str]:
        return {b.value: b.label or str(b.value) for b in self.resolve(reg).bands or []}


# Which bands classify each side of a known pair. Pairs without an entry still get the differences.
PAIR_BANDS: dict[tuple[str, str], tuple[Bands, Bands]] = {
    ("mdrd-gfr", "ckd-epi-2021"): (Bands("ckd-epi-2021", "gfr_categories"), Bands("ckd-epi-2021", "gfr_categories")),
    ("cha2ds2-vasc", "cha2ds2-va"): (
        Bands("cha2ds2-vasc", "treatment_categories", ("points", "female sex", "sex", "Female")),
        Bands("cha2ds2-va", "treatment_categories")),
    ("framingham-hard-chd", "pooled-cohort-equations"): (
        Bands("pooled-cohort-equations", "risk_categories"), Bands("pooled-cohort-equations", "risk_categories")),
}


class ImpactError(ValueError):
    """A pair that cannot be compared; the message says why."""


@dataclass
class ImpactReport:
    predecessor: str
    predecessor_version: str
    successor: str
    successor_version: str
    variant: str
    relation: str  # replaced_by / alternative / not linked
    cases: int = 0  # cases of the predecessor in the data
    compared: int = 0
    unavailable: Counter = field(default_factory=Counter)  # reason -> count
    examples: dict[str, str] = field(default_factory=dict)  # reason -> one message
    missing_inputs: Counter = field(default_factory=Counter)  # successor's required input absent from a case -> count
    predecessor_failed: Counter = field(default_factory=Counter)
    defaults_used: Counter = field(default_factory=Counter)  # successor optional input not in the data -> count
    differences: list[float] = field(default_factory=list)  # successor - predecessor
    from_labels: dict[float, str] = field(default_factory=dict)  # category -> predecessor's band label
    to_labels: dict[float, str] = field(default_factory=dict)  # category -> successor's band label
    transitions: Counter = field(default_factory=Counter)  # (from category, to category) -> count
    band_tables: tuple[str, str] | None = None

    def summary(self) -> dict[str, Any]:
        d = self.differences
        if not d:
            return {}
        qs = statistics.quantiles(d, n=20, method="inclusive") if len(d) > 1 else [d[0]] * 19
        return {"n": len(d), "mean": statistics.fmean(d), "sd": statistics.stdev(d) if len(d) > 1 else 0.0,
                "min": min(d), "p5": qs[0], "p25": qs[4], "median": statistics.median(d), "p75": qs[14],
                "p95": qs[18], "max": max(d), "higher": sum(x > 0 for x in d), "lower": sum(x < 0 for x in d),
                "same": sum(x == 0 for x in d)}

    def reclassified(self) -> dict[str, int]:
        """Cases that change category; `up` = to a higher category (lower GFR stage or higher risk)."""
        up = sum(n for (a, b), n in self.transitions.items() if a is not None and b is not None and b > a)
        down = sum(n for (a, b), n in self.transitions.items() if a is not None and b is not None and b < a)
        return {"moved": up + down, "up": up, "down": down,
                "same": sum(n for (a, b), n in self.transitions.items() if a == b)}

    def to_json(self) -> dict[str, Any]:
        return {
            "predecessor": self.predecessor, "predecessor_version": self.predecessor_version,
            "successor": self.successor, "successor_version": self.successor_version, "variant": self.variant,
            "relation": self.relation, "cases": self.cases, "compared": self.compared,
            "unavailable": dict(self.unavailable), "predecessor_failed": dict(self.predecessor_failed),
            "examples": self.examples,
            "defaults_used": dict(self.defaults_used), "difference": self.summary(),
            "band_tables": list(self.band_tables) if self.band_tables else None,
            "transitions": [{"from": self.from_labels.get(a, "no band"), "to": self.to_labels.get(b, "no band"), "n": n}
                            for (a, b), n in sorted(self.transitions.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1])))],
            "reclassified": self.reclassified() if self.band_tables else None,
        }


def _relation(pred: Calculator, succ: Calculator) -> str:
    for r in pred.replacements:
        if r.successor == succ.slug:
            return r.kind
    return "not linked"


def _why(e: CalculatorError, examples: dict[str, str]) -> str:
    """Group refusals by kind and variable (an out-of-range age, a missing input), keeping one example."""
    key = f"{type(e).__name__} ({e.variable})" if e.variable else type(e).__name__
    examples.setdefault(key, str(e))
    return key


def _refuse_unlinked(pred: Calculator, succ: Calculator) -> None:
    """Two calculators the registry does not link: say why a comparison means nothing, and how to force it."""
    if any(r.successor == pred.slug for r in succ.replacements):
        raise ImpactError(f"the registry links them the other way round ({succ.slug} -> {pred.slug}): give the "
                          f"predecessor first, `formula impact {succ.slug} {pred.slug}`")
    named = [r.successor for r in pred.replacements if r.successor]
    known = f"; {pred.slug}'s successors and alternatives: {', '.join(named)}" if named else ""
    raise ImpactError(f"the registry does not link {pred.slug} to {succ.slug} (no replaced_by or alternative entry"
                      f"{known}), so the differences would compare unrelated quantities; pass --unlinked to "
                      "compare them anyway")


def impact(reg: Registry, predecessor: str, successor: str, cases: list[Case], *,
           variant: str = "published", unlinked: bool = False) -> ImpactReport:
    """Compare a predecessor with its successor; `unlinked` allows a pair the registry does not link."""
    try:
        pred, succ = reg.get(predecessor), reg.get(successor)
    except KeyError as e:
        from registry.suggest import unknown_calculator

        raise ImpactError(unknown_calculator(reg, e.args[0])) from None
    if pred.output.kind.value not in ("decimal", "integer") or succ.output.kind.value not in ("decimal", "integer"):
        raise ImpactError("impact reports compare numeric results; dates and gestational ages are not supported")
    if pred.medcalc_id is None:
        raise ImpactError(f"{pred.slug} has no benchmark id, so the data holds no cases of it")
    if _relation(pred, succ) == "not linked" and not unlinked:
        _refuse_unlinked(pred, succ)
    rep = ImpactReport(pred.slug, pred.active.version, succ.slug, succ.active.version, variant, _relation(pred, succ))
    bands = PAIR_BANDS.get((pred.slug, succ.slug))
    if bands:
        rep.from_labels, rep.to_labels = bands[0].labels(reg), bands[1].labels(reg)
        rep.band_tables = (f"{bands[0].calculator}:{bands[0].table}", f"{bands[1].calculator}:{bands[1].table}")
    names = {i.name for i in succ.inputs}
    optional = [i.name for i in succ.inputs if not i.required]
    for case in cases:
        if case.calculator_id != pred.medcalc_id:
            continue
        rep.cases += 1
        try:
            a = compute(pred.slug, case.entities, variant=variant, registry=reg).value
        except CalculatorError as e:
            rep.predecessor_failed[_why(e, rep.examples)] += 1
            continue
        ents = {k: v for k, v in case.entities.items() if k in names}
        try:
            b = compute(succ.slug, ents, variant=variant, registry=reg).value
        except CalculatorError as e:
            rep.unavailable[_why(e, rep.examples)] += 1
            if isinstance(e, MissingInput) and e.variable:
                rep.missing_inputs[e.variable] += 1
            continue
        rep.compared += 1
        for name in optional:
            if name not in ents:
                rep.defaults_used[name] += 1
        rep.differences.append(float(b) - float(a))  # type: ignore[arg-type]
        if bands:
            rep.transitions[(bands[0].category(reg, float(a), case.entities),  # type: ignore[arg-type]
                             bands[1].category(reg, float(b), ents))] += 1  # type: ignore[arg-type]
    return rep


def _num(x: float) -> str:
    return f"{x:.2f}"


def markdown(rep: ImpactReport, data_label: str) -> str:
    """A report a clinician can read; one page per pair."""
    out = [f"# Impact: {rep.predecessor} {rep.predecessor_version} -> {rep.successor} {rep.successor_version}", "",
           f"Data: {data_label}; variant: {rep.variant}; relation in the registry: {rep.relation}.", "",
           f"- cases of {rep.predecessor}: {rep.cases}",
           f"- compared (successor's inputs available): {rep.compared}"]
    if rep.predecessor_failed:
        out.append(f"- predecessor could not be computed: {sum(rep.predecessor_failed.values())}")
    n_un = sum(rep.unavailable.values())
    out.append(f"- successor not computable: {n_un}")
    for why, n in rep.unavailable.most_common():
        out.append(f"  - {n}: {why}, e.g. {rep.examples[why]}")
    for why, n in rep.predecessor_failed.most_common():
        out.append(f"  - predecessor, {n}: {why}, e.g. {rep.examples[why]}")
    if rep.defaults_used:
        out.append("- successor inputs absent from the data (the registry default was used):")
        for name, n in rep.defaults_used.most_common():
            out.append(f"  - {name!r}: {n} cases")
    s = rep.summary()
    if s:
        out += ["", f"## Difference ({rep.successor} minus {rep.predecessor})", "",
                "| n | mean | sd | min | p5 | p25 | median | p75 | p95 | max | higher | lower | same |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
                "| " + " | ".join([str(s["n"])] + [_num(s[k]) for k in ("mean", "sd", "min", "p5", "p25", "median",
                                                                          "p75", "p95", "max")]
                                 + [str(s["higher"]), str(s["lower"]), str(s["same"])]) + " |"]
    if rep.band_tables and rep.transitions:
        cats = sorted(set(rep.from_labels) | set(rep.to_labels))
        r = rep.reclassified()
        out += ["", f"## Reclassification ({rep.band_tables[0]} -> {rep.band_tables[1]})", "",
                f"{r['moved']} of {rep.compared} cases change category: {r['up']} to a higher one (a later G-stage, "
                f"i.e. lower GFR, or a higher risk category), {r['down']} to a lower one. Rows: {rep.predecessor}'s band; columns: "
                f"{rep.successor}'s band.", "",
                "| from \\ to | " + " | ".join(rep.to_labels.get(c, "no band") for c in cats) + " |",
                "|---|" + "---|" * len(cats)]
        for a in cats:
            row = [str(rep.transitions.get((a, b), 0)) for b in cats]
            out.append(f"| {rep.from_labels.get(a, 'no band')} | " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"
