"""The clinical safety case, computed from the registry now: never typed, so never out of date.

One typed report feeds `formula safety case` (markdown and JSON), `formula safety trace`, `formula review-pr`'s
safety section and the site: document control, the intended purpose (formulas/safety/case.yaml), the scope (every
active version with its content hash), the hazard log summarised by risk, the evidence per calculator (reference
cases for the benchmark variant, the published variant's run over the same cases, the text's completeness, the
benchmark deviations), the residual risk and the safety officer's sign-off (registry.trust.safety_signoff).
"""
from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Any

from registry import clock
from registry import versions as ver
from registry.hazards import ALL, Hazard, Log, hazard_json, names, read_log
from registry.loader import Registry
from registry.report import calculator_rows
from solver.data import REFERENCE_CASES, Case, DatasetError, read_cases
from solver.library import CalculatorError, RegistryInvalid, compute
from solver.scoring import is_correct

INDEPENDENT = "tests/solver/test_clincalc_differential.py"  # where clincalc's agreement is checked (a test dependency)


@dataclass
class Counts:
    passed: int = 0
    total: int = 0

    def to_json(self) -> dict[str, int]:
        return {"passed": self.passed, "total": self.total}


@dataclass
class Evidence:
    """What stands behind one calculator's active version, computed now."""

    slug: str
    version: str
    reference_cases: Counts = field(default_factory=Counts)  # benchmark variant vs the benchmark's answers
    published: Counts = field(default_factory=Counts)  # published variant: computed without refusal, of total
    published_agree: int = 0  # ... and agreeing with the benchmark's answer (deviations explain the rest)
    completeness: str = "not audited"  # the supplied text's finding (registry data)
    finding: str | None = None
    text_missing: list[str] = field(default_factory=list)  # what the current text fails to state (static audit)
    deviations: list[str] = field(default_factory=list)
    plausibility: list[str] = field(default_factory=list)
    ranged_inputs: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"slug": self.slug, "version": self.version, "reference_cases": self.reference_cases.to_json(),
                "published": {**self.published.to_json(), "agree_with_benchmark": self.published_agree},
                "independent_engine": {"engine": "clincalc", "checked_by": INDEPENDENT, "computed_here": False},
                "completeness": {"status": self.completeness, "finding": self.finding,
                                 "current_text_missing": self.text_missing},
                "open_deviations": self.deviations, "plausibility": self.plausibility,
                "ranged_inputs": self.ranged_inputs}


def reference_cases() -> list[Case]:
    try:
        return read_cases(REFERENCE_CASES)
    except (OSError, DatasetError):
        return []


def evidence(reg: Registry, cases: list[Case] | None = None) -> dict[str, Evidence]:
    """slug -> its evidence, for every calculator (one pass over the reference cases per variant)."""
    from audit.completeness import static_findings

    by_id: dict[int, list[Case]] = collections.defaultdict(list)
    for case in reference_cases() if cases is None else cases:
        by_id[case.calculator_id].append(case)
    out = {}
    for slug, c in reg.calculators.items():
        e = Evidence(slug, c.active.version, deviations=[d.id for d in c.deviations],
                     plausibility=[p.id for p in c.plausibility],
                     ranged_inputs=sum(i.range is not None for i in c.inputs))
        if c.completeness is not None:
            e.completeness, e.finding = c.completeness.status.value, c.completeness.finding
        e.text_missing = static_findings(c, calcs=reg.calculators, units=reg.units)
        for case in by_id.get(c.medcalc_id or -1, []):
            _score(reg, slug, case, e)
        out[slug] = e
    return out


def _score(reg: Registry, slug: str, case: Case, e: Evidence) -> None:
    e.reference_cases.total += 1
    e.published.total += 1
    for variant in ("benchmark", "published"):
        try:
            value = compute(slug, case.entities, variant=variant, registry=reg).value
        except RegistryInvalid:
            raise  # the whole registry is refused, not this case
        except CalculatorError:
            continue
        right = bool(is_correct(value, case.answer, case.lower, case.upper))
        if variant == "benchmark":
            e.reference_cases.passed += right
        else:
            e.published.passed += 1
            e.published_agree += right


