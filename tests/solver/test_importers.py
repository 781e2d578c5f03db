"""`formula import`: every MedCalc-Bench output shape, the tolerance rule, verdict differences, bad input,
the inspect_ai importer, and what the rest of the toolkit makes of an imported run."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from cli.main import main
from solver.importers import IMPORTERS, ImportFailure
from solver.importers.run import import_run
from tests.solver.importers_helpers import NOTE, line, results, write

DATA = Path(__file__).resolve().parent / "data"


def _one(tmp_path: Path, lines: list[dict], name: str = "openai_gpt-4o-mini_direct_answer.jsonl"):
    src = write(tmp_path / name, lines)
    run = import_run("medcalc-bench", [src], tmp_path / "run")
    return run, results(tmp_path / "run")


def test_importers_are_a_name_registry():
    assert {"medcalc-bench", "inspect-ai", "lm-eval"} <= set(IMPORTERS.names())


def test_direct_answer_run_becomes_a_run_folder(tmp_path):
    run, rows = _one(tmp_path, [line(1, 2, "25.238", "25.9"), line(2, 4, "4", "3", "Incorrect", Category="risk")])
    assert (run.rows, run.correct, run.model, run.arm) == (2, 1, "gpt-4o-mini", "medcalc-bench-direct-answer")
    man = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert man["dataset"]["name"] == "MedCalc-Bench 2024 test split, 1,047 rows"
    assert man["source"]["formula_text_shown"] is False and man["formula_texts"] == {}
    assert man["source"]["files"][0]["sha256"].startswith("sha256:") and man["source"]["differences"] == []
    assert man["audit_groups"] == {"creatinine-clearance-cockcroft-gault": "other", "cha2ds2-vasc": "other"}
    first = rows[0]
    assert (first["answer"], first["correct"], first["lower_limit"], first["upper_limit"]) == (
        25.9, True, pytest.approx(25.238 * 0.95), pytest.approx(25.238 * 1.05))
    assert first["note_id"] == "note-1" and first["reply"] == "N/A" and first["source_answer"] == "25.9"
    # a missing Category is the registry's; the text columns stay empty: no text of this registry was shown
    assert first["category"] == "lab test" and first["source_category"] is None
    assert first["text_version"] is None and first["text_shown"] is False
    assert NOTE not in (tmp_path / "run" / "results.jsonl").read_text()
    assert "What is the value?" not in (tmp_path / "run" / "results.jsonl").read_text()


def test_json_and_free_text_explanations(tmp_path):
    reply = json.dumps({"step_by_step_thinking": "two points", "answer": "4"})
    _, rows = _one(tmp_path, [
        line(1, 4, "4", None, **{"LLM Explanation": reply}),  # no LLM Answer: read from the JSON reply
        line(2, 4, "2", "2", **{"LLM Explanation": "Age gives 1 point and hypertension 1, so the score is 2."}),
    ], "OpenAI_gpt-4_one_shot.jsonl")
    assert [(r["answer"], r["correct"], r["reply"]) for r in rows] == [
        (4, True, reply), (2, True, "Age gives 1 point and hypertension 1, so the score is 2.")]
    assert rows[0]["arm"] == "medcalc-bench-one-shot" and rows[0]["model"] == "gpt-4"


def test_code_execution_run_keeps_the_model_turns_not_the_note(tmp_path):
    chat = [{"role": "system", "content": "Write code."},
            {"role": "user", "content": f"Patient Note:\n\n{NOTE}\n\nQuestion: ..."},
            {"role": "assistant", "content": "```python\nprint(53 * 48 / (1.4 * 72))\n```"},
            {"role": "user", "content": "I have executed your code, and the output is: 25.238"},
            {"role": "assistant", "content": "<answer> 25.238 <\\answer>"}]
    _, rows = _one(tmp_path, [line(1, 2, "25.238", None, **{"LLM Chat History": chat, "LLM Explanation": None})],
                   "code_exec_gpt_4.jsonl")
    r = rows[0]
    assert (r["answer"], r["correct"], r["model"], r["arm"]) == (25.238, True, "gpt_4", "medcalc-bench-code-exec")
    assert [c["role"] for c in r["calls"]] == ["assistant", "user", "assistant"]
    assert r["reply"] == "<answer> 25.238 <\\answer>"
    assert NOTE not in (tmp_path / "run" / "results.jsonl").read_text()


@pytest.mark.parametrize("calc,gold,answer,right", [
    (2, "100", "105", True), (2, "100", "95", True), (2, "100", "105.1", False), (2, "100", "94.9", False),
    (4, "4", "4.4", True), (4, "4", "3.6", True), (4, "4", "4.6", False), (4, "2", "2.5", True),  # round half even
    (13, "09/23/2014", "9/23/2014", True), (13, "09/23/2014", "09/24/2014", False),
    (69, "('14 weeks', '1 days')", "(14 weeks, 1 days)", True), (69, "('14 weeks', '1 days')", "(14 weeks, 2 days)",
                                                                False),
    (2, "100", "name 'N' is not defined", False),
])
def test_medcalc_bench_tolerance_rule(tmp_path, calc, gold, answer, right):
    _, rows = _one(tmp_path, [line(1, calc, gold, answer, "Correct" if right else "Incorrect")])
    assert rows[0]["correct"] is right


def test_every_verdict_difference_is_listed(tmp_path, capsys):
    # MedCalc-Bench's float() cannot read "3 points" (Incorrect); our reader takes the number (right)
    src = write(tmp_path / "x_direct_answer.jsonl", [line(1, 4, "3", "3 points", "Incorrect"), line(2, 4, "3", "3")])
    rc = main(["import", "medcalc-bench", str(src), "--out", str(tmp_path / "run")])
    out = capsys.readouterr().out
    assert rc == 0 and "1 verdict differs" in out
    assert 'x_direct_answer.jsonl:1 row 1: ours Correct, the log\'s Incorrect: recorded answer "3 points" rounds to 3' \
        in out
    man = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert man["source"]["differences"] == [{"file": "x_direct_answer.jsonl", "line": 1, "row_number": 1,
                                             "ours": "Correct", "theirs": "Incorrect",
                                             "why": 'recorded answer "3 points" rounds to 3; the gold is 3'}]


@pytest.mark.parametrize("content,message", [
    (json.dumps(line(1, 4, "3", "3")) + "\nnot json\n", "x.jsonl:2: not a JSON line"),
    ("[1, 2]\n", "x.jsonl:1: expected a JSON object"),
    (json.dumps(line(1, 999, "3", "3")) + "\n", "x.jsonl:1: Calculator ID 999 is not a benchmark calculator"),
    (json.dumps({"Row Number": 1, "Calculator ID": "4", "LLM Answer": "3"}) + "\n",
     "x.jsonl:1: missing field(s) 'Ground Truth Answer'"),
    (json.dumps({"Row Number": 1, "Calculator ID": "4", "Ground Truth Answer": "3"}) + "\n",
     "x.jsonl:1: no model answer"),
    (json.dumps(line(1, 4, "3", "3")) + "\n" + json.dumps(line(1, 4, "3", "2")) + "\n",
     "x.jsonl:2: Row Number 1 is already on line 1"),
    (json.dumps(line(1, 4, "3", "3", "Maybe")) + "\n", "x.jsonl:1: field 'Result' must be Correct or Incorrect"),
    (json.dumps(line(1, "four", "3", "3")) + "\n", "x.jsonl:1: field 'Calculator ID' must be a whole number"),
    (json.dumps(line(2000, 4, "3", "3")) + "\n", "x.jsonl:1: Row Number 2000 is outside MedCalc-Bench 2024"),
    ("\n", "x.jsonl: no rows"),
])
def test_bad_input_names_file_and_line(tmp_path, capsys, content, message):
    (tmp_path / "x.jsonl").write_text(content, encoding="utf-8")
    rc = main(["import", "medcalc-bench", str(tmp_path / "x.jsonl"), "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert rc == 1 and message in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()  # nothing written


def test_two_datasets_or_duplicate_rows_in_one_run_are_refused(tmp_path):
    a = write(tmp_path / "a.jsonl", [line(1, 4, "3", "3")])
    b = write(tmp_path / "b.jsonl", [line(2, 4, "3", "3", **{"Lower Limit": "3", "Upper Limit": "3"})])
    c = write(tmp_path / "c.jsonl", [line(1, 4, "3", "2")])
    with pytest.raises(ImportFailure, match="one run holds one dataset"):
        _merge(a, b)
    with pytest.raises(ImportFailure, match=r"c.jsonl:1: Row Number 1 is already on .*a.jsonl:1"):
        import_run("medcalc-bench", [a, c], tmp_path / "r2")
    with pytest.raises(ImportFailure, match="name its dataset with --dataset"):
        import_run("medcalc-bench", [b], tmp_path / "r3")
    with pytest.raises(ImportFailure, match="2024 layout"):
        import_run("medcalc-bench", [a], tmp_path / "r4", dataset="medcalc-bench-verified")
    assert not any((tmp_path / f"r{i}").exists() for i in (2, 3, 4))


def _merge(a: Path, b: Path) -> None:
    """a (2024 layout) and b (limits, named Verified) as one run: b's dataset from --dataset cannot apply to a."""
    from solver.importers.common import check_rows
    from solver.importers.run import read_sources

    sources = read_sources("medcalc-bench", [a]) + read_sources("medcalc-bench", [b], "medcalc-bench-verified")
    check_rows(sources)


