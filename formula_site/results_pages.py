"""The results page: stored runs as the report tables of the audit layer, with plots.

Every number comes from `audit.tables.build_report` (accuracy by subset, audit group, category and
output type; paired gaps; outcome accounting; hybrids; seed agreement; per-calculator accuracy and
staleness), typed once as `formula_site.report.SiteReport`. The page lays them out and draws them; it
counts nothing itself, and every per-run count it shows is that run's own.
"""
from __future__ import annotations

from typing import Any, Sequence

from formula_site import plots
from formula_site.details import definition_list, label
from formula_site.markup import GROUP_LABELS, GROUP_ORDER, Raw, badge, esc, fixed, link, pct, signed, table
from formula_site.report import NO_MODEL, CalcRow, RunView, SiteReport, from_report
from registry.counted_nouns import agree, counted
from registry.loader import Registry

SUBSET_LABELS = {"all": "all", "not_replaced": "not replaced", "no_issue": "no issue identified",
                 "library_covered": "library-covered"}


def _report(report: SiteReport | dict[str, Any]) -> SiteReport:
    return report if isinstance(report, SiteReport) else from_report(report)


def coverage(run: RunView) -> float | None:
    """Share of rows that reached the scorer with an answer (right or wrong), in percent, from the report."""
    none = run.outcomes.get("none_pct")
    return None if none is None else 100.0 - none


def _signed(x: float | None) -> Raw:
    return Raw("–", sort="") if x is None else Raw(signed(x), sort=f"{x:.6f}")


def _p(x: float | None) -> Raw:
    if x is None:
        return Raw("–", sort="")
    return Raw("&lt;0.001" if x < 0.001 else fixed(x, 3), sort=f"{x:.8f}")


def _ci(ci: Sequence[float] | None) -> Raw:
    if not ci:
        return Raw("–", sort="")
    return Raw(f"[{signed(ci[0])}, {signed(ci[1])}]", sort=f"{ci[0]:.6f}")


def _num(x: float | None, digits: int) -> Raw:
    return Raw("–", sort="") if x is None else Raw(fixed(x, digits), sort=f"{x:.6f}")


def _recorded_lock(manifest: dict[str, Any]) -> str | None:
    """The registry lock digest a run recorded, wherever its manifest keeps it."""
    stack: list[Any] = [manifest]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if "lock" in k and isinstance(v, str) and v.startswith("sha256:"):
                    return v
                stack.append(v)
    return None


def _figure(name: str, alt: str, caption: str) -> list[str]:
    return ["", f'<figure class="fr-figure"><img src="{name}" alt="{esc(alt)}"><figcaption>{esc(caption)}'
            "</figcaption></figure>", ""]


def _with_n(x: float | None, n: int | None, digits: int = 2) -> Raw:
    """An accuracy with the number of calculators it is over (the run's own) beside it."""
    cell = pct(x, digits)
    if n is None:
        return cell
    return Raw(f'<span class="fr-acc">{cell.html}&nbsp;<span class="fr-note">({n})</span></span>', sort=cell.sort)


def _run_link(r: RunView) -> Raw:
    return link("#" + r.anchor, r.title)


