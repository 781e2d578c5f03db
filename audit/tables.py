"""The paper's report tables from stored runs: accuracy, audit groups, outcomes, paired gaps,
library-first hybrids, seed agreement and per-calculator staleness.

`build_report` returns one JSON-ready dict (the pinned shape: `runs`, `gaps`, `draws`, `seed`, plus
`per_calculator`, `hybrids`, `hybrid_gaps`, `seed_agreement`, `subsets`, `warnings`, `statistics`);
`to_markdown` and `to_csv` render it. Percentages are points (0-100). Audit groups, categories and
output types come from the registry, never from the runs.
"""
from __future__ import annotations

import csv
import io
import itertools
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from audit import stats
from audit.runs import EXECUTOR, NO_OUTPUT, Run, RunError, dataset_name, pair, read_run, status
from registry import jsontext
from registry.loader import Registry, get_registry
from registry.texts import INDEX_FILE, TEXTS_DIR, TextError, render, text_hash

GROUPS = ("replaced", "other", "none")
GROUP_TITLES = {"replaced": "replaced by guideline", "other": "other concern", "none": "no issue identified"}
SUBSETS = ("all", "not_replaced", "no_issue", "library_covered")
SUBSET_TITLES = {"all": "all", "not_replaced": "not replaced", "no_issue": "no issue identified",
                 "library_covered": "library-covered"}
# Arms whose answers come from the library (answer where implemented, abstain elsewhere).
LIBRARY_ARM_PREFIXES = ("gold-solve", "extract-solve")


# ---------------------------------------------------------------------- registry facts


@dataclass(frozen=True)
class CalcInfo:
    medcalc_id: int
    slug: str
    name: str
    group: str
    category: str
    output_type: str


def calculator_info(reg: Registry) -> dict[int, CalcInfo]:
    return {c.medcalc_id: CalcInfo(c.medcalc_id, c.slug, c.name, c.audit_group, c.category.value,
                                   c.output.kind.value)
            for c in reg.calculators.values() if c.medcalc_id is not None}


def current_texts(reg: Registry) -> dict[str, tuple[str, str | None]]:
    """slug -> (active text version, sha256 hex or None when the catalogue's is not text) from the
    catalogue, rendering where it is missing."""
    out: dict[str, tuple[str, str | None]] = {}
    index = reg.formulas_dir / TEXTS_DIR / INDEX_FILE
    if index.exists():
        try:
            for e in jsontext.read_file(index, jsontext.LOCK_MAX, "catalogue index").get("texts", []):
                out[e["slug"]] = (e["version"], _bare(e["sha256"]))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise RunError(f"{index}: unreadable text catalogue ({e}); run `formula texts render`") from None
    for c in reg.calculators.values():
        if c.slug not in out:
            try:
                out[c.slug] = (c.active.version, _bare(text_hash(render(c, calcs=reg.calculators, units=reg.units))))
            except TextError:
                continue
    return out


def library_covered(reg: Registry) -> set[str]:
    """Slugs of the benchmark calculators the library implements (Table 1's 'Impl.' set)."""
    import solver.library.calculators  # noqa: F401  (registers every library function)
    from solver.library import FUNCTIONS

    return {c.slug for c in reg.calculators.values() if c.medcalc_id is not None and c.slug in FUNCTIONS}


def _bare(sha: Any) -> str | None:
    if not isinstance(sha, str):
        return None
    return sha.split(":", 1)[1] if sha.startswith("sha256:") else sha


# ---------------------------------------------------------------------- helpers


def _pct(k: float, n: float) -> float | None:
    return None if n == 0 else float(100.0 * k / n)


def _acc(correct: pd.Series) -> float | None:
    return None if len(correct) == 0 else float(100.0 * correct.astype(bool).mean())


def _in_subset(rows: pd.DataFrame, subset: str, covered: set[str]) -> pd.Series:
    if subset == "all":
        return pd.Series(True, index=rows.index)
    if subset == "not_replaced":
        return rows["group"] != "replaced"
    if subset == "no_issue":
        return rows["group"] == "none"
    if subset == "library_covered":
        return rows["slug"].isin(covered)
    raise ValueError(subset)


