"""Synthetic run directories in the runner's pinned format, with answers the test decides.

    cases = benchmark_cases(per_calc=4)               # (row_number, calculator_id) for the 55
    write_run(tmp / "prog", "program-solve", cases, seeds=(42, 43), rule=lambda case, seed: ("value", True))

A rule maps a Case and a seed to (outcome, correct); the tests compute what every table should
say from the same rule, independently of the code under test.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from registry.loader import get_registry
from registry.texts import render, text_hash

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


@dataclass(frozen=True)
class Case:
    row_number: int
    calculator_id: int
    slug: str
    group: str  # replaced | other | none
    category: str
    index: int  # 0-based position of the case within its calculator


Rule = Callable[[Case, int], tuple[str, bool]]


def benchmark_cases(per_calc: int = 4, ids: Iterable[int] | None = None) -> list[Case]:
    """per_calc cases for every benchmark calculator of the registry (or the given ids), in id order."""
    reg = get_registry()
    calcs = sorted((c for c in reg.calculators.values() if c.medcalc_id is not None), key=lambda c: c.medcalc_id)
    if ids is not None:
        keep = set(ids)
        calcs = [c for c in calcs if c.medcalc_id in keep]
    out, n = [], 1
    for c in calcs:
        for k in range(per_calc):
            out.append(Case(n, c.medcalc_id, c.slug, c.audit_group, c.category.value, k))
            n += 1
    return out


@cache
def current_text(slug: str) -> tuple[str, str]:
    reg = get_registry()
    c = reg.calculators[slug]
    return c.active.version, text_hash(render(c, calcs=reg.calculators, units=reg.units))


def write_run(directory: Path, arm: str, cases: list[Case], seeds: Iterable[int], rule: Rule, *,
              model: str | None = "test/model", manifest: dict[str, Any] | None = None,
              text: Callable[[Case], tuple[str | None, str | None]] | None = None,
              skip: Callable[[Case, int], bool] | None = None) -> Path:
    """Write manifest.json and results.jsonl; text(case) gives (text_version, text_sha256) per row
    (default: the registry's current text), skip(case, seed) leaves a row out."""
    directory.mkdir(parents=True, exist_ok=True)
    seeds = list(seeds)
    man = {"format_version": 1, "arm": arm, "arm_version": "1.0.0", "model": model, "seeds": seeds,
           "engine": "replay", "dataset_sha256": "sha256:" + "0" * 64}
    man.update(manifest or {})
    (directory / "manifest.json").write_text(json.dumps(man), encoding="utf-8")
    lines = []
    texts: dict[str, tuple[str, str]] = {}
    for seed in seeds:
        for case in cases:
            if skip and skip(case, seed):
                continue
            outcome, correct = rule(case, seed)
            if text is not None:
                version, sha = text(case)
            else:
                if case.slug not in texts:
                    texts[case.slug] = current_text(case.slug)
                version, sha = texts[case.slug]
            lines.append(json.dumps({
                "row_number": case.row_number, "calculator_id": case.calculator_id, "seed": seed, "arm": arm,
                "model": model, "prompt_sha256": "sha256:" + "1" * 64, "text_version": version,
                "text_sha256": sha, "reply": "...", "program": None, "outcome": outcome,
                "answer": 1.0 if outcome in ("value", "answered") else None, "correct": correct,
                "ground_truth": 1.0, "lower_limit": 0.95, "upper_limit": 1.05, "calculator": case.slug,
            }))
    (directory / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory


def right(case: Case, seed: int) -> tuple[str, bool]:
    return "value", True


def wrong(case: Case, seed: int) -> tuple[str, bool]:
    return "value", False


def slow_bootstrap(df: "pd.DataFrame", by: str, draws: int, seed: int, a: str = "a", b: str = "b") -> "np.ndarray":
    """Reference for the bootstraps: the same draw scheme written out as a loop, one row of group
    indexes per draw (`rng.integers(0, groups)`), the chosen groups' rows gathered one by one."""
    import numpy as np

    rng = np.random.default_rng(seed)
    groups = sorted(df[by].unique())
    rows = {g: list(sub[a].astype(int) - sub[b].astype(int)) for g, sub in df.groupby(by)}
    out = []
    for _ in range(draws):
        picks = rng.integers(0, len(groups), size=len(groups))
        sample: list[int] = []
        for i in picks:
            sample.extend(rows[groups[i]])
        out.append(100.0 * sum(sample) / len(sample))
    return np.array(out)


def slow_sign_flip_p(d: "np.ndarray", draws: int, seed: int) -> float:
    """Reference for the sign-flip test: one coin per case per draw, in a loop."""
    import numpy as np

    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(draws):
        signs = np.where(rng.random(size=len(d)) < 0.5, 1.0, -1.0)
        hits += abs((signs * d).sum()) >= abs(d.sum()) - 1e-12
    return (1 + hits) / (draws + 1)