def _accuracy_tables(rep: SiteReport, figures: dict[str, str]) -> list[str]:
    runs = rep.runs
    sub = rep.subsets
    # library-covered only where it is a real subset (as the report's gaps do)
    subsets = [s for s in SUBSET_LABELS if any(s in r.subsets for r in runs)
               and (s != "library_covered" or sub.get("library_covered") != sub.get("all"))]
    out = ["## Accuracy", "",
           "Accuracy (%) on every case-seed row of each run (the first column after the run), and on the "
           "calculator sets the paper reports: the "
           "calculators not replaced by a guideline, those with no literature issue, and (where the runs cover "
           "calculators the library does not implement) the library-covered ones. Beside each accuracy, in "
           "brackets, the number of that run's calculators in the set.", "",
           # accuracy first, after the run's name: on a phone the first columns are what shows without scrolling
           table(["Run"] + [SUBSET_LABELS[s] for s in subsets] + ["Arm", "Rows", "Cases", "Seeds", "Calcs"],
                 [[_run_link(r)]
                  + [_with_n(r.accuracy if s == "all" else r.subsets.get(s), r.subset_calculators.get(s))
                     for s in subsets]
                  + [r.arm, r.n_rows, r.n_cases, len(r.seeds), r.calculators] for r in runs]),
           "### Datasets", "",
           "The gold set each run was scored on. Runs of different datasets are never paired (the MedCalc-Bench 2024 "
           "test split is not MedCalc-Bench Verified, nor the shipped reference cases).", "",
           table(["Run", "Dataset", "Rows", "Cases"], [[r.title, r.dataset or "–", r.n_rows, r.n_cases] for r in runs],
                 sortable=False),
           "## Accuracy by audit group", "",
           "The layout of the paper's Table 13: one row per literature-audit group, one column per run "
           "(accuracy in %, and in brackets the number of that run's calculators in the group). The replaced "
           "group has only 4 calculators, so its numbers are indicative only.", ""]
    body: list[list[Any]] = [[GROUP_LABELS[g]] + [_with_n(r.by_group.get(g), r.group_calculators.get(g, 0))
                                                  for r in runs] for g in GROUP_ORDER]
    body.append([Raw("<strong>All</strong>", sort="all")] + [_with_n(r.accuracy, r.calculators) for r in runs])
    out.append(table(["Group"] + [r.title for r in runs], body, sortable=False))
    figures["accuracy-by-group.svg"] = plots.accuracy_by_group(runs)
    out += _figure("accuracy-by-group.svg", "Accuracy by audit group per run",
                   "Accuracy by literature-audit group, per run (beside each bar, in brackets, the number of the run's "
                   "calculators in the group).")
    for key, title in (("by_category", "category"), ("by_output_type", "output type")):
        cols = sorted({k for r in runs for k in getattr(r, key)})
        out += [f"### By {title}", "",
                table(["Run"] + cols, [[r.title] + [pct(getattr(r, key).get(c)) for c in cols] for r in runs],
                      sortable=False), ""]
    return out


def _gap_tables(rep: SiteReport) -> list[str]:
    gaps = rep.gaps
    out = ["## Paired gaps", ""]
    if not gaps:
        if rep.gap_error:
            out.append(f"No paired comparison: the report tables could not pair these runs ({esc(rep.gap_error)}).")
        else:
            out.append("No paired comparison: build with at least two runs over the same cases and seeds.")
        return out + [""]
    out += [f"Run A minus run B on the same case-seed rows, in percentage points, on each calculator set. Two 95% "
            f"intervals: resampling cases, and resampling calculators with all their cases (the cluster interval, "
            f"the primary one as in the paper); {rep.draws or '–'} draws, seed {rep.seed if rep.seed is not None else '–'}. "
            "p-values: a sign-flip permutation test on the per-case differences, an exact McNemar test on the "
            "discordant rows, and Holm's adjustment of the permutation p across the comparisons on one set. An "
            "interval crossing zero establishes neither a difference nor equivalence. Runs are paired only within "
            "one dataset: runs imported from another evaluation (their dataset is named) pair only with runs of "
            "that same dataset, on the cases both hold with the same gold answer; the Cases column counts them.", ""]

    def pair(g: dict[str, Any]) -> str:
        return f"{rep.title(g['a'])} − {rep.title(g['b'])}"

    out.append(table(
        ["A − B", "Calculator set", "Cases", "Calcs", "A (%)", "B (%)", "Gap (pp)", "Case 95% CI",
         "Cluster 95% CI", "Dataset"],
        [[pair(g), SUBSET_LABELS.get(g["subset"], g["subset"]), g["n"], g["calculators"],
          pct(g["a_accuracy"]), pct(g["b_accuracy"]), _signed(g["gap_pp"]), _ci(g["case_ci"]), _ci(g["cluster_ci"]),
          g.get("dataset") or "–"] for g in gaps]))
    left_out = {(g["a"], g["b"]): g for g in gaps if g.get("gold_differs")}
    for g in left_out.values():
        out += ["", f"{esc(pair(g))}: {counted(g['gold_differs'], 'case')} both runs hold "
                f"{agree(g['gold_differs'], 'was', 'were')} left out because their "
                "gold answers differ (the runs used different releases of the dataset)."]
    out += ["", "### Tests and clustering", "",
            "Discordant rows (right in one run only), the p-values, the intra-calculator correlation of the "
            "per-case differences and the effective number of independent cases it implies.", "",
            table(["A − B", "Calculator set", "A only right", "B only right", "Permutation p", "McNemar p", "Holm p",
                   "ICC", "Effective n"],
                  [[pair(g), SUBSET_LABELS.get(g["subset"], g["subset"]),
                    (g.get("discordant") or {}).get("a_only", "–"), (g.get("discordant") or {}).get("b_only", "–"),
                    _p(g["perm_p"]), _p(g["mcnemar_p"]), _p(g["holm_p"]), _num(g["icc"], 3), _num(g["n_eff"], 0)]
                   for g in gaps])]
    out += _hybrid_table(rep)
    if rep.statistics:
        out += ["", "<details><summary>How each statistic is computed</summary>", "",
                table(["Statistic", "Definition"], [[k, v] for k, v in rep.statistics.items()], sortable=False),
                "</details>"]
    return out + [""]