def _enrich(run: Run, info: dict[int, CalcInfo]) -> None:
    ids = run.rows["calculator_id"]
    unknown = sorted(set(ids) - set(info))
    if unknown:
        line = int(run.rows.loc[ids == unknown[0], "line"].iloc[0])
        raise RunError(f"{run.dir / 'results.jsonl'}:{line}: calculator_id {unknown[0]} is not a benchmark "
                       f"calculator of the registry (see `formula list`)")
    for col in ("slug", "name", "group", "category", "output_type"):
        run.rows[col] = ids.map({k: getattr(v, col) for k, v in info.items()})
    run.rows["status"] = status(run.rows["outcome"], run.rows["correct"])


def run_keys(runs: Sequence[Run]) -> list[str]:
    """How the tables name each run: its folder's name, numbered (`name#2`) where two runs share one; never
    the folder's path, which is the building machine's and would leak into published tables."""
    names = [r.label for r in runs]
    counts = Counter(names)
    seen: Counter[str] = Counter()
    out = []
    for n in names:
        seen[n] += 1
        out.append(f"{n}#{seen[n]}" if counts[n] > 1 else n)
    return out


_labels = run_keys


def resolve(name: str, runs: list[Run], labels: list[str]) -> int:
    """A run by its label, its directory as given, or its arm when only one run has that arm."""
    for i, lab in enumerate(labels):
        if name == lab:
            return i
    for i, r in enumerate(runs):
        if name in (str(r.dir), str(r.dir).rstrip("/")):
            return i
    hits = [i for i, r in enumerate(runs) if r.arm == name]
    if len(hits) == 1:
        return hits[0]
    known = ", ".join(labels)
    if len(hits) > 1:
        raise RunError(f"'{name}' names {len(hits)} runs (arm {name}); use a directory name: {known}")
    raise RunError(f"'{name}' is not one of the runs given ({known})")


def split_pair(text: str, runs: list[Run], labels: list[str]) -> tuple[int, int]:
    """'A:B' -> run indexes; tries every ':' so directory names may contain one."""
    errors = []
    for pos in [i for i, ch in enumerate(text) if ch == ":"]:
        try:
            return resolve(text[:pos], runs, labels), resolve(text[pos + 1:], runs, labels)
        except RunError as e:
            errors.append(str(e))
    if not errors:
        raise RunError(f"'{text}': expected A:B (two runs, by directory name or arm)")
    raise RunError(f"'{text}': {errors[-1]}")


def is_library(run: Run) -> bool:
    return run.arm.startswith(LIBRARY_ARM_PREFIXES)


# ---------------------------------------------------------------------- per run


def _outcomes(rows: pd.DataFrame, covered: set[str]) -> dict[str, Any]:
    n = len(rows)
    st = rows["status"]
    kind = rows["outcome"]
    no_out = int(kind.isin(NO_OUTPUT).sum())
    execf = int(kind.isin(EXECUTOR).sum())
    none = int((st == "none").sum())
    right = int((st == "right").sum())
    attempted = n - no_out - execf
    dates = rows["category"] == "date"

    def block(mask: pd.Series) -> dict[str, Any]:
        m = int(mask.sum())
        s = st[mask]
        return {"rows": m, "right_pct": _pct((s == "right").sum(), m), "wrong_pct": _pct((s == "wrong").sum(), m),
                "none_pct": _pct((s == "none").sum(), m)}

    cov = rows["slug"].isin(covered)
    return {
        "rows": n, "right": right, "wrong": int((st == "wrong").sum()), "none": none,
        "right_pct": _pct(right, n), "wrong_pct": _pct((st == "wrong").sum(), n), "none_pct": _pct(none, n),
        "no_output": no_out, "executor": execf, "unreadable": none - no_out - execf,
        "no_output_pct": _pct(no_out, n), "executor_pct": _pct(execf, n), "unreadable_pct": _pct(none - no_out - execf, n),
        "by_kind": {str(k): int(v) for k, v in kind.value_counts().sort_index().items()},
        "attempted_accuracy": _pct(right, attempted),
        "dates_accuracy": _acc(rows.loc[dates, "correct"]) if dates.any() else None,
        "supported": block(cov), "unsupported": block(~cov),
    }