def test_cli_several_files_one_run_each_and_merge(tmp_path, capsys):
    a = write(tmp_path / "OpenAI_gpt-4_direct_answer.jsonl", [line(1, 4, "3", "3")])
    b = write(tmp_path / "OpenAI_gpt-4_one_shot.jsonl", [line(2, 4, "3", "2", "Incorrect")])
    assert main(["import", "medcalc-bench", str(a), str(b), "--out", str(tmp_path / "runs")]) == 0
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["gpt-4-direct-answer", "gpt-4-one-shot"]
    assert main(["import", "medcalc-bench", str(a), str(b), "--merge", "--arm", "gpt4", "--out",
                 str(tmp_path / "merged")]) == 0
    assert [(r["row_number"], r["arm"]) for r in results(tmp_path / "merged")] == [(1, "gpt4"), (2, "gpt4")]
    # the same files again replace the run; a folder holding another run is refused
    assert main(["import", "medcalc-bench", str(a), "--out", str(tmp_path / "runs" / "gpt-4-direct-answer")]) == 0
    assert main(["import", "medcalc-bench", str(b), "--out", str(tmp_path / "runs" / "gpt-4-direct-answer")]) == 1
    assert "holds another run" in capsys.readouterr().err
    assert main(["import", "no-such-format", str(a), "--out", str(tmp_path / "z")]) == 1
    assert "unknown importer 'no-such-format'" in capsys.readouterr().err


