"""`formula import` of logs the tools write themselves: an inspect_ai run (its `mockllm` model, default
settings: a zstd `.eval` archive) and an lm-eval run (its `dummy` model, `--log_samples`), each made here
by the installed tool in a child process; and the `.eval` reader's bounds (memory, damaged archives)."""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import subprocess
import sys
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

from solver.importers import ImportFailure
from solver.importers.run import import_run
from tests.solver.importers_helpers import results, zstd_zip

HERE = Path(__file__).resolve().parent
DATASET = "medcalc-bench-2024"


def _sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _offline(tmp_path: Path) -> dict[str, str]:
    """The child's environment: no network, caches inside tmp_path."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"),
            "INSPECT_LOG_DIR": str(tmp_path / "unused"), "XDG_DATA_HOME": str(tmp_path / "xdg")}


@pytest.fixture(scope="module")
def inspect_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("inspect")
    done = subprocess.run([sys.executable, str(HERE / "inspect_mockllm_task.py"), str(tmp / "logs")],
                          capture_output=True, text=True, timeout=300, env=_offline(tmp), cwd=tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    [log] = (tmp / "logs").glob("*.eval")
    return log


def test_inspect_ai_eval_log_of_a_real_run(inspect_log, tmp_path):
    with zipfile.ZipFile(inspect_log) as z:  # what makes this log the one users have: zstd members
        assert {i.compress_type for i in z.infolist() if i.filename.startswith("samples/")} == {93}
    run = import_run("inspect-ai", [inspect_log], tmp_path / "run", dataset=DATASET)
    rows = results(tmp_path / "run")
    # row 1: 25.9 lies inside 25.238 -/+ 5 % (23.976 to 26.500); inspect_ai's exact match() said Incorrect
    assert [(r["row_number"], r["calculator"], r["answer"], r["correct"], r["source_result"]) for r in rows] == [
        (1, "creatinine-clearance-cockcroft-gault", 25.9, True, "Incorrect"), (2, "cha2ds2-vasc", 4, True, "Correct")]
    assert [(d.row_number, d.ours, d.theirs) for d in run.differences] == [(1, True, False)]
    assert rows[1]["reply"] == "Two points for age.\nAnswer: 4" and rows[1]["note_id"] == "pmc-2"
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    [src] = manifest["source"]["files"]
    assert src["sha256"] == _sha(inspect_log) and src["rows"] == 2
    assert (src["inspect_ai"], src["task"], src["status"]) == (version("inspect_ai"), "medcalc_bench", "success")
    assert src["model_id"] == "mockllm/model" and src["eval_id"] and src["created"]
    assert manifest["model"] == "model" and manifest["dataset"]["kind"] == "medcalc-bench-2024-test"  # mockllm/model
    text = (tmp_path / "run" / "results.jsonl").read_text() + (tmp_path / "run" / "manifest.json").read_text()
    assert "PLACEHOLDER PATIENT NOTE" not in text


def test_lm_eval_log_samples_of_a_real_run(tmp_path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    note = "PLACEHOLDER PATIENT NOTE 3b9a: must never reach the imported run."
    docs = [{"Row Number": 1, "Calculator ID": "2", "Note ID": "pmc-1", "Ground Truth Answer": "25.238",
             "Lower Limit": "23.976", "Upper Limit": "26.5", "gold": "25.238", "note": note, "question": "What is the CrCl?"},
            {"Row Number": 2, "Calculator ID": "4", "Note ID": "pmc-2", "Ground Truth Answer": "4",
             "Lower Limit": "4", "Upper Limit": "4", "gold": "4", "note": note, "question": "What is the CHA2DS2-VASc score?"}]
    (tasks / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tasks / "medcalc_mock.yaml").write_text(
        f"task: medcalc_mock\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {tasks / 'docs.jsonl'}\n"
        "test_split: test\noutput_type: generate_until\n"
        'doc_to_text: "{{note}}\\nQuestion: {{question}}\\nAnswer:"\n'
        'doc_to_target: "{{gold}}"\n'
        'generation_kwargs:\n  until: ["\\n\\n"]\nmetric_list:\n  - metric: exact_match\n')
    done = subprocess.run([sys.executable, "-m", "lm_eval", "--model", "dummy", "--tasks", "medcalc_mock",
                           "--include_path", str(tasks), "--log_samples", "--output_path", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300, env=_offline(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    [log] = (tmp_path / "out").glob("*/samples_medcalc_mock_*.jsonl")
    run = import_run("lm-eval", [log], tmp_path / "run", dataset=DATASET)
    rows = results(tmp_path / "run")
    # lm-eval's dummy model answers "lol" to every request: nothing to read, wrong by both scorers
    assert [(r["row_number"], r["reply"], r["outcome"], r["correct"], r["source_result"]) for r in rows] == [
        (1, "lol", "unreadable", False, "Incorrect"), (2, "lol", "unreadable", False, "Incorrect")]
    assert (rows[0]["ground_truth"], rows[0]["lower_limit"], rows[0]["upper_limit"]) == (25.238, "23.976", "26.5")
    assert run.differences == [] and run.arm == "lm-eval-medcalc-mock"
    [src] = json.loads((tmp_path / "run" / "manifest.json").read_text())["source"]["files"]
    assert src["sha256"] == _sha(log) and (src["lm_eval_version"], src["model_source"]) == (version("lm_eval"), "dummy")
    assert src["results_sha256"] == _sha(next(log.parent.glob("results_*.json")))
    assert run.model == log.parent.name  # lm-eval's own name for the model, as it named the folder
    text = (tmp_path / "run" / "results.jsonl").read_text() + (tmp_path / "run" / "manifest.json").read_text()
    assert "PLACEHOLDER PATIENT NOTE" not in text


# ---------------------------------------------------------------------- the .eval reader's bounds

HEADER = {"version": 2, "status": "success", "eval": {"task": "medcalc_bench", "model": "mockllm/model",
                                                      "dataset": {"name": "MedCalc-Bench"}}}


def _sample(i: int, padding: str = "") -> bytes:
    """One sample as inspect_ai writes it; `padding` stands for its events (most of a real sample's bytes)."""
    return json.dumps({"id": i, "epoch": 1, "target": "4", "metadata": {"Row Number": i, "Calculator ID": "4"},
                       "messages": [{"role": "assistant", "content": "Answer: 4"}],
                       "output": {"completion": "Answer: 4"}, "scores": {"match": {"value": "C"}},
                       "events": [{"event": "model", "note": padding}]}).encode()


LARGE_CHILD = """
import json, resource, sys, tracemalloc
from pathlib import Path
from solver.importers import IMPORTERS
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
src = IMPORTERS.get("inspect-ai").read(Path(sys.argv[1]), dataset="medcalc-bench-2024")
peak = tracemalloc.get_traced_memory()[1]
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"rows": len(src.rows), "traced_peak": peak, "rss_growth": (after - before) * 1024}))
"""


def test_a_1_gib_eval_log_is_read_in_under_200_mb(tmp_path):
    n, size = 1024, 1 << 20  # 1,024 samples of 1 MiB each: 1 GiB of JSON once inflated
    chunk = hashlib.sha256(b"events").hexdigest() * 16  # 1 KiB of text, repeated (so the archive stays small)
    padding = chunk * (size // len(chunk))
    members = itertools.chain([("header.json", json.dumps(HEADER).encode())],  # made one at a time, here too
                              ((f"samples/{i}_epoch_1.json", _sample(i, padding)) for i in range(1, n + 1)))
    archive = zstd_zip(tmp_path / "big.eval", members)
    with zipfile.ZipFile(archive) as z:
        inflated = sum(i.file_size for i in z.infolist())
    assert inflated > 1 << 30
    done = subprocess.run([sys.executable, "-c", LARGE_CHILD, str(archive)], capture_output=True, text=True,
                          timeout=600, cwd=HERE.parent.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout)
    assert got["rows"] == n
    assert got["traced_peak"] < 200e6 and got["rss_growth"] < 200e6, got


@pytest.mark.parametrize("lie,message", [
    ({"declare": {"samples/1_epoch_1.json": 10}}, "more or fewer bytes than the archive declares"),
    ({"crc": {"samples/1_epoch_1.json": 12345}}, "CRC-32 check failed"),
    ({"declare": {"samples/1_epoch_1.json": 65 << 20}}, "over the 67,108,864 a member may hold"),
])
def test_a_damaged_or_inflating_eval_log_is_refused(tmp_path, lie, message):
    archive = zstd_zip(tmp_path / "bad.eval", [("header.json", json.dumps(HEADER).encode()),
                                               ("samples/1_epoch_1.json", _sample(1))], **lie)
    with pytest.raises(ImportFailure, match=message):
        import_run("inspect-ai", [archive], tmp_path / "run", dataset=DATASET)
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_an_eval_log_still_being_written_is_refused_with_why(tmp_path):
    archive = zstd_zip(tmp_path / "open.eval", [("_journal/start.json", b"{}"), ("samples/1_epoch_1.json", _sample(1))])
    with pytest.raises(ImportFailure, match="no header.json: the evaluation has not finished"):
        import_run("inspect-ai", [archive], tmp_path / "run", dataset=DATASET)


def test_a_sample_that_errored_is_scored_as_no_answer_with_a_warning(tmp_path):
    errored = json.loads(_sample(2))
    errored.update(output={"completion": ""}, messages=[], scores={}, error={"message": "ConnectionError(...)"})
    archive = zstd_zip(tmp_path / "err.eval", [("header.json", json.dumps(dict(HEADER, status="error")).encode()),
                                               ("samples/1_epoch_1.json", _sample(1)),
                                               ("samples/2_epoch_1.json", json.dumps(errored).encode())])
    run = import_run("inspect-ai", [archive], tmp_path / "run", dataset=DATASET)
    assert [(r["row_number"], r["outcome"], r["correct"]) for r in results(tmp_path / "run")] == [
        (1, "answered", True), (2, "no_answer", False)]
    assert "status is 'error'" in run.warnings[0] and "ended in an error (ConnectionError(...))" in run.warnings[1]