def _run_entry(run: Run, label: str, covered: set[str]) -> dict[str, Any]:
    rows = run.rows
    by_group = {g: _acc(rows.loc[rows["group"] == g, "correct"]) for g in GROUPS}
    return {
        "dir": str(run.dir), "label": label, "arm": run.arm, "model": run.model, "dataset": _dataset_label(run),
        "n_rows": len(rows), "n_cases": int(rows["row_number"].nunique()), "seeds": run.seeds,
        "accuracy": _acc(rows["correct"]),
        "subsets": {s: _acc(rows.loc[_in_subset(rows, s, covered), "correct"]) for s in SUBSETS},
        "by_group": by_group,
        # calculators of this run (not of the report's union of runs) in each group and subset
        "group_calculators": {g: int(rows.loc[rows["group"] == g, "slug"].nunique()) for g in GROUPS},
        "subset_calculators": {s: int(rows.loc[_in_subset(rows, s, covered), "slug"].nunique()) for s in SUBSETS},
        "by_category": {k: _acc(v) for k, v in rows.groupby("category")["correct"]},
        "by_output_type": {k: _acc(v) for k, v in rows.groupby("output_type")["correct"]},
        "outcomes": _outcomes(rows, covered),
        # provenance as the runner recorded it: every scalar field of the manifest, whatever its names
        "manifest": {k: v for k, v in run.manifest.items() if v is None or isinstance(v, (str, int, float, bool))},
    }


def _dataset_label(run: Run) -> str | None:
    """The dataset a run was scored on, as its manifest names it (imported runs) or its data file's name."""
    name = dataset_name(run)
    if name:
        return name
    ds = run.manifest.get("dataset")
    path = ds.get("path") if isinstance(ds, dict) else None
    return Path(path).name if isinstance(path, str) and path else None


def seed_agreement(run: Run, label: str) -> dict[str, Any]:
    """Table 24: seed sd of accuracy, share of cases all seeds score alike, pairwise agreement."""
    rows = run.rows
    wide = rows.pivot(index="row_number", columns="seed", values="correct").dropna().astype(bool)
    per_seed = rows.groupby("seed")["correct"].mean() * 100.0
    k = wide.shape[1]
    m = wide.to_numpy()
    all_right = m.all(axis=1)
    all_wrong = (~m).all(axis=1)
    pairs = list(itertools.combinations(range(k), 2))
    pairwise = (float(np.mean([(m[:, i] == m[:, j]).mean() for i, j in pairs]) * 100.0) if pairs and len(m) else None)
    n = len(m)
    return {
        "run": label, "arm": run.arm, "model": run.model, "seeds": run.seeds, "cases": n,
        "accuracy": _acc(rows["correct"]),
        "seed_sd": float(per_seed.std(ddof=1)) if k > 1 else None,
        "agree_pct": _pct((all_right | all_wrong).sum(), n),
        "pairwise_pct": pairwise,
        "right_pct": _pct(all_right.sum(), n), "wrong_pct": _pct(all_wrong.sum(), n),
    }


def per_calculator(run: Run, label: str,
                   texts: dict[str, tuple[str, str | None]]) -> tuple[list[dict[str, Any]], list[str]]:
    """One row per calculator: accuracy, the text version(s) it ran with, and staleness."""
    out, warnings = [], []
    for cid, g in run.rows.groupby("calculator_id", sort=True):
        slug = g["slug"].iloc[0]
        text_slugs = sorted({s for s in g["text_slug"] if isinstance(s, str)}) or [slug]
        versions = sorted({v for v in g["text_version"] if isinstance(v, str)})
        shas = sorted({s for s in (_bare(x) for x in g["text_sha256"]) if s})
        cur = [texts.get(t) for t in text_slugs]
        cur_versions = sorted({c[0] for c in cur if c})
        cur_shas = sorted({c[1] for c in cur if c and c[1] is not None})
        stale = bool((versions and set(versions) - set(cur_versions)) or (shas and set(shas) - set(cur_shas)))
        warning = None
        if stale:
            ran = ", ".join(versions) or "?"
            warning = (f"{label}: {slug} ran with text {ran}"
                       + (f" ({', '.join(s[:12] for s in shas)})" if shas else "")
                       + f"; the registry's current text is {', '.join(cur_versions) or '?'}"
                       + (f" ({', '.join(s[:12] for s in cur_shas)})" if cur_shas else "")
                       + ": stale, rerun to score the current formula")
            warnings.append(warning)
        elif len(versions) > 1 or len(shas) > 1:
            warning = f"{label}: {slug} mixes text versions {', '.join(versions)} within one run"
            warnings.append(warning)
        out.append({
            "run": label, "calculator_id": int(cid), "slug": slug, "name": g["name"].iloc[0],
            "group": g["group"].iloc[0], "category": g["category"].iloc[0], "output_type": g["output_type"].iloc[0],
            "n_rows": len(g), "accuracy": _acc(g["correct"]),
            "text_versions": versions, "text_sha256": shas,
            "current_version": cur_versions[0] if len(cur_versions) == 1 else (cur_versions or None),
            "stale": stale, "warning": warning,
        })
    return out, warnings