@dataclass
class SafetyCase:
    """The whole case, as every reader of it gets it."""

    reg: Registry
    log: Log | None
    evidence: dict[str, Evidence]
    sign_off: dict[str, Any]

    @property
    def hazards(self) -> list[Hazard]:
        return list(self.log.entries.hazards) if self.log and self.log.entries else []

    def of(self, slug: str) -> list[Hazard]:
        return [h for h in self.hazards if names(h, slug)]


def build(reg: Registry, *, sign_off: dict[str, Any] | None = None, cases: list[Case] | None = None) -> SafetyCase:
    """The case of `reg`; `sign_off` is the sign-off state (the command line reads it from governance)."""
    return SafetyCase(reg, read_log(reg.root), evidence(reg, cases), sign_off or {"state": "none"})


def scope(reg: Registry) -> list[dict[str, str]]:
    """Every active version with its content hash, in `formula list`'s order."""
    lock = ver.read_lock(reg.lock_path)
    out = []
    for row in calculator_rows(reg):
        slug, version = row["slug"], row["active_version"]
        out.append({"slug": slug, "version": version,
                    "content_hash": lock.get(slug, {}).get(version) or ver.active_hash(reg, slug)})
    return out


def risk_summary(case: SafetyCase) -> dict[str, Any]:
    log = case.log
    initial: collections.Counter[int] = collections.Counter()
    residual: collections.Counter[int] = collections.Counter()
    status: collections.Counter[str] = collections.Counter()
    for h in case.hazards:
        if log is not None:
            initial[log.risk(h.severity, h.likelihood) or 0] += 1
            residual[log.risk(h.residual_severity, h.residual_likelihood) or 0] += 1
        status[h.status] += 1
    return {"initial": {str(k): initial[k] for k in sorted(initial)},
            "residual": {str(k): residual[k] for k in sorted(residual)}, "status": dict(sorted(status.items()))}


def residual(case: SafetyCase) -> dict[str, Any]:
    """Which hazards stay above the matrix's acceptable residual rating, and which are open."""
    log = case.log
    limit = log.matrix.acceptable_residual if log and log.matrix else None
    above = [h.id for h in case.hazards if h.status != "closed" and log is not None and limit is not None
             and (log.risk(h.residual_severity, h.residual_likelihood) or 0) > limit]
    return {"acceptable_residual": limit, "above_acceptable": above,
            "open": [h.id for h in case.hazards if h.status == "open"],
            "statement": log.purpose.residual_statement if log and log.purpose else None}


def to_json(case: SafetyCase) -> dict[str, Any]:
    reg, log = case.reg, case.log
    matrix = log.matrix if log else None
    rows = scope(reg)
    return {
        "document": {"title": log.purpose.title if log and log.purpose else "Clinical safety case",
                     "date": clock.today().isoformat(), "registry_lock": ver.lock_digest(reg.lock_path),
                     "hazard_log": log.digest if log else None,
                     "risk_matrix": {"source": matrix.source, "verified": matrix.verified} if matrix else None},
        "intended_purpose": log.purpose.model_dump(mode="json") if log and log.purpose else None,
        "scope": rows,
        "risk_summary": risk_summary(case),
        "evidence": [case.evidence[r["slug"]].to_json() for r in rows],
        "hazards": [hazard_json(log, h) for h in case.hazards] if log else [],
        "not_applicable": [n.model_dump(mode="json") for n in log.entries.not_applicable] if log and log.entries else [],
        "residual_risk": residual(case),
        "sign_off": case.sign_off,
    }


def registry_wide(h: Hazard) -> bool:
    return h.calculators == ALL


__all__ = ["SafetyCase", "Counts", "Evidence", "build", "evidence", "reference_cases", "registry_wide", "residual",
           "risk_summary", "scope", "to_json"]
