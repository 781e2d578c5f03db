"""The results page: stored runs as the report tables of the audit layer, with plots.

The numbers come from `audit.tables.build_report` (accuracy, groups, gaps, outcomes); the page
only tallies the `correct` flags already stored per row to show accuracy per calculator.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Sequence

from formula_site import plots
from formula_site.markup import GROUP_LABELS, GROUP_ORDER, Raw, badge, esc, link, pct, table
from registry.loader import Registry

ABSTAIN_OUTCOMES = {"abstained", "abstain", "none", "no_output", "no_program", "no_answer", "unsupported"}


def anchor(run_dir: str) -> str:
    return "run-" + re.sub(r"[^a-z0-9]+", "-", Path(run_dir).name.lower()).strip("-")


def run_label(run: dict[str, Any]) -> str:
    model = run.get("model")
    return f"{run['arm']}" + (f" · {model}" if model and model not in ("none", "library") else "")


def read_rows(run_dir: Path) -> list[dict[str, Any]]:
    rows = []
    with open(Path(run_dir) / "results.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rows.append(json.loads(line))
    return rows


def read_manifest(run_dir: Path) -> dict[str, Any]:
    return json.loads((Path(run_dir) / "manifest.json").read_text(encoding="utf-8"))


def tallies(rows: Sequence[dict[str, Any]]) -> dict[int, tuple[int, int]]:
    """calculator id -> (rows, correct rows), from the stored flags."""
    out: dict[int, list[int]] = {}
    for r in rows:
        t = out.setdefault(int(r["calculator_id"]), [0, 0])
        t[0] += 1
        t[1] += int(bool(r.get("correct")))
    return {k: (v[0], v[1]) for k, v in out.items()}


def coverage(rows: Sequence[dict[str, Any]]) -> float | None:
    """Share of rows with an answer (not abstained), in percent."""
    if not rows:
        return None
    answered = sum(1 for r in rows if r.get("answer") is not None and r.get("outcome") not in ABSTAIN_OUTCOMES)
    return 100.0 * answered / len(rows)


def _fmt_gap_value(key: str, v: Any) -> Raw | str:
    if v is None:
        return "–"
    if isinstance(v, bool) or isinstance(v, str) or isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if key.endswith("_p"):
            return Raw("&lt;0.0001" if v < 1e-4 else f"{v:.4f}", sort=f"{v:.8f}")
        if key == "icc":
            return Raw(f"{v:.3f}", sort=f"{v:.6f}")
        if key == "n_eff":
            return Raw(f"{v:.1f}", sort=f"{v:.6f}")
        return Raw(f"{v:+.2f}" if key.startswith("gap") else f"{v:.2f}", sort=f"{v:.6f}")
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v):
        return Raw(f"[{v[0]:.2f}, {v[1]:.2f}]", sort=f"{v[0]:.6f}")
    return json.dumps(v, ensure_ascii=False)


GAP_HEADERS = {"a": "Run A", "b": "Run B", "subset": "Calculator set", "n": "Paired rows", "gap_pp": "A − B (pp)",
               "gap": "A − B (pp)", "case_ci": "Case 95% CI", "cluster_ci": "Cluster 95% CI", "ci": "95% CI",
               "perm_p": "Permutation p", "mcnemar_p": "McNemar p", "holm_p": "Holm p", "icc": "ICC",
               "n_eff": "Effective n"}
SUBSET_LABELS = {"all": "all 55", "not_replaced": "51 not replaced", "no_issue": "39 no issue",
                 "library_covered": "library-covered"}


def _outcome_counts(outcomes: Any) -> dict[str, Any]:
    """{kind: count}, flattening one level of nesting ({"wrong": {"raised": 3}} -> "wrong: raised")."""
    flat: dict[str, Any] = {}
    for k, v in (outcomes or {}).items():
        if isinstance(v, dict):
            for k2, v2 in v.items():
                flat[f"{k}: {k2}"] = v2
        else:
            flat[k] = v
    return flat


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


def results_page(reg: Registry, report: dict[str, Any], run_dirs: Sequence[Path], figures: dict[str, str],
                 lock_digest: str | None = None) -> str:
    """Markdown for results/index.md; fills `figures` with file name -> SVG text."""
    runs = report.get("runs", [])
    out = ["# Results", ""]
    if not runs:
        out += ["No stored runs were given to this build. Runs are folders with `manifest.json` and "
                "`results.jsonl`; build with `formula site build --results DIR` (repeatable), or put them under "
                "`results/embedded/`. See [About this report](../about.md#adding-runs)."]
        return "\n".join(out) + "\n"
    labels = [run_label(r) for r in runs]
    rows_by_dir = {str(d): read_rows(Path(d)) for d in run_dirs}
    groups = {c.medcalc_id: c.audit_group for c in reg.calculators.values() if c.medcalc_id is not None}
    n_calcs = {g: sum(1 for x in groups.values() if x == g) for g in GROUP_ORDER}
    out += [
        f"{len(runs)} stored run(s). Accuracy is the share of rows scored correct under the benchmark's rules "
        "(decimal within the row's limits, integers, dates and gestational ages exact). Computed tables are "
        "ours; the paper's own numbers are on [a separate page](../paper.md), never mixed in here.",
        "",
        "## Accuracy by audit group",
        "",
        "The layout of the paper's Table 13: one row per literature-audit group, one column per run "
        "(accuracy in %). The replaced group has only 4 calculators, so its numbers are indicative only.",
        "",
    ]
    body = []
    for g in GROUP_ORDER:
        body.append([GROUP_LABELS[g], n_calcs[g]] + [pct(r["by_group"].get(g)) for r in runs])
    body.append([Raw("<strong>All</strong>", sort="all"), sum(n_calcs.values())] + [pct(r.get("accuracy")) for r in runs])
    out.append(table(["Group", "Calcs"] + labels, body, sortable=False))
    figures["accuracy-by-group.svg"] = plots.accuracy_by_group(runs, labels)
    out += ["", '<figure class="fr-figure"><img src="accuracy-by-group.svg" alt="Accuracy by audit group per run">'
            "<figcaption>Accuracy by literature-audit group, per run.</figcaption></figure>", ""]

    gaps = report.get("gaps") or []
    out += ["## Paired gaps", ""]
    if gaps:
        keys: list[str] = []
        for gp in gaps:
            keys += [k for k in gp if k not in keys]
        out.append(f"Paired differences between runs on the same cases and seeds, in percentage points, with "
                   f"95% intervals ({report.get('draws', '–')} bootstrap draws, seed {report.get('seed', '–')}); "
                   "the calculator-cluster interval is the primary one, as in the paper. Intervals are not "
                   "adjusted for multiplicity; an interval crossing zero establishes neither a difference nor "
                   "equivalence.")
        out.append("")
        body = []
        for gp in gaps:
            gp = dict(gp, subset=SUBSET_LABELS.get(gp.get("subset"), gp.get("subset"))) if "subset" in gp else gp
            body.append([_fmt_gap_value(k, gp.get(k)) for k in keys])
        out.append(table([GAP_HEADERS.get(k, k) for k in keys], body))
    elif report.get("gap_error"):
        out.append(f"No paired comparison: the report tables could not pair these runs ({esc(report['gap_error'])}).")
    else:
        out.append("No paired comparison: build with at least two runs over the same rows.")

    out += ["", "## Outcome accounting", "", "What happened on every row of each run.", ""]
    kinds: list[str] = []
    for r in runs:
        kinds += [k for k in _outcome_counts(r.get("outcomes")) if k not in kinds]
    out.append(table(["Run", "Rows"] + kinds, [[link("#" + anchor(r["dir"]), run_label(r)), r["n_rows"]]
                                              + [_outcome_counts(r.get("outcomes")).get(k, 0) for k in kinds]
                                              for r in runs], sortable=False))

    points = []
    for r, lab in zip(runs, labels):
        cov = coverage(rows_by_dir.get(str(r["dir"]), []))
        if cov is not None and r.get("accuracy") is not None:
            points.append((lab, cov, r["accuracy"]))
    figures["coverage-accuracy.svg"] = plots.coverage_accuracy(points)
    out += ["", "## Coverage against accuracy", "",
            "As in the paper's Figure 2: a run that abstains on a case cannot be right on it, so its full-set "
            "accuracy is bounded by its coverage (the diagonal).", "",
            '<figure class="fr-figure"><img src="coverage-accuracy.svg" alt="Coverage against accuracy per run">'
            "<figcaption>Coverage (share of rows answered) against full-set accuracy.</figcaption></figure>", ""]

    calcs = sorted((c for c in reg.calculators.values() if c.medcalc_id is not None), key=lambda c: c.medcalc_id)
    per = [tallies(rows_by_dir.get(str(r["dir"]), [])) for r in runs]
    series = [(lab, [100.0 * t[c.medcalc_id][1] / t[c.medcalc_id][0] if c.medcalc_id in t else None for c in calcs])
              for lab, t in zip(labels, per)]
    figures["per-calculator.svg"] = plots.per_calculator([f"{c.medcalc_id} {c.name[:38]}" for c in calcs], series)
    out += ["## Accuracy per calculator", "",
            '<figure class="fr-figure"><img src="per-calculator.svg" alt="Accuracy per calculator and run">'
            "<figcaption>Accuracy per calculator (benchmark id and name), one dot per run.</figcaption></figure>", ""]
    out.append(table(["Benchmark id", "Calculator", "Audit group"] + labels,
                     [[c.medcalc_id, link(f"../calculators/{c.slug}.html", c.name), GROUP_LABELS[c.audit_group]]
                      + [pct(s[1][k]) for s in series] for k, c in enumerate(calcs)]))

    out += ["", "## Runs", ""]
    for r, lab in zip(runs, labels):
        m = read_manifest(Path(r["dir"]))
        facts = [["Folder", Raw(f"<code>{esc(Path(r['dir']).name)}</code>")], ["Arm", r["arm"]], ["Model", r.get("model")],
                 ["Rows", r["n_rows"]], ["Accuracy (%)", pct(r.get("accuracy"))]]
        if lock_digest is not None:
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
            text = v if isinstance(v, (str, int, float, bool)) or v is None else json.dumps(v, ensure_ascii=False)
            text = str(text)
            facts.append([k.replace("_", " "), Raw(f"<code>{esc(text if len(text) <= 300 else text[:299] + '…')}</code>")])
        out += [f'<h3 id="{anchor(r["dir"])}">{esc(lab)}</h3>', "", table(["", ""], facts, sortable=False), ""]
    return "\n".join(out) + "\n"


def calculator_accuracy(reg: Registry, runs: Sequence[dict[str, Any]], rows_by_dir: dict[str, list[dict[str, Any]]]
                        ) -> dict[str, list[dict[str, Any]]]:
    """slug -> one entry per run that scored it (for the calculator pages)."""
    out: dict[str, list[dict[str, Any]]] = {}
    by_id = {c.medcalc_id: c.slug for c in reg.calculators.values() if c.medcalc_id is not None}
    for r in runs:
        for cid, (n, ok) in sorted(tallies(rows_by_dir.get(str(r["dir"]), [])).items()):
            slug = by_id.get(cid)
            if slug is None:
                continue
            out.setdefault(slug, []).append({"anchor": anchor(r["dir"]), "label": run_label(r), "arm": r["arm"],
                                             "model": r.get("model"), "n": n, "correct": ok,
                                             "accuracy": 100.0 * ok / n if n else None})
    return out