# ---------------------------------------------------------------------- gaps


def _gap(a: np.ndarray, b: np.ndarray, frame: pd.DataFrame, draws: int, seed: int) -> dict[str, Any]:
    r = stats.paired(a, b, frame["row_number"].to_numpy(), frame["calculator_id"].to_numpy(), draws=draws, seed=seed)
    return {"n": r.n_cases, "n_rows": r.n_rows, "calculators": r.n_calculators,
            "a_accuracy": _acc(pd.Series(a)), "b_accuracy": _acc(pd.Series(b)),
            "gap_pp": r.gap_pp, "case_ci": list(r.case_ci), "cluster_ci": list(r.cluster_ci),
            "perm_p": r.perm_p, "mcnemar_p": r.mcnemar_p,
            "discordant": {"a_only": r.discordant.a_only, "b_only": r.discordant.b_only},
            "holm_p": None, "icc": r.icc, "n_eff": r.n_eff}


def _empty_gap() -> dict[str, Any]:
    return {"n": 0, "n_rows": 0, "calculators": 0, "a_accuracy": None, "b_accuracy": None, "gap_pp": None,
            "case_ci": None, "cluster_ci": None, "perm_p": None, "mcnemar_p": None, "discordant": None,
            "holm_p": None, "icc": None, "n_eff": None}


def _apply_holm(gaps: list[dict[str, Any]], family_key: str) -> None:
    families: dict[Any, list[int]] = {}
    for i, g in enumerate(gaps):
        families.setdefault(g[family_key], []).append(i)
    for idx in families.values():
        adj = stats.holm([gaps[i]["perm_p"] for i in idx])
        for i, p in zip(idx, adj):
            gaps[i]["holm_p"] = p


def _paired_rows(a: Run, b: Run, info_rows: pd.DataFrame) -> pd.DataFrame:
    p = pair(a, b)
    meta = info_rows.drop_duplicates("row_number").set_index("row_number")[["slug", "group"]]
    out = p.join(meta, on="row_number")
    out.attrs["gold_differs"] = p.attrs.get("gold_differs", 0)
    return out


# ---------------------------------------------------------------------- the report


# How each statistic of the report is computed (printed under the tables, and on the site)
STATISTICS = {
    "gap": "mean paired difference over case-seed rows, A minus B, percentage points",
    "cluster_ci": "percentile 95%, calculators resampled with replacement, each with all its cases and seeds",
    "case_ci": "percentile 95%, cases resampled with replacement, each with all its seeds",
    "perm_p": "two-sided sign-flip permutation on seed-averaged per-case differences",
    "mcnemar_p": "exact two-sided McNemar on discordant case-seed rows (not seed-averaged)",
    "holm_p": "Holm adjustment of perm_p within a family: the --compare gaps on one subset; "
              "hybrids' gaps; hybrid fallback gaps",
    "icc": "one-way random-effects ICC(1) of seed-averaged per-case differences within calculators",
    "n_eff": "n / (1 + (m - 1) ICC), n cases, m mean cases per calculator, negative ICC as 0",
    "seed_sd": "sample standard deviation (ddof 1) of per-seed accuracy",
    "rng": "numpy.random.default_rng(seed), the same seed for every statistic",
}


