"""lm-evaluation-harness `--log_samples` files (`samples_<task>_<date>.jsonl`) of a MedCalc-Bench task.

Read from the record its evaluator logs per document (lm-eval 0.4: `doc_id`, `doc`, `target`,
`arguments`, `resps`, `filtered_resps`, `filter`, `metrics` and each metric's value); the package is
not needed. `doc` is the benchmark row and must name `Row Number` and `Calculator ID` (and `Note ID`);
its `Ground Truth Answer` (else `target`) is the gold, and its `Lower Limit`/`Upper Limit`, where it
has them, the limits. The answer scored is the filtered response (the final-answer line of it, or
the whole text); the raw generation is the reply. The first metric listed is the log's own verdict
(1/0, true/false). The document's patient note and the prompt (`arguments`) are never copied. A file
holding several filters is read for the first one (the others are listed as warnings). The file does
not say which split it was scored on: give `--dataset`. Where lm-eval's `results_<date>.json` of the same
run lies beside the file, the model's name, lm-eval's version and the model arguments are read from it and
recorded with the file's hash.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from registry import jsontext
from solver.importers import IMPORTERS, ImportFailure, SourceFile, SourceRow
from solver.importers.common import json_lines, safe_label, sha256_of
from solver.importers.medcalc_bench import DATASETS
from solver.scoring import final_answer_line

RESULTS_LIMIT = 64 << 20  # a results_<date>.json larger than this is not read
_FILE = re.compile(r"^samples_(?P<task>.+?)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.:]+)$")


def _whole(v: Any, where: str, name: str) -> int:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v)
    raise ImportFailure(f"{where}: {name} must be a whole number, got {json.dumps(v)[:60]}")


def _first_text(value: Any) -> str | None:
    """The first string inside lm-eval's nested response lists ([[text]] or [text])."""
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def _verdict(obj: dict[str, Any]) -> bool | None:
    names = obj.get("metrics")
    if not isinstance(names, list) or not names:
        return None
    v = obj.get(names[0])
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    return None


def _row(obj: dict[str, Any], where: str, line: int) -> SourceRow:
    doc = obj.get("doc")
    if not isinstance(doc, dict):
        raise ImportFailure(f"{where}: no 'doc' object (the benchmark row); is this an lm-eval --log_samples file?")
    missing = [k for k in ("Row Number", "Calculator ID") if doc.get(k) is None]
    if missing:
        raise ImportFailure(f"{where}: doc has no {', '.join(repr(m) for m in missing)}; the task's documents must "
                            "be MedCalc-Bench rows")
    gold = doc.get("Ground Truth Answer", obj.get("target"))
    if gold is None:
        raise ImportFailure(f"{where}: no gold answer (doc 'Ground Truth Answer' or 'target')")
    reply = _first_text(obj.get("resps"))
    filtered = _first_text(obj.get("filtered_resps"))
    answer = filtered if filtered is not None and filtered != reply else (final_answer_line(reply) or reply)
    return SourceRow(line=line, row_number=_whole(doc["Row Number"], where, "Row Number"),
                     calculator_id=_whole(doc["Calculator ID"], where, "Calculator ID"), ground_truth=gold,
                     answer_text=answer, reply=reply, note_id=doc.get("Note ID"), category=doc.get("Category"),
                     source_verdict=_verdict(obj), lower=doc.get("Lower Limit"), upper=doc.get("Upper Limit"))


class LmEvalSamples:
    title = "lm-evaluation-harness --log_samples JSONL"

    def read(self, path: Path, *, dataset: str | None = None) -> SourceFile:
        if dataset is not None and dataset not in DATASETS:
            raise ImportFailure(f"unknown --dataset {dataset!r}; known: {', '.join(sorted(DATASETS))}")
        if dataset is None:
            raise ImportFailure(f"{path}: an lm-eval samples file does not say which split it was scored on; give "
                                f"--dataset ({', '.join(sorted(DATASETS))})")
        rows: list[SourceRow] = []
        seen: dict[int, int] = {}
        first_filter = None
        other_filters: set[str] = set()
        for n, obj in json_lines(path):
            where = f"{path}:{n}"
            filt = str(obj.get("filter", "none"))
            first_filter = first_filter or filt
            if filt != first_filter:
                other_filters.add(filt)
                continue
            r = _row(obj, where, n)
            if r.row_number in seen:
                raise ImportFailure(f"{where}: Row Number {r.row_number} is already on line {seen[r.row_number]}")
            seen[r.row_number] = n
            rows.append(r)
        m = _FILE.match(path.stem)
        warnings = [f"{path}: read filter {first_filter!r}; left out {', '.join(sorted(other_filters))}"] \
            if other_filters else []
        run = _results(path, m.group("date") if m else None, warnings)
        model = run.pop("model_name", None) or path.parent.name
        return SourceFile(path=path, sha256=sha256_of(path), format="lm-eval", dataset=DATASETS[dataset], rows=rows,
                          model=safe_label(str(model).split("__")[-1]),  # lm-eval writes openai/x as openai__x
                          prompt_style=m.group("task") if m else None,
                          provenance={"filter": first_filter, **run}, warnings=warnings)


def _results(path: Path, date: str | None, warnings: list[str]) -> dict[str, Any]:
    """What the run's `results_<date>.json` beside the samples says produced it (lm-eval writes both in one
    folder); {} when it is not there. The model name is lm-eval's own (`model_name`)."""
    if date is None:
        return {}
    other = path.with_name(f"results_{date}.json")
    try:
        if other.stat().st_size > RESULTS_LIMIT:
            warnings.append(f"{other}: over {RESULTS_LIMIT:,} bytes; not read")
            return {}
        obj = jsontext.read_file(other, RESULTS_LIMIT, "results file")
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        warnings.append(f"{other}: not readable ({type(e).__name__}); the run's results file is not recorded")
        return {}
    if not isinstance(obj, dict):
        return {}
    config = obj.get("config")
    if not isinstance(config, dict):
        config = {}
    out = {"results_file": other.name, "results_sha256": sha256_of(other),
           "lm_eval_version": obj.get("lm_eval_version"), "lm_eval_git_hash": obj.get("git_hash"),
           "model_source": obj.get("model_source") or config.get("model"),
           "model_args": config.get("model_args"), "model_name": safe_label(obj.get("model_name"))}
    return {k: v for k, v in out.items() if v not in (None, "", {})}


IMPORTERS.register("lm-eval")(LmEvalSamples())
