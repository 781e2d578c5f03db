"""inspect_ai evaluation logs (`.json`, or the zipped `.eval` inspect_ai writes by default) of a MedCalc-Bench task.

A `.eval` archive is read one sample member at a time (zstd members through `zipread`), so memory holds
one sample and the rows kept (the model's turns, never the note), whatever the archive's size.

Read from the log format inspect_ai documents (`EvalLog`: `eval` with the task, model and dataset;
`samples`, each an `EvalSample` with `id`, `epoch`, `target`, `messages`, `output` and `scores`); the
package itself is not needed. Each sample's `metadata` must name the benchmark case (`Row Number` or
`row_number`, `Calculator ID` or `calculator_id`; `Note ID` where known), as a MedCalc-Bench task's
`record_to_sample` keeps it; `target` is the gold answer. The answer scored is the scorer's `answer`
where it recorded one, else the final-answer line (or the whole text) of the model's last reply; the
first score's value ("C"/"I", true/false, 1/0) is the log's own verdict. A scorer's `answer` that is the
whole completion (inspect_ai's `match()` and `includes()` record it so) is read at its final-answer line. Sample inputs and user turns
hold the patient note and are never copied; the model's own turns are kept.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any, Iterator

from registry import jsontext
from solver.importers import IMPORTERS, DatasetSpec, ImportFailure, SourceFile, SourceRow
from solver.importers.common import safe_label, sha256_of
from solver.importers.medcalc_bench import DATASETS
from solver.importers.zipread import open_archive, read_member
from solver.scoring import final_answer_line

_VERDICT_TRUE = {"c", "correct", "true", "1", "1.0"}
_VERDICT_FALSE = {"i", "incorrect", "false", "0", "0.0"}


MEMBER_LIMIT = jsontext.LOG_MAX  # bytes one sample (or the header) of a .eval may hold uncompressed; memory is one member's
Samples = Iterator[tuple[str, dict[str, Any]]]


def _load(path: Path) -> tuple[dict[str, Any], Samples]:
    """(the log's header, its samples one at a time as (where, sample)) from a .json log or a .eval archive."""
    try:
        if path.suffix == ".eval":
            header, samples = _archive(path)
        else:
            log = jsontext.read_file(path, jsontext.LOG_MAX, "log", unique=True)
            if not isinstance(log, dict):
                raise ImportFailure(f"{path}: not an inspect_ai log (expected a JSON object)")
            header = log
            samples = ((f"{path}: samples[{i}]", s) for i, s in enumerate(log.get("samples") or []))
    except FileNotFoundError:
        raise ImportFailure(f"{path}: no such file") from None
    except (OSError, ValueError, zipfile.BadZipFile) as e:  # (jsontext.JsonError and MemberError are ValueErrors)
        raise ImportFailure(f"{path}: not a readable inspect_ai log ({type(e).__name__}: {e})") from None
    spec = header.get("eval") if isinstance(header, dict) else None
    if not isinstance(spec, dict):
        raise ImportFailure(f"{path}: no 'eval' section; is this an inspect_ai log?")
    return header, samples


def _sample_names(z: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    return sorted((i for i in z.infolist() if i.filename.startswith("samples/") and i.filename.endswith(".json")),
                  key=lambda i: i.filename)


def _archive(path: Path) -> tuple[dict[str, Any], Samples]:
    """A .eval archive's header.json now, and a generator that reads its samples one member at a time."""
    with open(path, "rb") as raw, open_archive(raw) as z:
        try:
            info = z.getinfo("header.json")
        except KeyError:
            raise ImportFailure(f"{path}: no header.json: the evaluation has not finished writing this log (or it "
                                "is not an inspect_ai .eval log)") from None
        header = jsontext.loads(read_member(z, raw, info, MEMBER_LIMIT))
    return header, _archive_samples(path)


def _archive_samples(path: Path) -> Samples:
    with open(path, "rb") as raw, open_archive(raw) as z:
        for info in _sample_names(z):
            where = f"{path}:{info.filename}"
            try:
                yield where, jsontext.loads(read_member(z, raw, info, MEMBER_LIMIT), unique=True)
            except (OSError, ValueError) as e:  # (MemberError, JsonError and UnicodeDecodeError are ValueErrors)
                raise ImportFailure(f"{where}: not a readable sample ({type(e).__name__}: {e})") from None


def _meta(sample: dict[str, Any], where: str, *names: str) -> Any:
    meta = sample.get("metadata") or {}
    for n in names:
        if meta.get(n) is not None:
            return meta[n]
    raise ImportFailure(f"{where}: metadata names no {names[0]!r} (nor {', '.join(repr(n) for n in names[1:])})")


def _int(v: Any, where: str, name: str) -> int:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v)
    raise ImportFailure(f"{where}: {name} must be a whole number, got {json.dumps(v)[:60]}")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: keep the text ones
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _verdict(scores: Any, where: str) -> tuple[bool | None, Any]:
    if not isinstance(scores, dict) or not scores:
        return None, None
    first = next(iter(scores.values()))
    if not isinstance(first, dict):
        raise ImportFailure(f"{where}: scores must map scorer names to Score objects")
    value = str(first.get("value")).strip().lower()
    verdict = True if value in _VERDICT_TRUE else False if value in _VERDICT_FALSE else None
    return verdict, first.get("answer")


def _row(sample: dict[str, Any], where: str, line: int) -> SourceRow:
    if not isinstance(sample, dict):
        raise ImportFailure(f"{where}: a sample must be a JSON object")
    if sample.get("target") is None:
        raise ImportFailure(f"{where}: no 'target' (the gold answer)")
    target = sample["target"]
    gold = target[0] if isinstance(target, list) and target else target
    calls = [{"call": i, "role": "assistant", "reply": _text(m.get("content"))}
             for i, m in enumerate(m for m in sample.get("messages") or [] if isinstance(m, dict)
                                   and m.get("role") == "assistant")]
    output = sample.get("output") or {}
    reply = output.get("completion") if isinstance(output, dict) else None
    if not reply and calls:
        reply = calls[-1]["reply"]
    verdict, answer = _verdict(sample.get("scores"), where)
    if answer is None:
        answer = reply
    if isinstance(answer, str) and answer:  # inspect_ai's match()/includes() record the whole completion
        answer = final_answer_line(answer) or answer
    epoch = sample.get("epoch", 1)
    return SourceRow(line=line, row_number=_int(_meta(sample, where, "Row Number", "row_number"), where, "Row Number"),
                     calculator_id=_int(_meta(sample, where, "Calculator ID", "calculator_id"), where, "Calculator ID"),
                     ground_truth=gold, answer_text=answer, reply=reply, calls=calls,
                     note_id=(sample.get("metadata") or {}).get("Note ID") or (sample.get("metadata") or {}).get("note_id"),
                     source_verdict=verdict, seed=_int(epoch, where, "epoch") - 1)


class InspectEval:
    title = "inspect_ai evaluation log (.json or .eval)"

    def read(self, path: Path, *, dataset: str | None = None) -> SourceFile:
        header, samples = _load(path)
        spec = header["eval"]
        ds = self._dataset(path, spec, dataset)  # before the samples: a wrong --dataset costs no reading
        rows: list[SourceRow] = []
        warnings: list[str] = []
        seen: dict[tuple[int, int], str] = {}
        for i, (where, s) in enumerate(samples, 1):  # one sample in memory at a time; rows keep no note
            r = _row(s, where, i)
            if (r.row_number, r.seed) in seen:
                raise ImportFailure(f"{where}: Row Number {r.row_number} (epoch {r.seed + 1}) is already in "
                                    f"{seen[(r.row_number, r.seed)]}")
            seen[(r.row_number, r.seed)] = where
            rows.append(r)
            error = s.get("error")
            if isinstance(error, dict):
                message = str(error.get("message") or "")
                warnings.append(f"{where}: the sample ended in an error ({message[:160]}); it is scored as "
                                "no answer")
        if not rows:
            raise ImportFailure(f"{path}: the log holds no samples (written with --no-log-samples?)")
        status = header.get("status")
        if status not in (None, "success"):
            warnings.insert(0, f"{path}: the evaluation's status is {str(status)[:40]!r}, not 'success'")
        model = spec.get("model")
        task = spec.get("task")
        return SourceFile(path=path, sha256=sha256_of(path), format="inspect-ai", dataset=ds, rows=rows,
                          model=safe_label(str(model).split("/", 1)[-1]) if model else None,
                          prompt_style=str(task) if task else None,
                          provenance={"task": task, "eval_id": spec.get("eval_id"), "created": spec.get("created"),
                                      "model_id": safe_label(str(model)) if model else None,  # with its provider
                                      "inspect_ai": (spec.get("packages") or {}).get("inspect_ai"),
                                      "status": status},
                          warnings=warnings)

    @staticmethod
    def _dataset(path: Path, spec: dict[str, Any], dataset: str | None) -> DatasetSpec:
        if dataset is not None and dataset not in DATASETS:
            raise ImportFailure(f"unknown --dataset {dataset!r}; known: {', '.join(sorted(DATASETS))}")
        name = str((spec.get("dataset") or {}).get("name") or "")
        if "verified" in name.lower():  # the log names its dataset: that is the one
            if dataset not in (None, "medcalc-bench-verified"):
                raise ImportFailure(f"{path}: the log was scored on {name!r}, not {dataset}")
            return DATASETS["medcalc-bench-verified"]
        if dataset is not None:
            return DATASETS[dataset]
        raise ImportFailure(f"{path}: the log's dataset {name or '(unnamed)'!r} does not say which MedCalc-Bench "
                            f"split it is; give --dataset ({', '.join(sorted(DATASETS))})")


IMPORTERS.register("inspect-ai")(InspectEval())