def build_report(run_dirs: Sequence[Path | str | Run], compare: Iterable[tuple[str, str]] = (), draws: int = 10_000,
                 seed: int = 0, registry: Registry | None = None, *,
                 hybrids: Iterable[tuple[str, str]] | None = None,
                 covered: set[str] | None = None) -> dict[str, Any]:
    """Every table of the report as one JSON-ready dict, in the order printed; see the module docstring.

    run_dirs: run directories (or runs already read with `audit.runs.read_run`).
    compare: (A, B) pairs by run directory name, directory or arm; each gives A minus B on every
    subset. hybrids: (library run, fallback run) pairs; None assembles every library run with every
    other run. covered: slugs of the library-covered subset (default: what `solver.library`
    implements). Raises RunError on unreadable runs or runs that cannot be compared.
    """
    if draws < 1:
        raise RunError("--draws must be at least 1")
    if not run_dirs:
        raise RunError("give at least one run directory")
    reg = registry or get_registry()
    info = calculator_info(reg)
    cov = set(covered) if covered is not None else library_covered(reg)
    runs = [d if isinstance(d, Run) else read_run(d) for d in run_dirs]  # a Run: already read
    for r in runs:
        _enrich(r, info)
    labels = _labels(runs)
    run_entries = [_run_entry(r, lab, cov) for r, lab in zip(runs, labels)]
    pc_rows, warnings = _per_calculator_rows(runs, labels, current_texts(reg))
    present = set().union(*(set(r.rows["slug"]) for r in runs))
    subsets = [s for s in SUBSETS if s != "library_covered" or (present & cov) != present]
    gaps = _compared(runs, labels, run_entries, list(compare), subsets, cov, draws, seed)
    hyb, hyb_gaps = _hybrids(runs, labels, hybrids, list(compare), draws, seed)
    return {
        "runs": run_entries,
        "gaps": gaps,
        "draws": draws,
        "seed": seed,
        "subsets": _subset_sizes(present, info, cov, given=covered is not None),
        "per_calculator": pc_rows,
        "hybrids": hyb,
        "hybrid_gaps": hyb_gaps,
        "seed_agreement": [seed_agreement(r, lab) for r, lab in zip(runs, labels)],
        "statistics": dict(STATISTICS),
        "warnings": [w for r in runs for w in r.warnings] + warnings,
    }


def _per_calculator_rows(runs: list[Run], labels: list[str], texts: dict[str, tuple[str, str | None]]
                         ) -> tuple[list[dict[str, Any]], list[str]]:
    """Accuracy per calculator and run, with the warnings the rows raise (a text changed since the run)."""
    rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    for r, lab in zip(runs, labels):
        got, warn = per_calculator(r, lab, texts)
        rows += got
        warnings += warn
    return rows, warnings


def _compared(runs: list[Run], labels: list[str], run_entries: list[dict[str, Any]],
              compare: list[tuple[str, str]], subsets: list[str], cov: set[str], draws: int,
              seed: int) -> list[dict[str, Any]]:
    """A minus B on every subset for each --compare pair, Holm-adjusted within a subset."""
    gaps: list[dict[str, Any]] = []
    for a_name, b_name in compare:
        ia, ib = resolve(a_name, runs, labels), resolve(b_name, runs, labels)
        if ia == ib:
            raise RunError(f"--compare {a_name}:{b_name} compares a run with itself")
        p = _paired_rows(runs[ia], runs[ib], runs[ia].rows)
        for s in subsets:
            sub = p[_in_subset(p, s, cov)]
            body = _gap(sub["a"].to_numpy(), sub["b"].to_numpy(), sub, draws, seed) if len(sub) else _empty_gap()
            gaps.append({"a": labels[ia], "b": labels[ib], "subset": s, "dataset": run_entries[ia]["dataset"],
                         "gold_differs": p.attrs.get("gold_differs", 0), **body})
    _apply_holm(gaps, "subset")
    return gaps


def _subset_sizes(present: set[str], info: dict[int, CalcInfo], cov: set[str], *, given: bool) -> dict[str, Any]:
    """How many calculators the runs hold in each calculator set the paper reports."""
    return {"all": len(present), "not_replaced": len({s for s in present if _group(info, s) != "replaced"}),
            "no_issue": len({s for s in present if _group(info, s) == "none"}),
            "library_covered": len(present & cov),
            "library_covered_source": "given" if given else "calculators solver.library implements"}


def _group(info: dict[int, CalcInfo], slug: str) -> str:
    for c in info.values():
        if c.slug == slug:
            return c.group
    return "none"