def _hybrid_table(rep: SiteReport) -> list[str]:
    if not rep.hybrids:
        return []
    return ["", "### Library-first hybrids", "",
            "The library where it answers, the other run elsewhere (the paper's Table 15), against each run.", "",
            table(["Hybrid", "Library share (%)", "Accuracy (%)", "Against", "Its accuracy (%)", "Gap (pp)",
                   "Case 95% CI", "Cluster 95% CI", "Permutation p", "Holm p"],
                  [[f"{rep.title(h['library'])} first, {rep.title(h['fallback'])} fallback", pct(h["library_share"], 1),
                    pct(h["accuracy"]), rep.title(g["reference"]), pct(g["reference_accuracy"]), _signed(g["gap_pp"]),
                    _ci(g["case_ci"]), _ci(g["cluster_ci"]), _p(g["perm_p"]), _p(g["holm_p"])]
                   for h in rep.hybrids for g in h["gaps"]])]


def _outcome_tables(runs: list[RunView]) -> list[str]:
    split = any(r.outcomes["unsupported"]["rows"] for r in runs)  # some rows outside the library's calculators
    head = ["Run", "Rows", "Right", "Wrong", "No answer", "No output", "Executor", "Unreadable", "Attempted acc.",
            "Dates acc."] + (["Supported right/wrong/none", "Unsupported right/wrong/none"] if split else [])
    body = []
    for r in runs:
        o = r.outcomes
        row: list[Any] = [_run_link(r), r.n_rows]
        row += [pct(o[k], 1) for k in ("right_pct", "wrong_pct", "none_pct", "no_output_pct", "executor_pct",
                                       "unreadable_pct")]
        row += [pct(o["attempted_accuracy"]), pct(o["dates_accuracy"])]
        if split:
            row += [" / ".join("–" if o[s][k] is None else fixed(o[s][k], 1) for k in ("right_pct", "wrong_pct",
                                                                                       "none_pct"))
                    + f" ({o[s]['rows']} rows)" for s in ("supported", "unsupported")]
        body.append(row)
    out = ["## Outcome accounting", "",
           "What happened on every case-seed row (% of rows): right, wrong, or no valid answer, and why there was "
           "none (no output, an executor failure, or an unreadable reply). Attempted accuracy leaves out the rows "
           "without an answer; dates accuracy is on the date calculators' rows."
           + (" Supported rows are those of calculators the library implements." if split
              else " Every row is of a calculator the library implements."), "",
           table(head, body, sortable=False)]
    kinds = sorted({k for r in runs for k in r.outcomes["by_kind"]})
    out += ["", "### Outcome kinds (rows)", "",
            table(["Run", "Rows"] + kinds, [[r.title, r.n_rows] + [r.outcomes["by_kind"].get(k, 0) for k in kinds]
                                            for r in runs], sortable=False), ""]
    return out


def _seed_table(rep: SiteReport) -> list[str]:
    rows = rep.seed_agreement
    if not rows or all(len(s["seeds"]) < 2 for s in rows):
        return []
    return ["## Agreement across seeds", "",
            table(["Run", "Seeds", "Accuracy (%)", "Seed sd (pp)", "All seeds agree (%)", "Pairwise agreement (%)",
                   "All right (%)", "All wrong (%)"],
                  [[rep.title(s["run"]), len(s["seeds"]), pct(s["accuracy"]), _num(s["seed_sd"], 2),
                    pct(s["agree_pct"], 1), pct(s["pairwise_pct"], 1), pct(s["right_pct"], 1), pct(s["wrong_pct"], 1)]
                   for s in rows]), ""]


def _text_cell(row: CalcRow | None, run: RunView) -> Raw:
    if row is None:
        return Raw("–", sort="")
    acc = row.accuracy
    text = "–" if acc is None else fixed(acc, 1)
    if row.text_versions:
        text += f' <span class="fr-note">v{esc(", ".join(row.text_versions))}</span>'
    elif not run.text_shown:
        text += ' <span class="fr-note">no text shown</span>'
    if row.stale:
        text += " " + badge("stale", "warn")
    return Raw(text, sort="" if acc is None else f"{acc:.6f}")


