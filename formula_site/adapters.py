"""Thin adapters over interfaces other layers provide: the governance changelog and the report tables.

`registry.changelog.changelog` and `audit.tables.build_report` are being written in parallel. Until
they exist, the minimal local versions below keep the site buildable. At merge, delete the
fallbacks (`_changelog_fallback`, `_report_fallback`) and keep the two imports.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from registry.loader import Registry


@dataclass
class ChangelogEntry:
    """The fields of registry.changelog.ChangelogEntry that the site reads."""

    slug: str
    name: str
    version: str
    status: str
    effective: str
    released_by: str | None
    role: str | None
    reason: str
    changes: list[str] = field(default_factory=list)
    signoffs: list[dict[str, str]] = field(default_factory=list)


def changelog(reg: Registry, since: str | None = None) -> list[Any]:
    """Every released version across the registry, newest first."""
    try:
        from registry.changelog import changelog as real  # type: ignore[import-not-found]
    except ImportError:
        return _changelog_fallback(reg, since)
    entries = list(real(reg, since=since))
    return sorted(entries, key=lambda e: str(e.effective), reverse=True)


def _changelog_fallback(reg: Registry, since: str | None) -> list[ChangelogEntry]:
    out = []
    for c in reg.calculators.values():
        for v in c.versions:
            if since and v.effective.isoformat() < since:
                continue
            first = v.signoffs[0] if v.signoffs else None
            out.append(ChangelogEntry(
                slug=c.slug, name=c.name, version=v.version, status=v.status.value,
                effective=v.effective.isoformat(), released_by=first.who if first else None,
                role=first.role if first else None, reason=v.changelog, changes=[],
                signoffs=[{"who": s.who, "role": s.role, "date": s.date.isoformat()} for s in v.signoffs]))
    out.sort(key=lambda e: (e.effective, e.slug, e.version), reverse=True)
    return out


def build_report(run_dirs: Sequence[Path], compare: Sequence[tuple[str, str]] = (), draws: int = 10000,
                 seed: int = 0, registry: Registry | None = None) -> dict[str, Any]:
    """Accuracy by audit group, paired gaps and outcome accounting of stored runs (audit.tables).

    The pinned JSON shape: {"runs": [{"dir", "arm", "model", "n_rows", "accuracy", "by_group": {"replaced",
    "other", "none"}, "outcomes"}], "gaps": [{"a", "b", "subset", "n", "gap_pp", "case_ci", "cluster_ci",
    "perm_p", "mcnemar_p", "holm_p", "icc", "n_eff"}], "draws", "seed"}, percentages in points (0-100).
    `compare` holds (A, B) arm pairs."""
    try:
        from audit.tables import build_report as real  # type: ignore[import-not-found]
    except ImportError:
        return _report_fallback(run_dirs, compare, draws, seed, registry)
    return real(run_dirs, compare=compare, draws=draws, seed=seed, registry=registry)


def _read_rows(run_dir: Path) -> list[dict[str, Any]]:
    rows = []
    with open(run_dir / "results.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rows.append(json.loads(line))
    return rows


def _report_fallback(run_dirs: Sequence[Path], compare: Sequence[tuple[str, str]], draws: int, seed: int,
                     registry: Registry | None) -> dict[str, Any]:
    """Just enough of audit.tables.build_report's pinned shape for the pages (no case bootstrap, no tests)."""
    import numpy as np

    groups: dict[int, str] = {}
    if registry is not None:
        groups = {c.medcalc_id: c.audit_group for c in registry.calculators.values() if c.medcalc_id is not None}
    runs, per_calc, row_sets = [], {}, {}
    for d in run_dirs:
        d = Path(d)
        manifest = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
        rows = _read_rows(d)
        arm = manifest.get("arm") or (rows[0]["arm"] if rows else d.name)
        model = manifest.get("model") or (rows[0].get("model") if rows else None)

        def acc(sel: list[dict[str, Any]]) -> float | None:
            return 100.0 * sum(bool(r["correct"]) for r in sel) / len(sel) if sel else None

        by_group = {g: acc([r for r in rows if groups.get(r["calculator_id"]) == g]) for g in ("replaced", "other", "none")}
        outcomes: dict[str, int] = {}
        for r in rows:
            outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
        calc: dict[str, dict[str, int]] = {}
        for r in rows:
            k = str(r["calculator_id"])
            calc.setdefault(k, {"n": 0, "correct": 0})
            calc[k]["n"] += 1
            calc[k]["correct"] += int(bool(r["correct"]))
        per_calc[str(d)] = {k: 100.0 * v["correct"] / v["n"] for k, v in calc.items()}
        runs.append({"dir": str(d), "arm": arm, "model": model, "n_rows": len(rows), "accuracy": acc(rows),
                     "by_group": by_group, "outcomes": outcomes})
        row_sets[str(d)] = rows
    gaps = []
    by_arm = {r["arm"]: r["dir"] for r in runs}
    rng = np.random.default_rng(seed)
    for a, b in compare:
        if a not in by_arm or b not in by_arm:
            continue
        ka = {(r["row_number"], r["seed"]): (r["calculator_id"], bool(r["correct"])) for r in row_sets[by_arm[a]]}
        kb = {(r["row_number"], r["seed"]): bool(r["correct"]) for r in row_sets[by_arm[b]]}
        keys = sorted(set(ka) & set(kb))
        if not keys:
            continue
        cl: dict[int, list[float]] = {}
        for k in keys:
            cl.setdefault(ka[k][0], []).append(float(ka[k][1]) - float(kb[k]))
        sums = np.array([sum(v) for v in cl.values()])
        ns = np.array([len(v) for v in cl.values()])
        gap = 100.0 * sums.sum() / ns.sum()
        idx = rng.integers(0, len(sums), size=(draws, len(sums)))
        boot = 100.0 * sums[idx].sum(axis=1) / ns[idx].sum(axis=1)
        lo, hi = np.percentile(boot, [2.5, 97.5])
        gaps.append({"a": a, "b": b, "subset": "all", "n": len(keys), "gap_pp": float(gap),
                     "cluster_ci": [float(lo), float(hi)]})
    return {"runs": runs, "gaps": gaps, "draws": draws, "seed": seed, "per_calculator": per_calc}
