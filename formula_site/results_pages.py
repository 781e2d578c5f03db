"""The results page: stored runs as the report tables of the audit layer, with plots.

Every number comes from `audit.tables.build_report` (accuracy by subset, audit group, category and
output type; paired gaps; outcome accounting; hybrids; seed agreement; per-calculator accuracy and
staleness). The page lays them out and draws them; it counts nothing itself.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Sequence

from formula_site import plots
from formula_site.markup import GROUP_LABELS, GROUP_ORDER, Raw, badge, esc, link, pct, table
from registry.loader import Registry

SUBSET_LABELS = {"all": "all", "not_replaced": "not replaced", "no_issue": "no issue identified",
                 "library_covered": "library-covered"}


def anchor(run_dir: str) -> str:
    return "run-" + re.sub(r"[^a-z0-9]+", "-", Path(run_dir).name.lower()).strip("-")


def run_label(run: dict[str, Any]) -> str:
    """How the page names a run: the report's label (its folder name), with the model where there is one."""
    model = run.get("model")
    return str(run["label"]) + (f" · {model}" if model and model not in ("none", "library") else "")


def read_manifest(run_dir: Path) -> dict[str, Any]:
    data = json.loads((Path(run_dir) / "manifest.json").read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def coverage(run: dict[str, Any]) -> float | None:
    """Share of rows that reached the scorer with an answer (right or wrong), in percent, from the report."""
    none = run["outcomes"].get("none_pct")
    return None if none is None else 100.0 - none


def _signed(x: float | None) -> Raw:
    return Raw("–", sort="") if x is None else Raw(f"{x:+.2f}", sort=f"{x:.6f}")


def _p(x: float | None) -> Raw:
    if x is None:
        return Raw("–", sort="")
    return Raw("&lt;0.001" if x < 0.001 else f"{x:.3f}", sort=f"{x:.8f}")


def _ci(ci: Sequence[float] | None) -> Raw:
    if not ci:
        return Raw("–", sort="")
    return Raw(f"[{ci[0]:+.2f}, {ci[1]:+.2f}]", sort=f"{ci[0]:.6f}")


def _num(x: float | None, digits: int) -> Raw:
    return Raw("–", sort="") if x is None else Raw(f"{x:.{digits}f}", sort=f"{x:.6f}")


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


def _accuracy_tables(report: dict[str, Any], runs: list[dict[str, Any]], labels: list[str],
                     figures: dict[str, str]) -> list[str]:
    sub = report.get("subsets", {})
    # library-covered only where it is a real subset (as the report's gaps do)
    subsets = [s for s in SUBSET_LABELS if any(s in r["subsets"] for r in runs)
               and (s != "library_covered" or sub.get("library_covered") != sub.get("all"))]
    out = ["## Accuracy", "",
           "Accuracy (%) on every case-seed row of each run, and on the calculator sets the paper reports: the "
           "calculators not replaced by a guideline, those with no literature issue, and (where the runs cover "
           "calculators the library does not implement) the library-covered ones. The number of calculators in "
           "each set is in brackets.", "",
           table(["Run", "Arm", "Rows", "Cases", "Seeds"] + [f"{SUBSET_LABELS[s]} ({sub.get(s, '–')})" for s in subsets],
                 [[link("#" + anchor(r["dir"]), lab), r["arm"], r["n_rows"], r["n_cases"], len(r["seeds"])]
                  + [pct(r["subsets"].get(s)) for s in subsets] for r, lab in zip(runs, labels)]),
           "### Datasets", "",
           "The gold set each run was scored on. Runs of different datasets are never paired (the MedCalc-Bench 2024 "
           "test split is not MedCalc-Bench Verified, nor the shipped reference cases).", "",
           table(["Run", "Dataset", "Rows", "Cases"],
                 [[lab, r.get("dataset") or "–", r["n_rows"], r["n_cases"]] for r, lab in zip(runs, labels)],
                 sortable=False),
           "## Accuracy by audit group", "",
           "The layout of the paper's Table 13: one row per literature-audit group, one column per run "
           "(accuracy in %). The replaced group has only 4 calculators, so its numbers are indicative only.", ""]
    n_calcs = runs[0]["group_calculators"]
    body: list[list[Any]] = [[GROUP_LABELS[g], n_calcs.get(g, 0)] + [pct(r["by_group"].get(g)) for r in runs]
                             for g in GROUP_ORDER]
    body.append([Raw("<strong>All</strong>", sort="all"), sum(n_calcs.get(g, 0) for g in GROUP_ORDER)]
                + [pct(r.get("accuracy")) for r in runs])
    out.append(table(["Group", "Calcs"] + labels, body, sortable=False))
    figures["accuracy-by-group.svg"] = plots.accuracy_by_group(runs, labels)
    out += _figure("accuracy-by-group.svg", "Accuracy by audit group per run",
                   "Accuracy by literature-audit group, per run.")
    for key, title in (("by_category", "category"), ("by_output_type", "output type")):
        cols = sorted({k for r in runs for k in r[key]})
        out += [f"### By {title}", "",
                table(["Run"] + cols, [[lab] + [pct(r[key].get(c)) for c in cols] for r, lab in zip(runs, labels)],
                      sortable=False), ""]
    return out


def _gap_tables(report: dict[str, Any]) -> list[str]:
    gaps = report.get("gaps") or []
    out = ["## Paired gaps", ""]
    if not gaps:
        if report.get("gap_error"):
            out.append("No paired comparison: the report tables could not pair these runs "
                       f"({esc(report['gap_error'])}).")
        else:
            out.append("No paired comparison: build with at least two runs over the same cases and seeds.")
        return out + [""]
    out += [f"Run A minus run B on the same case-seed rows, in percentage points, on each calculator set. Two 95% "
            f"intervals: resampling cases, and resampling calculators with all their cases (the cluster interval, "
            f"the primary one as in the paper); {report.get('draws', '–')} draws, seed {report.get('seed', '–')}. "
            "p-values: a sign-flip permutation test on the per-case differences, an exact McNemar test on the "
            "discordant rows, and Holm's adjustment of the permutation p across the comparisons on one set. An "
            "interval crossing zero establishes neither a difference nor equivalence. Runs are paired only within "
            "one dataset: runs imported from another evaluation (their dataset is named) pair only with runs of "
            "that same dataset, on the cases both hold with the same gold answer; the Cases column counts them.", ""]
    out.append(table(
        ["A − B", "Calculator set", "Cases", "Calcs", "A (%)", "B (%)", "Gap (pp)", "Case 95% CI",
         "Cluster 95% CI", "Dataset"],
        [[f"{g['a']} − {g['b']}", SUBSET_LABELS.get(g["subset"], g["subset"]), g["n"], g["calculators"],
          pct(g["a_accuracy"]), pct(g["b_accuracy"]), _signed(g["gap_pp"]), _ci(g["case_ci"]), _ci(g["cluster_ci"]),
          g.get("dataset") or "–"] for g in gaps]))
    left_out = {(g["a"], g["b"]): g for g in gaps if g.get("gold_differs")}
    for (a, b), g in left_out.items():
        out += ["", f"{esc(a)} − {esc(b)}: {g['gold_differs']} case(s) both runs hold were left out because their "
                "gold answers differ (the runs used different releases of the dataset)."]
    out += ["", "### Tests and clustering", "",
            "Discordant rows (right in one run only), the p-values, the intra-calculator correlation of the "
            "per-case differences and the effective number of independent cases it implies.", "",
            table(["A − B", "Calculator set", "A only right", "B only right", "Permutation p", "McNemar p", "Holm p",
                   "ICC", "Effective n"],
                  [[f"{g['a']} − {g['b']}", SUBSET_LABELS.get(g["subset"], g["subset"]),
                    (g.get("discordant") or {}).get("a_only", "–"), (g.get("discordant") or {}).get("b_only", "–"),
                    _p(g["perm_p"]), _p(g["mcnemar_p"]), _p(g["holm_p"]), _num(g["icc"], 3), _num(g["n_eff"], 0)]
                   for g in gaps])]
    hybrids = report.get("hybrids") or []
    if hybrids:
        out += ["", "### Library-first hybrids", "",
                "The library where it answers, the other run elsewhere (the paper's Table 15), against each run.", "",
                table(["Hybrid", "Library share (%)", "Accuracy (%)", "Against", "Its accuracy (%)", "Gap (pp)",
                       "Case 95% CI", "Cluster 95% CI", "Permutation p", "Holm p"],
                      [[h["name"], pct(h["library_share"], 1), pct(h["accuracy"]), g["reference"],
                        pct(g["reference_accuracy"]), _signed(g["gap_pp"]), _ci(g["case_ci"]), _ci(g["cluster_ci"]),
                        _p(g["perm_p"]), _p(g["holm_p"])] for h in hybrids for g in h["gaps"]])]
    stats = report.get("statistics") or {}
    if stats:
        out += ["", "<details><summary>How each statistic is computed</summary>", "",
                table(["Statistic", "Definition"], [[k, v] for k, v in stats.items()], sortable=False),
                "</details>"]
    return out + [""]


def _outcome_tables(runs: list[dict[str, Any]], labels: list[str]) -> list[str]:
    split = any(r["outcomes"]["unsupported"]["rows"] for r in runs)  # some rows outside the library's calculators
    head = ["Run", "Rows", "Right", "Wrong", "None", "No output", "Executor", "Unreadable", "Attempted acc.",
            "Dates acc."] + (["Supported right/wrong/none", "Unsupported right/wrong/none"] if split else [])
    body = []
    for r, lab in zip(runs, labels):
        o = r["outcomes"]
        row: list[Any] = [link("#" + anchor(r["dir"]), lab), r["n_rows"]]
        row += [pct(o[k], 1) for k in ("right_pct", "wrong_pct", "none_pct", "no_output_pct", "executor_pct",
                                       "unreadable_pct")]
        row += [pct(o["attempted_accuracy"]), pct(o["dates_accuracy"])]
        if split:
            row += [" / ".join("–" if o[s][k] is None else f"{o[s][k]:.1f}" for k in ("right_pct", "wrong_pct",
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
    kinds = sorted({k for r in runs for k in r["outcomes"]["by_kind"]})
    out += ["", "### Outcome kinds (rows)", "",
            table(["Run", "Rows"] + kinds, [[lab, r["n_rows"]] + [r["outcomes"]["by_kind"].get(k, 0) for k in kinds]
                                            for r, lab in zip(runs, labels)], sortable=False), ""]
    return out


def _seed_table(report: dict[str, Any]) -> list[str]:
    rows = report.get("seed_agreement") or []
    if not rows or all(len(s["seeds"]) < 2 for s in rows):
        return []
    return ["## Agreement across seeds", "",
            table(["Run", "Seeds", "Accuracy (%)", "Seed sd (pp)", "All seeds agree (%)", "Pairwise agreement (%)",
                   "All right (%)", "All wrong (%)"],
                  [[s["run"], len(s["seeds"]), pct(s["accuracy"]), _num(s["seed_sd"], 2), pct(s["agree_pct"], 1),
                    pct(s["pairwise_pct"], 1), pct(s["right_pct"], 1), pct(s["wrong_pct"], 1)] for s in rows]), ""]


def _per_calculator(reg: Registry, report: dict[str, Any], runs: list[dict[str, Any]], labels: list[str],
                    figures: dict[str, str]) -> list[str]:
    by_calc: dict[int, dict[str, dict[str, Any]]] = {}
    for row in report.get("per_calculator") or []:
        by_calc.setdefault(int(row["calculator_id"]), {})[row["run"]] = row
    calcs = sorted((c for c in reg.calculators.values() if c.medcalc_id in by_calc), key=lambda c: c.medcalc_id or 0)
    series = [(lab, [by_calc[c.medcalc_id].get(r["label"], {}).get("accuracy") for c in calcs if c.medcalc_id])
              for r, lab in zip(runs, labels)]
    figures["per-calculator.svg"] = plots.per_calculator([f"{c.medcalc_id} {c.name[:38]}" for c in calcs], series)
    out = ["## Accuracy per calculator", ""]
    out += _figure("per-calculator.svg", "Accuracy per calculator and run",
                   "Accuracy per calculator (benchmark id and name), one dot per run.")
    out += ["Accuracy (%) per calculator and run, with the supplied-text version the run used; *stale* marks a run "
            "whose text differs from the registry's current text (rerun it to score the current formula).", ""]

    def cell(row: dict[str, Any] | None) -> Raw:
        if row is None:
            return Raw("–", sort="")
        acc = row["accuracy"]
        text = "–" if acc is None else f"{acc:.1f}"
        if row.get("text_versions"):
            text += f' <span class="fr-note">v{esc(", ".join(row["text_versions"]))}</span>'
        if row.get("stale"):
            text += " " + badge("stale", "warn")
        return Raw(text, sort="" if acc is None else f"{acc:.6f}")

    out.append(table(["Benchmark id", "Calculator", "Audit group", "Current text"] + labels,
                     [[c.medcalc_id, link(f"../calculators/{c.slug}.html", c.name), GROUP_LABELS[c.audit_group],
                       next(iter(by_calc[c.medcalc_id].values())).get("current_version") or "–"]
                      + [cell(by_calc[c.medcalc_id].get(r["label"])) for r in runs]
                      for c in calcs if c.medcalc_id is not None]))
    return out + [""]


def results_page(reg: Registry, report: dict[str, Any], figures: dict[str, str],
                 lock_digest: str | None = None) -> str:
    """Markdown for results/index.md from `audit.tables.build_report`'s dict; fills `figures` with name -> SVG."""
    runs = report.get("runs", [])
    out = ["---\nhide:\n  - navigation\n  - toc\n---", "# Results", ""]  # the tables need the width
    if not runs:
        out += ["No stored runs were given to this build. Runs are folders with `manifest.json` and "
                "`results.jsonl`; build with `formula site build --results DIR` (repeatable), or put them under "
                "`results/embedded/`. See [About this report](../about.md#adding-runs)."]
        return "\n".join(out) + "\n"
    labels = [run_label(r) for r in runs]
    out += [f"{len(runs)} stored run(s), read and tabulated by the audit layer's report tables (`formula report`). "
            "Accuracy is the share of case-seed rows scored correct under the benchmark's rules (decimals within "
            "the row's limits; integers, dates and gestational ages exact). These tables are computed here; the "
            "paper's own numbers are on [a separate page](../paper.md), never mixed in.", ""]
    out += _accuracy_tables(report, runs, labels, figures)
    out += _gap_tables(report)
    out += _outcome_tables(runs, labels)

    points = [(lab, cov, r["accuracy"]) for r, lab in zip(runs, labels)
              if (cov := coverage(r)) is not None and r.get("accuracy") is not None]
    figures["coverage-accuracy.svg"] = plots.coverage_accuracy(points)
    out += ["## Coverage against accuracy", "",
            "As in the paper's Figure 2: a run that gives no answer on a case cannot be right on it, so its "
            "full-set accuracy is bounded by its coverage (the diagonal)."]
    out += _figure("coverage-accuracy.svg", "Coverage against accuracy per run",
                   "Coverage (share of rows with an answer) against full-set accuracy.")
    out += _seed_table(report)
    out += _per_calculator(reg, report, runs, labels, figures)

    warnings = report.get("warnings") or []
    if warnings:
        out += ["## Warnings from the report tables", "",
                f"<details><summary>{len(warnings)} warning(s): stale texts, incomplete runs, unknown outcome "
                "kinds</summary>", "", "<ul>" + "".join(f"<li>{esc(w)}</li>" for w in warnings) + "</ul>",
                "</details>", ""]

    out += ["## Runs", ""]
    for r, lab in zip(runs, labels):
        m = read_manifest(Path(r["dir"]))
        facts: list[list[Any]] = [["Folder", Raw(f"<code>{esc(Path(r['dir']).name)}</code>")], ["Arm", r["arm"]],
                                  ["Model", r.get("model")], ["Rows", r["n_rows"]],
                                  ["Accuracy (%)", pct(r.get("accuracy"))]]
        source: dict[str, Any] = m["source"] if isinstance(m.get("source"), dict) else {}
        facts += _source_facts(r, source)
        if source.get("formula_text_shown") is False:  # an imported run: tied to the audit groups, not the texts
            groups: dict[str, Any] = m["audit_groups"] if isinstance(m.get("audit_groups"), dict) else {}
            moved = sorted(s for s, g in groups.items() if s in reg.calculators and reg.calculators[s].audit_group != g)
            facts.append(["Registry", Raw(badge("stale", "bad") + " audit group changed: " + esc(", ".join(moved))
                                          if moved else badge("current", "ok")
                                          + " imported, no formula text shown; its audit groups are the registry's")])
        elif lock_digest is not None:
            recorded = _recorded_lock(m)
            if recorded is None:
                state = Raw(badge("not recorded", "warn"))
            elif recorded == lock_digest:
                state = Raw(badge("current", "ok") + " the run used this registry")
            else:
                state = Raw(badge("stale", "bad") + " the registry has changed since this run")
            facts.append(["Registry", state])
        for k, v in m.items():
            if k in ("arm", "model"):
                continue
            text = str(v if isinstance(v, (str, int, float, bool)) or v is None else json.dumps(v, ensure_ascii=False))
            facts.append([k.replace("_", " "), Raw(f"<code>{esc(text if len(text) <= 300 else text[:299] + '…')}</code>")])
        out += [f'<h3 id="{anchor(r["dir"])}">{esc(lab)}</h3>', "", table(["", ""], facts, sortable=False), ""]
    return "\n".join(out) + "\n"


def _source_facts(run: dict[str, Any], source: dict[str, Any]) -> list[list[Any]]:
    """An imported run's dataset, source files (repository, commit, licence, SHA-256) and verdict differences."""
    if not source:
        return []
    out: list[list[Any]] = [["Dataset", run.get("dataset") or "–"]]
    for f in source.get("files") or []:
        if isinstance(f, dict):
            where = ", ".join(str(f[k]) for k in ("repository", "upstream_path", "commit", "licence") if f.get(k))
            out.append(["Source file", Raw(f"<code>{esc(f.get('name'))}</code> ({esc(where or 'provenance not given')}"
                                           f"; {esc(f.get('rows'))} rows; <code>{esc(f.get('sha256'))}</code>)")])
    diffs = source.get("differences")
    if isinstance(diffs, list):
        out.append(["Verdicts that differ from the log's", len(diffs)])
    return out


def calculator_accuracy(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """slug -> one entry per run that scored it (for the calculator pages), from the report's per-calculator rows."""
    runs = {r["label"]: r for r in report.get("runs", [])}
    out: dict[str, list[dict[str, Any]]] = {}
    for row in report.get("per_calculator") or []:
        r = runs.get(row["run"])
        if r is None:
            continue
        out.setdefault(row["slug"], []).append({"anchor": anchor(r["dir"]), "label": run_label(r), "arm": r["arm"],
                                                "model": r.get("model"), "n": row["n_rows"],
                                                "accuracy": row["accuracy"], "stale": row.get("stale", False)})
    return out
