"""Imported runs on the results page: each run's dataset shown, pairs only within one dataset."""
from __future__ import annotations

from pathlib import Path

from audit.runs import read_run
from audit.tables import build_report
from formula_site.build import default_pairs
from formula_site.results_pages import results_page
from registry.loader import get_registry

EMBEDDED = Path(__file__).resolve().parents[2] / "results" / "embedded"


def test_default_pairs_stay_within_a_dataset_and_the_page_names_it():
    dirs = [EMBEDDED / "gold-solve", EMBEDDED / "gold-solve-published",
            EMBEDDED / "medcalc-bench-2024" / "gpt-4-direct-answer",
            EMBEDDED / "medcalc-bench-2024" / "gpt-4o-mini-direct-answer"]
    runs = [read_run(d) for d in dirs]
    pairs = {(Path(a).name, Path(b).name) for a, b in default_pairs(runs)}
    assert pairs == {("gold-solve-published", "gold-solve"), ("gpt-4-direct-answer", "gpt-4o-mini-direct-answer")}
    report = build_report(runs, compare=sorted(default_pairs(runs)), registry=get_registry(), draws=20)
    text = results_page(get_registry(), report, {})
    assert "MedCalc-Bench 2024 test split, 1,047 rows" in text and "reference_cases.jsonl" in text
    gap = next(g for g in report["gaps"] if g["a"] == "gpt-4-direct-answer" and g["subset"] == "all")
    assert (f"gpt-4 · medcalc-bench-direct-answer − gpt-4o-mini · medcalc-bench-direct-answer: {gap['gold_differs']} "
            "cases") in text
    assert "no formula text shown" in text and "imported; its audit groups are the registry" in text
    assert "<code>openai_gpt-4o-mini_direct_answer.jsonl</code> (ncbi-nlp/MedCalc-Bench, " in text
    assert "f557a04, CC-BY-SA-4.0; 1047 rows" in text
