"""Completeness audit of the supplied formula texts.

Static part: from the template's own syntax tree, every used input, every constant and table the
benchmark's calculation uses must be named, nothing unknown may be named, and every quantity's
unit must appear in the rendered text.

Completeness is the text's: whether it carries every input, constant, table and branch. Agreement is the
answers': how many of the benchmark's reference answers the library, reading the same constants the text
renders, reproduces. A deliberate factor change can move answers and leave the text complete, so the two are
reported apart, in the same words wherever they are shown (`formula audit completeness`, `formula review-pr`,
the site): `completeness_words` and `agreement_words`.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Any, Mapping

from registry.loader import Registry
from registry.schema import Calculator, InputKind, UnitsFile
from registry.texts import TextError, dependencies, references, render
from solver.data import Case
from solver.library import CalculatorError, RegistryInvalid, compute
from solver.scoring import is_correct

UNIT_KINDS = {InputKind.quantity, InputKind.measurement, InputKind.weight, InputKind.height,
              InputKind.temperature, InputKind.count_per_volume}


@dataclass
class TextAudit:
    slug: str
    medcalc_id: int | None
    version: str
    missing: list[str] = field(default_factory=list)
    cases: int = 0
    wrong: int = 0

    @property
    def complete(self) -> bool:
        """The text's completeness (not whether the reference answers agree: `agree`)."""
        return not self.missing

    @property
    def agree(self) -> int:
        return self.cases - self.wrong

    def to_json(self) -> dict[str, Any]:
        return {"slug": self.slug, "medcalc_id": self.medcalc_id, "version": self.version,
                "status": "complete" if self.complete else "incomplete", "missing": self.missing,
                "reference_cases": self.cases, "reference_wrong": self.wrong, "reference_agree": self.agree}


COMPLETE_WORDS = "complete: the text carries every input, constant, table and branch"
AGREEMENT_RULE = ("a reference answer agrees when the library's answer scores correct under the benchmark's rule: a "
                  "decimal within the case's lower and upper limits, anything else exactly")


def completeness_words(missing: list[str]) -> str:
    """The text's completeness in the words every report uses."""
    return COMPLETE_WORDS if not missing else "incomplete: " + "; ".join(missing)


def agreement_words(agree: int, cases: int) -> str:
    """Agreement with the benchmark's reference answers in the words every report uses."""
    if not cases:
        return "no reference cases ship for this calculator"
    return f"{agree} of {cases} reference answers agree with the benchmark's"


def label_findings(calc: Calculator, refs: Any) -> list[str]:
    """A variant's name beside its number comes from the registry: a text that writes a constant's label
    itself (rather than {{ label.NAME }}) would keep it after a fix changes the value and the label."""
    out = [f"names unknown label {n!r} (no constant of that name carries a label)"
           for n in sorted(refs.labels) if n not in calc.constants or not calc.constants[n].label]
    for name, const in calc.constants.items():
        if const.label and const.label.casefold() in refs.literal.casefold():
            out.append(f"states the label {const.label!r} of constant {name!r} in its own words: write "
                       f"{{{{ label.{name} }}}} so a fix updates it")
    return out


def static_findings(calc: Calculator, source: str | None = None, *, calcs: Mapping[str, Calculator] | None = None,  # noqa: C901  a flat run of independent static checks
                    units: UnitsFile | None = None) -> list[str]:
    """What the text fails to state; empty when complete. `source` overrides the active text (mutants)."""
    source = calc.active.text if source is None else source
    calcs = calcs or {}
    out: list[str] = []
    try:
        refs = references(source)
    except Exception as e:  # jinja2.TemplateSyntaxError and friends: the text cannot be analysed
        return [f"template does not parse: {e}"]
    for kind, names, known in (("constant", refs.constants, calc.constants), ("table", refs.tables, calc.tables),
                               ("input", refs.inputs, {i.name: i for i in calc.inputs})):
        for n in sorted(names - set(known)):
            out.append(f"names unknown {kind} {n!r}")
    deps = {d.slug: d for d in dependencies(calc, calcs)}
    for slug, kind, name in sorted(refs.dependency):
        dep = deps.get(slug)
        pools: dict[str, Mapping[str, Any]] = {} if dep is None else {
            "c": dep.constants, "t": dep.tables, "i": {i.name: i for i in dep.inputs}}
        pool = pools.get(kind)
        if pool is None or name not in pool:
            out.append(f"names unknown {_KIND[kind]} {name!r} of dependency {slug!r}")
    out += label_findings(calc, refs)
    for d in sorted(refs.other):
        out.append(f"uses a computed reference {d}; name each item literally so it can be audited")
    for inp in calc.inputs:
        if inp.used and inp.name not in refs.inputs:
            out.append(f"input {inp.name!r} is not named")
    for owner, constants, tables, named_c, named_t in [
        (None, calc.constants, calc.tables, refs.constants, refs.tables),
        *[(d.slug, d.constants, d.tables, {n for s, k, n in refs.dependency if s == d.slug and k == "c"},
           {n for s, k, n in refs.dependency if s == d.slug and k == "t"}) for d in deps.values()],
    ]:
        whose = f" of dependency {owner!r}" if owner else ""
        for name, const in constants.items():
            if const.applies_to != "published" and name not in named_c:
                out.append(f"constant {name!r} ({const.value}){whose} is not stated")
        for name, table in tables.items():
            if table.applies_to != "published" and name not in named_t:
                out.append(f"table {name!r}{whose} is not stated (its bands or weights are branch conditions)")
    if out:
        return out
    try:
        v = calc.active if source == calc.active.text else calc.active.model_copy(update={"text": source})
        text = render(calc, v, calcs=calcs, units=units)
    except TextError as e:
        return [str(e)]
    for inp in calc.inputs:
        if inp.used and inp.kind in UNIT_KINDS and inp.unit and inp.unit not in text:
            out.append(f"unit {inp.unit!r} of input {inp.name!r} is not stated")
    return out


_KIND = {"c": "constant", "t": "table", "i": "input"}


def audit(reg: Registry, cases: list[Case] | None = None) -> list[TextAudit]:
    by_id: dict[int, list[Case]] = collections.defaultdict(list)
    for case in cases or []:
        by_id[case.calculator_id].append(case)
    rows = []
    for calc in sorted(reg.calculators.values(), key=lambda c: (c.medcalc_id is None, c.medcalc_id or 0, c.slug)):
        row = TextAudit(calc.slug, calc.medcalc_id, calc.active.version,
                        static_findings(calc, calcs=reg.calculators, units=reg.units))
        for case in by_id.get(calc.medcalc_id or -1, []):
            row.cases += 1
            try:
                value = compute(calc.slug, case.entities, variant="benchmark", registry=reg).value
            except RegistryInvalid:
                raise  # not a property of the case: the whole registry is refused
            except CalculatorError:
                value = None
            if not is_correct(value, case.answer, case.lower, case.upper):
                row.wrong += 1
        rows.append(row)
    return rows
