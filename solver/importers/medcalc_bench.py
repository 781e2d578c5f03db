"""MedCalc-Bench's own evaluation output (`evaluation/run.py`): one JSON line per case.

Every shape its code writes is read: `LLM Explanation` replies (JSON with `step_by_step_thinking` and
`answer`, or free text, or `N/A` for direct answers) and code-execution runs, whose `LLM Chat History`
holds the conversation. The answer scored is the one the log recorded (`LLM Answer`, what their
extractor read); where a line has none, it is read from the reply (the JSON `answer`, or the last
`<answer> ... <\\answer>` of the chat). The patient note is never copied: the `Note ID` names the case.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from registry import jsontext
from solver.importers import IMPORTERS, DatasetSpec, ImportFailure, SourceFile, SourceRow
from solver.importers.common import json_lines, safe_label, sha256_of

DATASETS = {
    "medcalc-bench-2024": DatasetSpec(
        key="medcalc-bench-2024-test", title="MedCalc-Bench 2024 test split, 1,047 rows", rows=1047,
        source="ncbi-nlp/MedCalc-Bench dataset/test_data.csv (2024 test split; gold as each log carries it)"),
    "medcalc-bench-verified": DatasetSpec(
        key="medcalc-bench-verified-test", title="MedCalc-Bench Verified test split", rows=None,
        source="nsk7153/MedCalc-Bench-Verified test split (gold as each log carries it)"),
}
REQUIRED = ("Row Number", "Calculator ID", "Ground Truth Answer")
REPLY_FIELDS = ("LLM Answer", "LLM Explanation", "LLM Chat History")
PROMPT_STYLES = ("direct_answer", "zero_shot", "one_shot", "code_exec", "code_augmented")
_ANSWER_TAG = re.compile(r"<answer>(.*?)<\\?/?\\?answer>", re.IGNORECASE | re.DOTALL)
_VERDICTS = {"correct": True, "incorrect": False}


def _int(v: Any, where: str, name: str) -> int:
    if isinstance(v, bool):
        raise ImportFailure(f"{where}: field '{name}' must be a whole number, got {json.dumps(v)}")
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    raise ImportFailure(f"{where}: field '{name}' must be a whole number, got {json.dumps(v)[:60]}")


def _json_answer(text: str) -> Any:
    try:
        obj = jsontext.loads(text)
    except (ValueError, TypeError):
        return None
    return obj.get("answer") if isinstance(obj, dict) else None


def _chat(history: Any, where: str) -> tuple[str | None, list[dict[str, Any]]]:
    """(last assistant turn, the model's turns and the tool outputs) without the system prompt and the
    first user turn, which holds the patient note."""
    if not isinstance(history, list) or not all(isinstance(m, dict) for m in history):
        raise ImportFailure(f"{where}: field 'LLM Chat History' must be a list of messages with role and content")
    calls: list[dict[str, Any]] = []
    first_user = True
    last = None
    for m in history:
        role, content = m.get("role"), m.get("content")
        if role == "system":
            continue
        if role == "user" and first_user:
            first_user = False
            continue
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        calls.append({"call": len(calls), "role": role, "reply": text})
        if role == "assistant":
            last = text
    return last, calls


def _answer_from_chat(calls: list[dict[str, Any]]) -> str | None:
    for c in reversed(calls):
        if c["role"] == "assistant":
            found = _ANSWER_TAG.findall(c["reply"])
            if found:
                return str(found[-1]).strip()
    return None


def _row(obj: dict[str, Any], where: str, line: int) -> SourceRow:
    missing = [k for k in REQUIRED if k not in obj or obj[k] is None]
    if missing:
        raise ImportFailure(f"{where}: missing field(s) {', '.join(repr(m) for m in missing)}; a MedCalc-Bench output "
                            "line needs Row Number, Calculator ID, Ground Truth Answer and the model's answer")
    if not any(k in obj for k in REPLY_FIELDS):
        raise ImportFailure(f"{where}: no model answer: none of {', '.join(REPLY_FIELDS)}")
    r = SourceRow(line=line, row_number=_int(obj["Row Number"], where, "Row Number"),
                  calculator_id=_int(obj["Calculator ID"], where, "Calculator ID"),
                  ground_truth=obj["Ground Truth Answer"], note_id=obj.get("Note ID"), category=obj.get("Category"))
    result = obj.get("Result")
    if result is not None:
        if not isinstance(result, str) or result.strip().lower() not in _VERDICTS:
            raise ImportFailure(f"{where}: field 'Result' must be Correct or Incorrect, got {json.dumps(result)[:60]}")
        r.source_verdict = _VERDICTS[result.strip().lower()]
    if "LLM Chat History" in obj:
        r.reply, r.calls = _chat(obj["LLM Chat History"], where)
    elif isinstance(obj.get("LLM Explanation"), str):
        r.reply = obj["LLM Explanation"]
    answer = obj.get("LLM Answer")
    if answer is None and r.reply is not None:
        answer = _answer_from_chat(r.calls) if r.calls else _json_answer(r.reply)
    r.answer_text = answer if answer is None or isinstance(answer, str) else json.dumps(answer)
    for k, attr in (("Lower Limit", "lower"), ("Upper Limit", "upper")):
        if obj.get(k) is not None:
            setattr(r, attr, obj[k])
    return r


def guess_model_and_style(path: Path) -> tuple[str | None, str | None]:
    """From MedCalc-Bench's file names: `openai_gpt-4o-mini_direct_answer`, `code_exec_gpt_4`."""
    stem = path.stem
    stem = re.sub(r"^(openai|OpenAI)_", "", stem)
    for style in PROMPT_STYLES:
        if stem.endswith("_" + style):
            return safe_label(stem[: -len(style) - 1]), style
        if stem.startswith(style + "_"):
            return safe_label(stem[len(style) + 1:]), style
    return safe_label(stem), None


class MedCalcBench:
    title = "MedCalc-Bench evaluation output (evaluation/run.py JSONL)"

    def read(self, path: Path, *, dataset: str | None = None) -> SourceFile:
        rows: list[SourceRow] = []
        seen: dict[int, int] = {}
        has_limits = False
        for n, obj in json_lines(path):
            where = f"{path}:{n}"
            r = _row(obj, where, n)
            if r.row_number in seen:
                raise ImportFailure(f"{where}: Row Number {r.row_number} is already on line {seen[r.row_number]}; "
                                    "each case once per run")
            seen[r.row_number] = n
            has_limits = has_limits or r.lower is not None
            rows.append(r)
        spec = self._dataset(path, dataset, has_limits)
        if spec.rows is not None:
            over = [r for r in rows if not 1 <= r.row_number <= spec.rows]
            if over:
                raise ImportFailure(f"{path}:{over[0].line}: Row Number {over[0].row_number} is outside "
                                    f"{spec.title}; is this file from another dataset? (--dataset)")
        model, style = guess_model_and_style(path)
        return SourceFile(path=path, sha256=sha256_of(path), format="medcalc-bench", dataset=spec, rows=rows,
                          model=model, prompt_style=style)

    @staticmethod
    def _dataset(path: Path, dataset: str | None, has_limits: bool) -> DatasetSpec:
        """A log without limit fields is the 2024 layout (its evaluation code wrote none); one with them
        cannot tell, and takes --dataset."""
        if dataset is not None and dataset not in DATASETS:
            raise ImportFailure(f"unknown --dataset {dataset!r}; known: {', '.join(sorted(DATASETS))}")
        if not has_limits:
            if dataset not in (None, "medcalc-bench-2024"):
                raise ImportFailure(f"{path}: a log without Lower/Upper Limit fields is MedCalc-Bench's 2024 layout, "
                                    f"scored on the 2024 test split, not {dataset}")
            return DATASETS["medcalc-bench-2024"]
        if dataset is None:
            raise ImportFailure(f"{path}: carries Lower/Upper Limit fields, which the 2024 logs do not; name its "
                                f"dataset with --dataset ({', '.join(sorted(DATASETS))})")
        return DATASETS[dataset]


IMPORTERS.register("medcalc-bench")(MedCalcBench())