def _hybrids(runs: list[Run], labels: list[str], chosen: Iterable[tuple[str, str]] | None,
             compare: list[tuple[str, str]], draws: int, seed: int
             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Tables 15 and 23: library where it answers, the fallback run elsewhere, per case and seed."""
    if chosen is None:
        pairs = [(i, j) for i, r in enumerate(runs) if is_library(r)
                 for j, f in enumerate(runs) if j != i and not is_library(f)]
        strict = False
    else:
        pairs = [(resolve(a, runs, labels), resolve(b, runs, labels)) for a, b in chosen]
        strict = True
    built: dict[tuple[int, int], pd.DataFrame] = {}
    out: list[dict[str, Any]] = []
    for i, j in pairs:
        try:
            p = _paired_rows(runs[i], runs[j], runs[i].rows)
        except RunError:
            if strict:
                raise
            continue
        h = p.assign(correct=np.where(p["a_answered"], p["a"], p["b"]))
        built[(i, j)] = h
        entry: dict[str, Any] = {"name": f"{labels[i]} first, {labels[j]} fallback", "library": labels[i], "fallback": labels[j],
                 "n_rows": len(h), "library_share": _pct(int(p["a_answered"].sum()), len(h)),
                 "accuracy": _acc(h["correct"]), "gaps": []}
        for k, ref in enumerate(runs):
            try:
                q = _paired_rows(runs[i], ref, runs[i].rows)
            except RunError:
                continue
            q = q.merge(h[["row_number", "seed", "correct"]], on=["row_number", "seed"])
            g = _gap(q["correct"].to_numpy(), q["b"].to_numpy(), q, draws, seed)
            entry["gaps"].append({"reference": labels[k], "reference_accuracy": g["b_accuracy"], **g})
        out.append(entry)
    fam = [g for e in out for g in e["gaps"]]
    for g in fam:
        g["family"] = "hybrids"
    _apply_holm(fam, "family")
    # Table 23: the same library-first baseline with each fallback of a --compare pair
    fb_gaps: list[dict[str, Any]] = []
    for a_name, b_name in compare:
        ia, ib = resolve(a_name, runs, labels), resolve(b_name, runs, labels)
        for (i, j), h in built.items():
            if j != ia or (i, ib) not in built:
                continue
            h2 = built[(i, ib)]
            q = h.merge(h2[["row_number", "seed", "correct"]], on=["row_number", "seed"], suffixes=("", "_b"))
            g = _gap(q["correct"].to_numpy(), q["correct_b"].to_numpy(), q, draws, seed)
            fb_gaps.append({"library": labels[i], "a": labels[ia], "b": labels[ib],
                            "library_share": _pct(int(h["a_answered"].sum()), len(h)),
                            "family": "hybrid fallbacks", **g})
    _apply_holm(fb_gaps, "family")
    return out, fb_gaps


# ---------------------------------------------------------------------- rendering


def _f(x: Any, digits: int = 2) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _signed(x: Any) -> str:
    return "-" if x is None else f"{x:+.2f}"


def _p(x: Any) -> str:
    if x is None:
        return "-"
    return "<0.001" if x < 0.001 else f"{x:.3f}"


def _ci(ci: Any) -> str:
    return "-" if not ci else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def to_markdown(report: dict[str, Any]) -> str:
    # long: one section per table, in the order a reader meets them
    """The report as Markdown tables (for the site and for reading)."""
    out: list[str] = []
    runs = report["runs"]
    add = out.extend
    out.append("## Accuracy (%)\n")
    out.append("Each cell: accuracy, then (in brackets) the calculators of that set the run holds.\n")

    def cell(r: dict[str, Any], value: Any, n: Any) -> str:
        return f"{_f(value)} ({'-' if n is None else n})"

    add(_table(["run", "arm", "model", "dataset", "rows", "all", "library-covered", "not replaced", "no issue"],
               [[r["label"], r["arm"], r["model"] or "-", r.get("dataset") or "-", str(r["n_rows"])]
                + [cell(r, r["accuracy"] if s == "all" else r["subsets"].get(s), r.get("subset_calculators", {}).get(s))
                   for s in ("all", "library_covered", "not_replaced", "no_issue")] for r in runs]))
    out.append("\n## Accuracy by audit group (%)\n")
    out.append("Each cell: accuracy, then (in brackets) the calculators of that group the run holds.\n")
    add(_table(["run"] + [GROUP_TITLES[g] for g in GROUPS],
               [[r["label"]] + [cell(r, r["by_group"][g], r["group_calculators"][g]) for g in GROUPS] for r in runs]))
    for key, title in (("by_category", "category"), ("by_output_type", "output type")):
        cols = sorted({k for r in runs for k in r[key]})
        out.append(f"\n## Accuracy by {title} (%)\n")
        add(_table(["run"] + cols, [[r["label"]] + [_f(r[key].get(c)) for c in cols] for r in runs]))
    out.append("\n## Outcomes (% of case-seed rows)\n")
    add(_table(["run", "right", "wrong", "none", "no output", "executor", "unreadable", "attempted acc.",
                "dates acc.", "supported right/wrong/none", "unsupported right/wrong/none"],
               [[r["label"]] + [_f(r["outcomes"][k], 1) for k in ("right_pct", "wrong_pct", "none_pct",
                                                                  "no_output_pct", "executor_pct", "unreadable_pct")]
                + [_f(r["outcomes"]["attempted_accuracy"]), _f(r["outcomes"]["dates_accuracy"])]
                + ["/".join(_f(r["outcomes"][s][k], 1) for k in ("right_pct", "wrong_pct", "none_pct"))
                   for s in ("supported", "unsupported")] for r in runs]))
    kinds = sorted({k for r in runs for k in r["outcomes"]["by_kind"]})
    out.append("\n## Outcome kinds (rows)\n")
    add(_table(["run"] + kinds, [[r["label"]] + [str(r["outcomes"]["by_kind"].get(k, 0)) for k in kinds]
                                 for r in runs]))
    if report["gaps"]:
        out.append(f"\n## Paired gaps, A minus B (pp; {report['draws']} draws, seed {report['seed']})\n")
        add(_table(["A - B", "subset", "n", "calcs", "gap", "case CI", "cluster CI", "perm p", "McNemar p",
                    "Holm p", "ICC", "n_eff"],
                   [[f"{g['a']} - {g['b']}", SUBSET_TITLES[g["subset"]], str(g["n"]), str(g["calculators"]),
                     _signed(g["gap_pp"]), _ci(g["case_ci"]), _ci(g["cluster_ci"]), _p(g["perm_p"]),
                     _p(g["mcnemar_p"]), _p(g["holm_p"]), _f(g["icc"]), _f(g["n_eff"], 0)] for g in report["gaps"]]))
        notes = {(g["a"], g["b"]): g for g in report["gaps"] if g.get("subset") == "all" and g.get("gold_differs")}
        for (a, b), g in notes.items():
            out.append(f"\n{a} - {b}: {g['n']} cases of {g.get('dataset') or 'the dataset'} both runs hold with the "
                       f"same gold answer; {g['gold_differs']} shared cases whose gold differs between them left out.")
    if report.get("hybrids"):
        out.append("\n## Library-first hybrids (library where it answers, the fallback elsewhere)\n")
        rows = []
        for h in report["hybrids"]:
            for g in h["gaps"]:
                rows.append([h["name"], _f(h["library_share"], 1), _f(h["accuracy"]), g["reference"],
                             _f(g["reference_accuracy"]), _signed(g["gap_pp"]), _ci(g["case_ci"]),
                             _ci(g["cluster_ci"]), _p(g["perm_p"]), _p(g["holm_p"])])
        add(_table(["hybrid", "library %", "acc.", "reference", "ref. acc.", "gap", "case CI", "cluster CI",
                    "perm p", "Holm p"], rows))
    if report.get("hybrid_gaps"):
        out.append("\n## The same library-first baseline with each fallback\n")
        add(_table(["library", "fallback A - B", "library %", "A", "B", "gap", "case CI", "cluster CI", "perm p"],
                   [[g["library"], f"{g['a']} - {g['b']}", _f(g["library_share"], 1), _f(g["a_accuracy"]),
                     _f(g["b_accuracy"]), _signed(g["gap_pp"]), _ci(g["case_ci"]), _ci(g["cluster_ci"]),
                     _p(g["perm_p"])] for g in report["hybrid_gaps"]]))
    out.append("\n## Agreement across seeds\n")
    add(_table(["run", "seeds", "acc.", "seed sd", "agree %", "pairwise %", "right %", "wrong %"],
               [[s["run"], str(len(s["seeds"])), _f(s["accuracy"]), _f(s["seed_sd"]), _f(s["agree_pct"], 1),
                 _f(s["pairwise_pct"], 1), _f(s["right_pct"], 1), _f(s["wrong_pct"], 1)]
                for s in report["seed_agreement"]]))
    out.append("\n## Per calculator: accuracy (%) and the text version each run used\n")
    labels = [r["label"] for r in runs]
    by_calc: dict[int, dict[str, Any]] = {}
    for row in report["per_calculator"]:
        by_calc.setdefault(row["calculator_id"], {"row": row, "runs": {}})["runs"][row["run"]] = row
    rows = []
    for cid in sorted(by_calc):
        c = by_calc[cid]
        cells = []
        for lab in labels:
            r = c["runs"].get(lab)
            cells.append("-" if r is None else _f(r["accuracy"], 1)
                         + (f" (v{', '.join(r['text_versions'])})" if r["text_versions"] else "")
                         + (" STALE" if r["stale"] else ""))
        rows.append([str(cid), c["row"]["slug"], c["row"]["group"]] + cells)
    add(_table(["id", "calculator", "group"] + labels, rows))
    if report["warnings"]:
        out.append("\n## Warnings\n")
        out += [f"- {w}" for w in report["warnings"]]
    out.append(f"\n## Notes\n\nDraws: {report['draws']}; seed: {report['seed']}.\n")
    out += [f"- {k}: {v}" for k, v in report.get("statistics", {}).items()]
    return "\n".join(out) + "\n"


def to_csv(report: dict[str, Any]) -> str:  # noqa: C901  one flat branch per report section
    """The report as one long CSV (table, row, column, value), for spreadsheets and pivots."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["table", "row", "column", "value"])

    def put(table: str, row: str, col: str, value: Any) -> None:
        if isinstance(value, (list, tuple)):
            value = ";".join(str(v) for v in value)
        w.writerow([table, row, col, "" if value is None else value])

    for r in report["runs"]:
        _csv_run(put, r)
    _csv_comparisons(put, report)
    for p in report.get("per_calculator", []):
        row = f"{p['run']}/{p['slug']}"
        for k in ("calculator_id", "group", "n_rows", "accuracy", "text_versions", "current_version", "stale"):
            put("per_calculator", row, k, p[k])
    put("report", "", "draws", report["draws"])
    put("report", "", "seed", report["seed"])
    for i, wmsg in enumerate(report.get("warnings", [])):
        put("warnings", str(i + 1), "warning", wmsg)
    return buf.getvalue()


def _csv_run(put: Any, r: dict[str, Any]) -> None:
    """One run's rows of the long CSV: its facts, accuracies and outcome accounting."""
    lab = r["label"]
    for k in ("dir", "arm", "model", "n_rows", "n_cases", "accuracy"):
        put("runs", lab, k, r[k])
    for table, key in (("accuracy_by_subset", "subsets"), ("accuracy_by_group", "by_group"),
                       ("accuracy_by_category", "by_category"), ("accuracy_by_output_type", "by_output_type")):
        for k, v in r[key].items():
            put(table, lab, k, v)
    for k, v in r["outcomes"].items():
        if isinstance(v, dict):
            for k2, v2 in v.items():
                put("outcomes", lab, f"{k}.{k2}", v2)
        else:
            put("outcomes", lab, k, v)


def _csv_comparisons(put: Any, report: dict[str, Any]) -> None:
    """The long CSV's paired gaps, hybrids and their gaps, and seed agreement."""
    for g in report["gaps"]:
        row = f"{g['a']} - {g['b']} [{g['subset']}]"
        for k, v in g.items():
            if k not in ("a", "b", "subset", "discordant"):
                put("gaps", row, k, v)
    for h in report.get("hybrids", []):
        put("hybrids", h["name"], "library_share", h["library_share"])
        put("hybrids", h["name"], "accuracy", h["accuracy"])
        for g in h["gaps"]:
            for k in ("gap_pp", "case_ci", "cluster_ci", "perm_p", "holm_p"):
                put("hybrid_gaps", f"{h['name']} vs {g['reference']}", k, g[k])
    for g in report.get("hybrid_gaps", []):
        for k in ("library_share", "gap_pp", "case_ci", "cluster_ci", "perm_p", "holm_p"):
            put("hybrid_fallback_gaps", f"{g['library']}: {g['a']} - {g['b']}", k, g[k])
    for s in report.get("seed_agreement", []):
        for k in ("accuracy", "seed_sd", "agree_pct", "pairwise_pct", "right_pct", "wrong_pct"):
            put("seed_agreement", s["run"], k, s[k])
