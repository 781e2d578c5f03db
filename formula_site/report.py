"""The report the site shows, built once from the audit layer's report tables and handed to every page and plot.

`audit.tables.build_report` computes every number; this module types it (pydantic) and adds what people read:
one label per run by one rule (`titles`: the model and arm, the dataset or folder name only where two runs would
otherwise share a label; never a path), an anchor per run, the run's manifest as read, and whether a formula text
was shown to the model at all. Counts that belong to a run (calculators per audit group and per subset, rows,
cases) are the run's own, never another run's.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict, Field

from registry import jsontext

NO_MODEL = ("none", "library")


class RunView(BaseModel):
    """One run as the pages show it."""

    model_config = ConfigDict(frozen=True)

    key: str  # the report tables' name of the run (folder name): the key of gaps and per-calculator rows
    title: str  # what a reader sees (see `titles`)
    anchor: str
    folder: str  # the run folder's name (never its path)
    arm: str
    model: str | None
    dataset: str | None
    n_rows: int
    n_cases: int
    seeds: list[int]
    accuracy: float | None
    subsets: dict[str, float | None]
    subset_calculators: dict[str, int]
    by_group: dict[str, float | None]
    group_calculators: dict[str, int]
    by_category: dict[str, float | None]
    by_output_type: dict[str, float | None]
    outcomes: dict[str, Any]
    manifest: dict[str, Any] = Field(default_factory=dict)  # as the run folder holds it, every field
    text_shown: bool = True  # False for imported runs: the model was shown no formula text

    @property
    def calculators(self) -> int:
        return sum(self.group_calculators.values())


class CalcRow(BaseModel):
    """One calculator of one run: accuracy and the supplied-text version it ran with."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    run: str
    calculator_id: int
    slug: str
    name: str
    group: str
    n_rows: int
    accuracy: float | None
    text_versions: list[str] = Field(default_factory=list)
    current_version: str | list[str] | None = None
    stale: bool = False


class SiteReport(BaseModel):
    """Every table the results, overview and calculator pages show."""

    runs: list[RunView] = Field(default_factory=list)
    gaps: list[dict[str, Any]] = Field(default_factory=list)
    draws: int | None = None
    seed: int | None = None
    subsets: dict[str, Any] = Field(default_factory=dict)
    per_calculator: list[CalcRow] = Field(default_factory=list)
    hybrids: list[dict[str, Any]] = Field(default_factory=list)
    hybrid_gaps: list[dict[str, Any]] = Field(default_factory=list)
    seed_agreement: list[dict[str, Any]] = Field(default_factory=list)
    statistics: dict[str, str] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    gap_error: str | None = None

    def title(self, key: str) -> str:
        """A run's title from its report-table key (gaps, hybrids and seed rows name runs by key)."""
        for r in self.runs:
            if r.key == key:
                return r.title
        return key

    def by_key(self) -> dict[str, RunView]:
        return {r.key: r for r in self.runs}


def _read_manifest(run_dir: str) -> dict[str, Any]:
    try:
        data = jsontext.read_file(Path(run_dir) / "manifest.json", what="run manifest")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def anchor(key: str) -> str:
    return "run-" + (re.sub(r"[^a-z0-9]+", "-", key.lower()).strip("-") or "x")


def _base(r: dict[str, Any]) -> str:
    model = r.get("model")
    return " · ".join(([str(model)] if model and model not in NO_MODEL else []) + [str(r["arm"])])


def titles(entries: Sequence[dict[str, Any]]) -> list[str]:
    """One label per run, by one rule: "model · arm" (the arm alone for runs without a model); where two runs
    share that, the dataset is added if it tells them apart, then the folder name if it does, then a number.
    Never a path."""
    out = [_base(r) for r in entries]
    for extra in (lambda r: r.get("dataset"), lambda r: Path(str(r["dir"])).name):
        tells = {t: {extra(r) for u, r in zip(out, entries) if u == t} for t in set(out)}
        # added only to labels two runs share, and only where it tells those runs apart
        out = [t + f" · {extra(r)}" if len(tells[t]) > 1 and extra(r) else t for t, r in zip(out, entries)]
    counts, seen = Counter(out), Counter[str]()
    numbered = []
    for t in out:
        seen[t] += 1
        numbered.append(f"{t} #{seen[t]}" if counts[t] > 1 else t)
    return numbered


def from_report(report: dict[str, Any], manifests: dict[str, dict[str, Any]] | None = None) -> SiteReport:
    """The typed report from `audit.tables.build_report`'s dict; `manifests` by run folder (as read with the
    runs), else read from each folder."""
    entries = report.get("runs") or []
    runs = []
    for r, title in zip(entries, titles(entries)):
        manifest = (manifests or {}).get(str(r["dir"])) or _read_manifest(str(r["dir"]))
        source = manifest.get("source") if isinstance(manifest.get("source"), dict) else {}
        runs.append(RunView(
            key=r["label"], title=title, anchor=anchor(r["label"]), folder=Path(str(r["dir"])).name, arm=r["arm"],
            model=r.get("model"), dataset=r.get("dataset"), n_rows=r["n_rows"], n_cases=r["n_cases"],
            seeds=list(r.get("seeds") or []), accuracy=r.get("accuracy"), subsets=r.get("subsets") or {},
            subset_calculators=r.get("subset_calculators") or {}, by_group=r.get("by_group") or {},
            group_calculators=r.get("group_calculators") or {}, by_category=r.get("by_category") or {},
            by_output_type=r.get("by_output_type") or {}, outcomes=r.get("outcomes") or {}, manifest=manifest,
            text_shown=(source or {}).get("formula_text_shown") is not False))
    rest = {k: v for k, v in report.items() if k in SiteReport.model_fields and k != "runs"}
    return SiteReport(runs=runs, **rest)