def _per_calculator(reg: Registry, rep: SiteReport, figures: dict[str, str]) -> list[str]:
    runs = rep.runs
    by_calc: dict[int, dict[str, CalcRow]] = {}
    for row in rep.per_calculator:
        by_calc.setdefault(row.calculator_id, {})[row.run] = row
    calcs = sorted((c for c in reg.calculators.values() if c.medcalc_id in by_calc), key=lambda c: c.medcalc_id or 0)
    series = [(r.title, [by_calc[c.medcalc_id][r.key].accuracy if r.key in by_calc[c.medcalc_id] else None
                         for c in calcs if c.medcalc_id]) for r in runs]
    figures["per-calculator.svg"] = plots.per_calculator([f"{c.medcalc_id} {c.name}" for c in calcs], series)
    out = ["## Accuracy per calculator", ""]
    out += _figure("per-calculator.svg", "Accuracy per calculator and run",
                   "Accuracy per calculator (benchmark id and full name), one marker per run; markers of runs with "
                   "the same accuracy on a calculator sit side by side.")
    out += ["Accuracy (%) per calculator and run, with the supplied-text version the run used; *stale* marks a run "
            "whose text differs from the registry's current text (rerun it to score the current formula); runs "
            "imported from another evaluation showed the model no formula text.", ""]

    def current(c_rows: dict[str, CalcRow]) -> str:
        v = next(iter(c_rows.values())).current_version
        return ", ".join(v) if isinstance(v, list) else (v or "–")

    out.append(table(["Benchmark id", "Calculator", "Audit group", "Current text"] + [r.title for r in runs],
                     [[c.medcalc_id, link(f"../calculators/{c.slug}.html", c.name), GROUP_LABELS[c.audit_group],
                       current(by_calc[c.medcalc_id])]
                      + [_text_cell(by_calc[c.medcalc_id].get(r.key), r) for r in runs]
                      for c in calcs if c.medcalc_id is not None]))
    return out + [""]


def results_page(reg: Registry, report: SiteReport | dict[str, Any], figures: dict[str, str],
                 lock_digest: str | None = None) -> str:
    """Markdown for results/index.md from the typed report (or `audit.tables.build_report`'s dict); fills
    `figures` with name -> SVG."""
    rep = _report(report)
    runs = rep.runs
    out = ["---\nhide:\n  - navigation\n  - toc\n---", "# Results", ""]  # the tables need the width
    if not runs:
        out += ["No stored runs were given to this build. Runs are folders with `manifest.json` and "
                "`results.jsonl`; build with `formula site build --results DIR...` (several folders or globs), or "
                "put them under the registry's `results/` folder. See [About this report](../about.md#adding-runs)."]
        return "\n".join(out) + "\n"
    out += [f"{counted(len(runs), 'stored run')}, read and tabulated by the audit layer's report tables (`formula report`). "
            "Accuracy is the share of case-seed rows scored correct under the benchmark's rules (decimals within "
            "the row's limits; integers, dates and gestational ages exact). These tables are computed here; the "
            "paper's own numbers are on [a separate page](../paper.md), never mixed in.", ""]
    out += _accuracy_tables(rep, figures)
    out += _gap_tables(rep)
    out += _outcome_tables(runs)

    points = [(r.title, cov, r.accuracy) for r in runs if (cov := coverage(r)) is not None and r.accuracy is not None]
    figures["coverage-accuracy.svg"] = plots.coverage_accuracy(points)
    out += ["## Coverage against accuracy", "",
            "As in the paper's Figure 2: a run that gives no answer on a case cannot be right on it, so its "
            "full-set accuracy is bounded by its coverage (the diagonal)."]
    out += _figure("coverage-accuracy.svg", "Coverage against accuracy per run",
                   "Coverage (share of rows with an answer) against full-set accuracy.")
    out += _seed_table(rep)
    out += _per_calculator(reg, rep, figures)

    if rep.warnings:
        out += ["## Warnings from the report tables", "",
                f"<details><summary>{counted(len(rep.warnings), 'warning')}: stale texts, incomplete runs, unknown outcome "
                "kinds</summary>", "", "<ul>" + "".join(f"<li>{esc(w)}</li>" for w in rep.warnings) + "</ul>",
                "</details>", ""]
    out += ["## Runs", "",
            "What each run recorded about itself (its manifest), field by field; absolute folders of the machine that "
            "ran it are left out.", ""]
    for r in runs:
        out += [f'<h3 id="{r.anchor}">{esc(r.title)}</h3>', "", definition_list(_run_facts(reg, r, lock_digest)), ""]
    return "\n".join(out) + "\n"


