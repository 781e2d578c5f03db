"""The runner end to end: every arm against a loopback OpenAI-compatible server and through replay,
the no-model arms on the shipped cases, resume after SIGKILL, atomic rows, refused settings."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from registry.loader import get_registry
from solver.data import ONE_SHOT, REFERENCE_CASES
from solver.engines import EngineOptions
from solver.runner import RunConfig, RunError, run
from solver.runner import results as results_mod
from solver.runner.loopback import Loopback
from tests.helpers import SHIPPED_ROOT
from tests.solver.evalkit import ROWS, SUBSET_IDS, by_key, oracle_reply, read_rows, subset_csv

MODEL_ARMS = ["note-only", "note-only-gold", "page-without-formula", "open-book", "extract-solve", "program-solve",
              "program-solve-syntax", "blind-program-solve", "blind-vote", "blind-repair", "blind-repair-vote",
              "formulate-solve"]
N = len(SUBSET_IDS)
DATE_ROWS = sum(1 for r in ROWS if r.output_type == "date" and r.calculator_id in SUBSET_IDS)  # formulate-solve abstains on these before any call  # noqa: E501
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_fsync(monkeypatch):
    """Speed: rows are still one os.write each; durability is tested separately."""
    monkeypatch.setattr(results_mod.os, "fsync", lambda fd: None)


def openai_cfg(arm, server, out, **kw):
    opts = EngineOptions(model=kw.pop("model", "test-model"), base_url=server.url, concurrency=kw.pop("concurrency", 16),
                         retries=kw.pop("retries", 2), backoff_s=0.01, timeout_s=kw.pop("timeout_s", 30.0))
    return RunConfig(arm=arm, data=kw.pop("data", ONE_SHOT), out=out, seeds=kw.pop("seeds", [42]), engine="openai",
                     engine_options=opts, progress=False, executor_workers=kw.pop("executor_workers", 2), **kw)


@pytest.mark.parametrize("arm", MODEL_ARMS)
def test_arm_end_to_end_openai_then_replay(arm, tmp_path, no_fsync):
    data = subset_csv(tmp_path / "subset.csv")
    with Loopback(oracle_reply) as server:
        s = run(openai_cfg(arm, server, tmp_path / "live", data=data))
    assert s.stopped is None and s.rows == N
    rows = read_rows(tmp_path / "live")
    assert len(rows) == N and len(by_key(rows)) == N
    expected = N - DATE_ROWS if arm == "formulate-solve" else N
    assert sum(r["correct"] for r in rows) == expected, [(r["calculator_id"], r["answer"], r["error"]) for r in rows
                                                         if not r["correct"]]
    for r in rows:  # the pinned fields, and no gold value in any prompt the server saw
        assert {"row_number", "calculator_id", "seed", "arm", "model", "prompt_sha256", "text_version", "text_sha256",
                "reply", "program", "outcome", "answer", "correct", "ground_truth", "lower_limit",
                "upper_limit"} <= set(r)
        assert r["arm"] == arm and r["model"] == "test-model"
    man = json.loads((tmp_path / "live" / "manifest.json").read_text())
    assert man["status"] == "complete" and man["rows_done"] == N and man["correct"] == expected
    assert man["engine_info"]["seed_sent"] is False and man["engine_info"]["seed_reached_server"] is False
    assert all(req.get("seed") is None and set(req) == {"model", "messages", "temperature", "max_tokens"}
               for req in server.requests)

    replay = RunConfig(arm=arm, data=data, out=tmp_path / "replay", seeds=[42], engine="replay",
                       engine_options=EngineOptions(model="test-model", replay_from=tmp_path / "live"),
                       progress=False, executor_workers=2)
    assert run(replay).stopped is None
    again = by_key(read_rows(tmp_path / "replay"))
    for key, r in by_key(rows).items():
        a = again[key]
        assert (a["reply"], a["answer"], a["correct"], a["outcome"], a["prompt_sha256"]) == \
               (r["reply"], r["answer"], r["correct"], r["outcome"], r["prompt_sha256"])


def test_no_model_arms_on_the_shipped_cases(tmp_path, no_fsync):
    s = run(RunConfig(arm="gold-solve", data=REFERENCE_CASES, out=tmp_path / "g", seeds=[42], progress=False))
    assert (s.rows, s.correct) == (2200, 2200)  # the library reproduces the benchmark's reference exactly
    s = run(RunConfig(arm="gold-solve", data=ONE_SHOT, out=tmp_path / "g1", seeds=[42], progress=False))
    assert (s.rows, s.correct) == (55, 55)
    reg = get_registry()
    linked = {c.medcalc_id: r.successor for c in reg.calculators.values() for r in c.replacements
              if r.kind == "replaced_by" and r.successor in reg.calculators and c.medcalc_id}
    assert linked, "the registry links at least one successor"
    for arm in ("gold-solve-published", "gold-solve-successor"):
        run(RunConfig(arm=arm, data=REFERENCE_CASES, out=tmp_path / arm, seeds=[42], progress=False, limit=400))
    succ = read_rows(tmp_path / "gold-solve-successor")
    pub = by_key(read_rows(tmp_path / "gold-solve-published"))
    for r in succ:
        if r["calculator_id"] in linked:
            assert r["successor"] == linked[r["calculator_id"]] == r["text_slug"] and r["variant"] == "published"
        else:
            assert "successor" not in r and r["answer"] == pub[(r["row_number"], 42)]["answer"]
    assert any(r["calculator_id"] in linked for r in succ)


def test_engine_needed_and_refused(tmp_path):
    with pytest.raises(RunError, match="needs a model"):
        run(RunConfig(arm="program-solve", data=ONE_SHOT, out=tmp_path / "a", progress=False))
    with pytest.raises(RunError, match="runs without a model"):
        run(RunConfig(arm="gold-solve", data=ONE_SHOT, out=tmp_path / "b", engine="openai", progress=False))
    with pytest.raises(RunError, match="reference cases have none"):
        run(RunConfig(arm="open-book", data=REFERENCE_CASES, out=tmp_path / "c", engine="replay",
                      engine_options=EngineOptions(replay_from=tmp_path), progress=False))
    assert not (tmp_path / "a").exists() and not (tmp_path / "c").exists()


def test_other_settings_in_the_same_folder_refused(tmp_path, no_fsync):
    out = tmp_path / "run"
    run(RunConfig(arm="gold-solve", data=ONE_SHOT, out=out, seeds=[42], progress=False, limit=5))
    before = (out / "results.jsonl").read_bytes()
    with pytest.raises(RunError, match="seeds"):
        run(RunConfig(arm="gold-solve", data=ONE_SHOT, out=out, seeds=[42, 43], progress=False, limit=5))
    with pytest.raises(RunError, match="arm"):
        run(RunConfig(arm="gold-solve-published", data=ONE_SHOT, out=out, seeds=[42], progress=False, limit=5))
    assert (out / "results.jsonl").read_bytes() == before
    s = run(RunConfig(arm="gold-solve", data=ONE_SHOT, out=out, seeds=[42], progress=False, limit=5))
    assert (s.done_before, s.rows) == (5, 5) and (out / "results.jsonl").read_bytes() == before  # resumed: nothing new


def test_rows_are_single_writes_and_torn_tail_is_rerun(tmp_path, monkeypatch):
    writes = []
    real = os.write
    monkeypatch.setattr(results_mod.os, "write", lambda fd, data: writes.append(data) or real(fd, data))
    out = tmp_path / "run"
    run(RunConfig(arm="gold-solve", data=ONE_SHOT, out=out, seeds=[42], progress=False, limit=6))
    assert len(writes) == 6 and all(w.endswith(b"\n") and w.count(b"\n") == 1 for w in writes)
    full = (out / "results.jsonl").read_bytes()
    lines = full.splitlines(keepends=True)
    (out / "results.jsonl").write_bytes(b"".join(lines[:4]) + lines[4][:37])  # a crash mid-line
    s = run(RunConfig(arm="gold-solve", data=ONE_SHOT, out=out, seeds=[42], progress=False, limit=6))
    assert s.torn_bytes == 37 and s.done_before == 4
    assert by_key(read_rows(out)) == by_key([json.loads(x) for x in lines]) and len(read_rows(out)) == 6


def test_folder_lock(tmp_path):
    from filelock import FileLock

    out = tmp_path / "run"
    out.mkdir()
    with FileLock(str(out / ".lock")):
        with pytest.raises(RunError, match="another run is writing"):
            run(RunConfig(arm="gold-solve", data=ONE_SHOT, out=out, seeds=[42], progress=False, limit=2))


def _cli(*args):
    return [sys.executable, "-m", "cli.main", "run", *args]


def test_resume_after_sigkill_equals_uninterrupted_run(tmp_path):
    data = subset_csv(tmp_path / "subset.csv")
    with Loopback(oracle_reply, delay=0.05) as server:
        killed = tmp_path / "killed"
        args = ["--arm", "program-solve", "--engine", "openai", "--model", "m", "--base-url", server.url,
                "--data", str(data), "--seeds", "42", "43", "--concurrency", "1", "--workers", "1", "--no-progress"]
        proc = subprocess.Popen(_cli(*args, "--out", str(killed)), cwd=REPO, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                p = killed / "results.jsonl"
                if p.exists() and p.read_bytes().count(b"\n") >= 5:
                    break
                time.sleep(0.01)
            os.killpg(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
        partial = read_rows(killed)
        assert 5 <= len(partial) < 2 * N, len(partial)
        s = run(openai_cfg("program-solve", server, killed, data=data, seeds=[42, 43], concurrency=1, model="m",
                           executor_workers=1))  # the same settings: resumes
        assert s.done_before == len(partial) and s.stopped is None
        run(openai_cfg("program-solve", server, tmp_path / "whole", data=data, seeds=[42, 43], concurrency=1, model="m",
                       executor_workers=1))
    a, b = read_rows(killed), read_rows(tmp_path / "whole")
    assert len(a) == len(b) == 2 * N and len(by_key(a)) == 2 * N
    assert by_key(a) == by_key(b)
    man = json.loads((killed / "manifest.json").read_text())
    assert man["status"] == "complete" and len(man["resumed_at"]) == 1


def test_manifest_records_what_produced_the_run(tmp_path, no_fsync):
    with Loopback(oracle_reply) as server:
        run(openai_cfg("open-book", server, tmp_path / "r", seeds=[42, 43]))
    man = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert man["format_version"] == 1 and man["arm"] == "open-book" and man["arm_version"] == "1.0.0"
    assert man["dataset"]["sha256"].startswith("sha256:") and man["dataset"]["rows"] == 55
    assert man["decoding"] == {"temperature": 0.0, "max_tokens": 4096, "samples": 1, "top_p": None}
    assert man["seeds"] == [42, 43] and man["model"] == "test-model" and man["engine"] == "openai"
    assert man["registry_lock_digest"] and set(man["templates"]) == {"open_book.j2", "_answer_line.j2"}
    assert len(man["formula_texts"]) == 55 and man["git"]["commit"] and man["started_at"] and man["finished_at"]
    assert man["packages"]["httpx"]
    catalogue = {t["slug"]: t for t in json.loads((SHIPPED_ROOT / "formulas/texts/index.json").read_text())["texts"]}
    assert all(catalogue[s]["sha256"] == t["sha256"] and catalogue[s]["version"] == t["version"]
               for s, t in man["formula_texts"].items())  # the texts the registry's catalogue lists
    rows = read_rows(tmp_path / "r")
    slug_text = {s: t["sha256"] for s, t in man["formula_texts"].items()}
    assert all(r["text_sha256"] == slug_text[r["text_slug"]] for r in rows)


@pytest.mark.parametrize("arm,reply,outcome,table8", [
    ("open-book", "The result is 42.", "no_answer", "unreadable"),
    ("open-book", "Answer: cannot tell", "unreadable", "unreadable"),
    ("open-book", "", "no_answer", "unreadable"),
    ("extract-solve", "no json here", "unreadable", "unreadable"),
    ("extract-solve", '```json\n{"unknown entity": 1}\n```', "no_answer", "raised"),
    ("formulate-solve", '{"variables": {"x": 1}, "missing": ["x"], "tree": "x"}', "no_answer", "raised"),
    ("program-solve", "```python\ndef solve():\n    return 1 / 0\n```", "raised", "raised"),
    ("program-solve", "```python\nimport os\ndef solve():\n    return 1\n```", "rejected", "rejected"),
    ("program-solve", "```python\nimport datetime\ndef solve():\n    return datetime.date(2020, 1, 1)\n```",
     "unreadable", "unreadable"),
    ("blind-vote", "no code at all", None, None),
])
def test_failure_outcomes(arm, reply, outcome, table8, tmp_path, no_fsync):
    data = subset_csv(tmp_path / "s.csv")
    with Loopback(lambda r: reply) as server:
        run(openai_cfg(arm, server, tmp_path / "o", data=data, limit=2))  # two decimal rows
    rows = read_rows(tmp_path / "o")
    assert len(rows) == 2 and not any(r["correct"] for r in rows)
    for r in rows:
        if outcome is not None:
            assert (r["outcome"], r["table8"]) == (outcome, table8), r["error"]
        assert r["answer"] is None
        if arm == "blind-vote":
            assert len(r["calls"]) == 5 and r["votes"] == [None] * 5
