"""Validation rules of the hazard log (`formulas/safety/`): what it names must exist, and it must be complete.

R-SAFETY: a file breaks its schema, or a hazard names an unknown calculator, control, severity or likelihood, or a
control's evidence names an unknown rule code, plausibility rule or deviation. R-SAFETY-COVERAGE: a calculator whose
literature concern is not `none`, or whose supplied text was found incomplete or wrong, is named by no hazard of
its own (a registry-wide hazard does not count: it says nothing about that calculator's concern).
"""
from __future__ import annotations

from typing import Any

from registry import codes
from registry.hazards import ALL, HAZARDS_FILE, Control, Hazard, Log, read_log
from registry.model import Problem, Registry
from registry.schema import Calculator, CompletenessStatus, ConcernType
from registry.yamlio import line_of

HAZARDS = f"formulas/{HAZARDS_FILE.as_posix()}"
SLUG_REFS = frozenset({"plausibility", "deviation", "input_ranges", "reference_cases", "completeness"})


def check(reg: Registry) -> None:
    """Append the log's problems to `reg.problems` (nothing when the registry has no formulas/safety/)."""
    log = read_log(reg.root)
    if log is None:
        return
    for path, line, fld, why in log.problems:
        reg.problems.append(Problem(path, line, fld, why, codes.SAFETY))
    if log.entries is None or log.matrix is None:
        return
    raw = log.raw.get(HAZARDS, {})
    controls = {c.id for c in log.entries.controls}
    _unique(reg, raw, "controls", [c.id for c in log.entries.controls])
    _unique(reg, raw, "hazards", [h.id for h in log.entries.hazards] + [n.id for n in log.entries.not_applicable])
    for i, c in enumerate(log.entries.controls):
        for j, e in enumerate(c.evidence):
            bad = evidence_problem(reg, e.kind, e.ref)
            if bad:
                _add(reg, raw, ("controls", i, "evidence", j, "ref"), f"control {c.id}: {bad}")
    for i, h in enumerate(log.entries.hazards):
        for where, why in hazard_problems(reg, log, h, controls):
            _add(reg, raw, ("hazards", i, *where), f"hazard {h.id}: {why}")
    coverage(reg, log)


def _add(reg: Registry, raw: Any, loc: tuple[Any, ...], why: str, code: str = codes.SAFETY) -> None:
    fld = "".join(f"[{p}]" if isinstance(p, int) else ("." if k else "") + str(p) for k, p in enumerate(loc))
    reg.problems.append(Problem(HAZARDS, line_of(raw, loc), fld, why, code))


def _unique(reg: Registry, raw: Any, key: str, ids: list[str]) -> None:
    seen: set[str] = set()
    for i, x in enumerate(ids):
        if x in seen:
            _add(reg, raw, (key, i, "id") if i < len(raw.get(key) or []) else (key,), f"{x} is used twice: ids are unique")
        seen.add(x)


def hazard_problems(reg: Registry, log: Log, h: Hazard, controls: set[str]) -> list[tuple[tuple[Any, ...], str]]:
    """(location inside the hazard, problem) for every name the hazard gives that does not exist."""
    out: list[tuple[tuple[Any, ...], str]] = []
    if h.calculators != ALL:
        known = on_disk(reg)
        out += [(("calculators", j), f"unknown calculator {s!r} (`formula list` names them)")
                for j, s in enumerate(h.calculators) if s not in known]
    out += [(("controls", j), f"unknown control {c!r}: define it under controls: first")
            for j, c in enumerate(h.controls) if c not in controls]
    assert log.matrix is not None
    sev, lik = {x.name for x in log.matrix.severities}, {x.name for x in log.matrix.likelihoods}
    for fld, value, allowed in (("severity", h.severity, sev), ("likelihood", h.likelihood, lik),
                                ("residual_severity", h.residual_severity, sev),
                                ("residual_likelihood", h.residual_likelihood, lik)):
        if value not in allowed:
            out.append(((fld,), f"{value!r} is not a level of the risk matrix ({', '.join(sorted(allowed))})"))
    out += _dates(h)
    if h.status in ("mitigated", "closed") and not h.controls:
        out.append((("controls",), f"a {h.status} hazard names the controls that mitigate it"))
    return out


def _dates(h: Hazard) -> list[tuple[tuple[Any, ...], str]]:
    if h.status == "closed" and h.closed is None:
        return [(("closed",), "a closed hazard says when it was closed (closed: YYYY-MM-DD)")]
    if h.status != "closed" and h.closed is not None:
        return [(("closed",), f"only a closed hazard has a closed date (status is {h.status})")]
    if h.closed is not None and h.closed < h.raised:
        return [(("closed",), f"closed {h.closed}, before it was raised ({h.raised})")]
    return []


def on_disk(reg: Registry) -> set[str]:
    """Calculators loaded, and those whose file is there but does not load (their own problems say why)."""
    return set(reg.calculators) | {p.stem for p in reg.formulas_dir.glob("*.yaml") if p.name != "units.yaml"}


def evidence_problem(reg: Registry, kind: str, ref: str | None) -> str | None:
    """Why an evidence reference names nothing that exists, or None."""
    if kind == "rule":
        known = {v for k, v in vars(codes).items() if k.isupper() and isinstance(v, str) and v.startswith("R-")}
        return None if ref in known else f"unknown rule code {ref!r} (registry.codes lists them)"
    if kind not in SLUG_REFS or ref is None:
        return None
    slug, _, item = ref.partition("#")
    c = reg.calculators.get(slug)
    if c is None:  # a calculator whose file does not load is reported by its own rules, not here
        return None if slug in on_disk(reg) else f"unknown calculator {slug!r} in evidence {ref!r}"
    if kind == "plausibility" and item and item not in {p.id for p in c.plausibility}:
        return f"{slug} has no plausibility rule {item!r}"
    if kind == "deviation" and item not in {d.id for d in c.deviations}:
        return f"{slug} has no deviation {item!r}"
    return None


def concerned(c: Calculator) -> list[str]:
    """Why a calculator must be named by a hazard of its own: its concern, its text's finding (empty: it need not)."""
    out = []
    if c.literature_audit.concern != ConcernType.none:
        out.append(f"literature concern {c.literature_audit.concern.value}")
    if c.completeness is not None and c.completeness.status != CompletenessStatus.complete:
        out.append(f"supplied text {c.completeness.status.value}")
    return out


def coverage(reg: Registry, log: Log) -> None:
    assert log.entries is not None
    named = {s for h in log.entries.hazards if h.calculators != ALL for s in h.calculators}
    for slug, c in sorted(reg.calculators.items()):
        why = concerned(c)
        if why and slug not in named:
            reg.problems.append(Problem(HAZARDS, line_of(log.raw.get(HAZARDS, {}), ("hazards",)), "hazards",
                                        f"{slug} ({'; '.join(why)}) is named by no hazard: add it to the calculators "
                                        "of a hazard that covers that concern", codes.SAFETY_COVERAGE))


def control_of(log: Log, cid: str) -> Control | None:
    return next((c for c in (log.entries.controls if log.entries else []) if c.id == cid), None)