# What a run should record to be reproduced (the runner writes each; an imported or hand-made run may not):
# the run details list each, "not recorded" where the manifest lacks it.
RECORDED = ("model_revision", "engine", "decoding", "seeds", "dataset", "registry_lock_digest", "git", "packages",
            "started_at", "finished_at", "status")


def _model(r: RunView) -> Any:
    """The model, or why there is none: a library arm uses no model; otherwise the run did not record one."""
    if r.model not in (None, *NO_MODEL):
        return r.model
    definition = r.manifest.get("arm_definition")
    if r.model in NO_MODEL or (isinstance(definition, dict) and definition.get("kind") == "library"):
        return "none (the arm uses no model)"
    return None


def _run_facts(reg: Registry, r: RunView, lock_digest: str | None) -> list[tuple[str, Any]]:
    """A run's facts: folder name (never its path), arm, model, counts, provenance, registry state, manifest."""
    m = r.manifest
    facts: list[tuple[str, Any]] = [("Folder", Raw(f"<code>{esc(r.folder)}</code>")), ("Arm", r.arm),
                                    ("Model", _model(r)), ("Rows", r.n_rows), ("Calculators", r.calculators),
                                    ("Accuracy (%)", Raw(pct(r.accuracy).html))]
    source: dict[str, Any] = m["source"] if isinstance(m.get("source"), dict) else {}
    facts += _source_facts(r, source)
    if not r.text_shown:  # an imported run: tied to the audit groups, not the texts
        groups: dict[str, Any] = m["audit_groups"] if isinstance(m.get("audit_groups"), dict) else {}
        moved = sorted(s for s, g in groups.items() if s in reg.calculators and reg.calculators[s].audit_group != g)
        facts.append(("Registry", Raw(badge("stale", "bad") + " audit group changed: " + esc(", ".join(moved))
                                      if moved else badge("no formula text shown", "info")
                                      + " imported; its audit groups are the registry's")))
    elif lock_digest is not None:
        recorded = _recorded_lock(m)
        if recorded is None:
            state = Raw(badge("not recorded", "warn"))
        elif recorded == lock_digest:
            state = Raw(badge("current", "ok") + " the run used this registry")
        else:
            state = Raw(badge("stale", "bad") + " the registry has changed since this run")
        facts.append(("Registry", state))
    facts += [(label(k), _packages(v) if k == "packages" else v) for k, v in m.items() if k not in ("arm", "model")]
    facts += [(label(k), None) for k in RECORDED if k not in m]  # absent: said so, not left out
    return facts


def _packages(v: Any) -> Any:
    """The runner records a package it could not import as null: that is "not installed", not a gap."""
    return {k: "not installed" if x is None else x for k, x in v.items()} if isinstance(v, dict) else v


def _source_facts(run: RunView, source: dict[str, Any]) -> list[tuple[str, Any]]:
    """An imported run's dataset, source files (repository, commit, licence, SHA-256) and verdict differences."""
    if not source:
        return []
    out: list[tuple[str, Any]] = [("Dataset", run.dataset)]
    for f in source.get("files") or []:
        if isinstance(f, dict):
            where = ", ".join(str(f[k]) for k in ("repository", "upstream_path", "commit", "licence") if f.get(k))
            out.append(("Source file", Raw(f"<code>{esc(f.get('name'))}</code> ({esc(where or 'provenance not given')}"
                                           f'; {esc(f.get("rows"))} rows; <code class="fr-break">{esc(f.get("sha256"))}'
                                           "</code>)")))
    diffs = source.get("differences")
    if isinstance(diffs, list):
        out.append(("Verdicts that differ from the log's", len(diffs)))
    return out


def calculator_accuracy(report: SiteReport | dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """slug -> one entry per run that scored it (for the calculator pages), from the report's per-calculator rows."""
    rep = _report(report)
    runs = rep.by_key()
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rep.per_calculator:
        r = runs.get(row.run)
        if r is None:
            continue
        out.setdefault(row.slug, []).append({"anchor": r.anchor, "label": r.title, "arm": r.arm, "model": r.model,
                                             "n": row.n_rows, "accuracy": row.accuracy, "stale": row.stale,
                                             "text_shown": r.text_shown})
    return out