def test_imported_run_works_with_score_stale_and_report(tmp_path, capsys):
    src = write(tmp_path / "m_direct_answer.jsonl", [line(1, 4, "3", "3"), line(2, 2, "25.238", "30", "Incorrect")])
    import_run("medcalc-bench", [src], tmp_path / "run")
    before = (tmp_path / "run" / "results.jsonl").read_text()
    assert main(["score", str(tmp_path / "run"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["changed"] == 0
    assert (tmp_path / "run" / "results.jsonl").read_text() == before
    # never stale after a text change (no text was shown) ...
    assert main(["stale", str(tmp_path / "run" / "results.jsonl"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    # ... but tied to the audit group the registry gave the calculator when the run was imported
    rows = results(tmp_path / "run")
    rows[0]["audit_group"] = "replaced"
    (tmp_path / "stale.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["stale", str(tmp_path / "stale.jsonl"), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(r["row_number"], r["why"]) for r in out] == [(1, "audit group replaced -> other")]
    assert main(["report", "tables", str(tmp_path / "run"), "--format", "json", "--draws", "10"]) == 0
    rep = json.loads(capsys.readouterr().out)["runs"][0]
    assert rep["dataset"] == "MedCalc-Bench 2024 test split, 1,047 rows" and rep["accuracy"] == 50.0


# ---------------------------------------------------------------------- inspect_ai


def test_inspect_ai_json_log_written_by_inspect_ai(tmp_path):
    # tests/solver/data/inspect_medcalc.json was written by inspect_ai 0.3.285's own classes (make_inspect_log.py)
    run = import_run("inspect-ai", [DATA / "inspect_medcalc.json"], tmp_path / "run", dataset="medcalc-bench-2024")
    rows = results(tmp_path / "run")
    assert (run.model, run.arm, run.differences) == ("gpt-4o-mini", "inspect-ai-medcalc-bench", [])
    assert [(r["row_number"], r["answer"], r["correct"]) for r in rows] == [
        (1, 25.9, True), (2, 4, True), (3, "09/23/2014", True), (4, [14, 2], False), (5, None, False)]
    assert rows[4]["outcome"] == "unreadable"  # the last reply holds no number
    text = (tmp_path / "run" / "results.jsonl").read_text() + (tmp_path / "run" / "manifest.json").read_text()
    assert "PLACEHOLDER PATIENT NOTE" not in text


def test_inspect_ai_eval_archive(tmp_path):
    log = json.loads((DATA / "inspect_medcalc.json").read_text())
    archive = tmp_path / "log.eval"  # the .eval layout: header.json and samples/<id>_epoch_<n>.json, deflated
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", json.dumps({k: v for k, v in log.items() if k != "samples"}))
        for s in log["samples"]:
            z.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
    import_run("inspect-ai", [archive], tmp_path / "run", dataset="medcalc-bench-2024")
    assert [r["correct"] for r in results(tmp_path / "run")] == [True, True, True, False, False]


def test_inspect_ai_zstd_eval_archive_written_by_inspect_ai(tmp_path):
    # inspect_medcalc.eval: inspect_ai 0.3.285's write_eval_log, format="eval" (zstd members, method 93)
    run = import_run("inspect-ai", [DATA / "inspect_medcalc.eval"], tmp_path / "run", dataset="medcalc-bench-2024")
    assert [(r["row_number"], r["answer"], r["correct"]) for r in results(tmp_path / "run")] == [
        (1, 25.9, True), (2, 4, True), (3, "09/23/2014", True), (4, [14, 2], False), (5, None, False)]
    assert run.differences == [] and run.model == "gpt-4o-mini"


@pytest.mark.parametrize("make,message", [
    (lambda p: p.write_text("{}"), "no 'eval' section"),
    (lambda p: p.write_text(json.dumps({"eval": {"dataset": {"name": "x"}}, "samples": []})), "holds no samples"),
    (lambda p: p.write_text(json.dumps({"eval": {"dataset": {"name": "x"}}, "samples": [{"target": "3"}]})),
     "metadata names no 'Row Number'"),
])
def test_inspect_ai_bad_logs(tmp_path, make, message):
    path = tmp_path / "log.json"
    make(path)
    with pytest.raises(ImportFailure, match=message):
        import_run("inspect-ai", [path], tmp_path / "run", dataset="medcalc-bench-2024")


def test_inspect_ai_log_must_say_its_dataset(tmp_path):
    with pytest.raises(ImportFailure, match="give --dataset"):
        import_run("inspect-ai", [DATA / "inspect_medcalc.json"], tmp_path / "run")


# ---------------------------------------------------------------------- lm-evaluation-harness

LM_EVAL = DATA / "lm_eval" / "openai__gpt-4o-mini" / "samples_medcalc_bench_2026-01-01T00-00-00.000000.jsonl"


def test_lm_eval_samples_written_by_lm_eval(tmp_path):
    # written by lm-eval 0.4.13's EvaluationTracker.save_results_samples (tests/solver/data/make_lm_eval_log.py)
    run = import_run("lm-eval", [LM_EVAL], tmp_path / "run", dataset="medcalc-bench-2024")
    rows = results(tmp_path / "run")
    assert (run.model, run.arm, run.differences) == ("gpt-4o-mini", "lm-eval-medcalc-bench", [])
    assert [(r["row_number"], r["answer"], r["correct"], r["source_result"]) for r in rows] == [
        (1, 25.9, True, "Correct"), (2, 4, True, "Correct"), (3, 120.0, False, "Incorrect")]
    assert rows[0]["reply"] == "CrCl is about 25.9 mL/min.\nAnswer: 25.9" and rows[0]["lower_limit"] == "23.976"
    text = (tmp_path / "run" / "results.jsonl").read_text() + (tmp_path / "run" / "manifest.json").read_text()
    assert "PLACEHOLDER PATIENT NOTE" not in text and "Compute it." not in text


def test_lm_eval_samples_bad_input(tmp_path):
    with pytest.raises(ImportFailure, match="give --dataset"):
        import_run("lm-eval", [LM_EVAL], tmp_path / "run")
    bad = write(tmp_path / "samples_t_2026-01-01T00-00-00.jsonl", [{"doc_id": 0, "doc": {"Row Number": 1}}])
    with pytest.raises(ImportFailure, match=r":1: doc has no 'Calculator ID'"):
        import_run("lm-eval", [bad], tmp_path / "run", dataset="medcalc-bench-2024")
    two = json.loads(LM_EVAL.read_text().splitlines()[0])
    twice = write(tmp_path / "samples_t_2026-01-02T00-00-00.jsonl", [two, dict(two, filter="flexible"), two])
    with pytest.raises(ImportFailure, match=r":3: Row Number 1 is already on line 1"):
        import_run("lm-eval", [twice], tmp_path / "run", dataset="medcalc-bench-2024")


@pytest.mark.parametrize("name", ["...jsonl", "..jsonl", ".hidden.jsonl", "a\x01b.jsonl", "\u202egpt.jsonl"])
def test_several_files_never_name_a_folder_outside_out(tmp_path, capsys, name):
    """A run folder is named from each file's stem: `...jsonl` has the stem `..`, which named the parent of --out."""
    src = tmp_path / "in"
    src.mkdir()
    a = write(src / name, [line(1, 4, "3", "3")])
    b = write(src / "OpenAI_gpt-4_one_shot.jsonl", [line(2, 4, "3", "2", "Incorrect")])
    out = tmp_path / "deep" / "runs"
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert main(["import", "medcalc-bench", str(a), str(b), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "cannot name a run folder inside --out" in err and "Traceback" not in err, err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing written anywhere


def test_a_file_named_dots_imported_alone_reports_no_model_named_dots(tmp_path, capsys):
    a = write(tmp_path / "...jsonl", [line(1, 4, "3", "3")])
    assert main(["import", "medcalc-bench", str(a), "--out", str(tmp_path / "run"), "--format", "json"]) == 0
    (summary,) = json.loads(capsys.readouterr().out)
    assert summary["model"] is None and summary["dir"] == str(tmp_path / "run")
    assert [r["model"] for r in results(tmp_path / "run")] == [None]


def test_run_folder_names_that_collide_are_refused(tmp_path, capsys):
    a = write(tmp_path / "OpenAI_gpt-4_direct_answer.jsonl", [line(1, 4, "3", "3")])
    sub = tmp_path / "other"
    sub.mkdir()
    b = write(sub / "openai_GPT-4_direct-answer.jsonl", [line(2, 4, "3", "2", "Incorrect")])
    assert main(["import", "medcalc-bench", str(a), str(b), "--out", str(tmp_path / "runs")]) == 1
    assert "would share the run folder 'gpt-4-direct-answer'" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_names_from_logs_are_safe_labels():
    from solver.importers.common import safe_label, safe_name

    assert [safe_name(x) for x in ("..", ".", "...", "", "a/b", "a\\b", ".x", "a\nb", "a\x00b", "gpt-4")] == \
        [None] * 9 + ["gpt-4"]
    assert safe_label("meta-llama/Llama-3") == "meta-llama/Llama-3" and safe_label("..") is None
