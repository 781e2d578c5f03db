"""Writes lm_eval/<model>/samples_medcalc_bench_<date>.jsonl with lm-eval's own writer (not run by the tests).

    /tmp/ia/bin/pip install --no-deps lm_eval==0.4.13 && /tmp/ia/bin/pip install datasets jinja2
    /tmp/ia/bin/python make_lm_eval_log.py

Each record has the shape lm-eval 0.4's evaluator logs per document (doc_id, doc, target, arguments,
resps, filtered_resps, filter, metrics, hashes, the metric's value), saved by
`EvaluationTracker.save_results_samples`. The documents are invented MedCalc-Bench-style rows; the
note is a placeholder that must never reach an imported run.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from lm_eval.loggers.evaluation_tracker import EvaluationTracker
from lm_eval.utils import hash_string

HERE = Path(__file__).resolve().parent
NOTE = "PLACEHOLDER PATIENT NOTE: must never reach the imported run."
# (row, calculator id, gold, lower, upper, raw generation, filtered answer, exact_match)
CASES = [
    (1, 2, "25.238", "23.976", "26.5", "CrCl is about 25.9 mL/min.\nAnswer: 25.9", "25.9", 1),
    (2, 4, "4", "4", "4", "Two for age, one each for sex and hypertension.\nAnswer: 4", "4", 1),
    (3, 5, "93.333", "88.666", "98.0", "MAP = (2 x 80 + 120) / 3.\nAnswer: 120", "120", 0),
]


def record(case: tuple) -> dict:
    row, calc, gold, lo, hi, raw, filtered, em = case
    doc = {"Row Number": row, "Calculator ID": str(calc), "Note ID": f"pmc-{row}", "Patient Note": NOTE,
           "Question": "Compute it.", "Ground Truth Answer": gold, "Lower Limit": lo, "Upper Limit": hi}
    prompt = f"{NOTE}\nQuestion: Compute it.\nAnswer:"
    return {"doc_id": row - 1, "doc": doc, "target": gold, "arguments": [(prompt, {"until": ["\n\n"]})],
            "resps": [[raw]], "filtered_resps": [filtered], "filter": "strict-match", "metrics": ["exact_match"],
            "doc_hash": hash_string(json.dumps(doc, indent=2, ensure_ascii=False)), "prompt_hash": hash_string(prompt),
            "target_hash": hash_string(gold), "exact_match": em}


def main() -> None:
    out = HERE / "lm_eval_out"
    tracker = EvaluationTracker(output_path=str(out))
    tracker.general_config_tracker.model_name_sanitized = "openai__gpt-4o-mini"
    tracker.date_id = "2026-01-01T00-00-00.000000"
    tracker.save_results_samples("medcalc_bench", [record(c) for c in CASES])
    src = out / "openai__gpt-4o-mini" / f"samples_medcalc_bench_{tracker.date_id}.jsonl"
    dst = HERE / "lm_eval" / "openai__gpt-4o-mini" / src.name
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    shutil.rmtree(out)


if __name__ == "__main__":
    main()
