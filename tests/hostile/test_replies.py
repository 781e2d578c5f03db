"""A model's reply is bounded in the calling process: an over-long reply is an outcome, decided by its
length in microseconds, never parsed, and stored small in results.jsonl."""
from __future__ import annotations

import hashlib
import json
import time
import tracemalloc
from pathlib import Path

import pytest

from solver.arms.base import find_json_object
from solver.engines import EngineOptions
from solver.executor import run_program
from solver.executor.extract import locate_blocks
from solver.executor.policy import MAX_REPLY_CHARS
from solver.replies import STORED_PREFIX_CHARS, replayed, stored
from solver.runner import RunConfig, run
from solver.runner import results as results_mod
from solver.runner.loopback import Loopback
from solver.scoring import read_answer
from tests.hostile.output_helpers import deadline
from tests.solver.evalkit import read_rows, subset_csv

MB = 1_000_000
# Replies that cost seconds (and hundreds of MB) to parse when nothing bounds them.
BOMBS = {
    "fences": ("```python\nx = 1\n```\n" * (MB // 18 + 1))[:MB],
    "open-fence": ("```\n" + "a\n" * MB)[:MB],
    "json-starts": ('{"' * MB)[:MB],
    "answer-spam": ("Answer: 1\n" * MB)[:MB],
}


def _cost(fn, *args):
    """(result, seconds, peak bytes): timed on its own, then run again under tracemalloc (which slows it)."""
    with deadline(5):
        t = time.perf_counter()
        result = fn(*args)
        elapsed = time.perf_counter() - t
        tracemalloc.start()
        try:
            fn(*args)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    return result, elapsed, peak


def test_the_cap_is_64_kib() -> None:
    assert MAX_REPLY_CHARS == 65_536


@pytest.mark.parametrize("name", list(BOMBS))
def test_a_1_mb_reply_is_read_in_milliseconds_with_bounded_memory(name: str) -> None:
    reply = BOMBS[name]
    for fn in (locate_blocks, find_json_object, lambda r: read_answer(r, "decimal")):
        result, elapsed, peak = _cost(fn, reply)
        assert elapsed < 0.05 and peak < 2_000_000, (name, elapsed, peak)
    assert read_answer(reply, "decimal") == ("unreadable", None)
    assert find_json_object(reply) is None and locate_blocks(reply) is None


def test_json_search_is_bounded_below_the_cap(monkeypatch) -> None:
    """Within the cap the work is bounded too: a reply of 60,000 object openers is not tried 60,000 times
    (counted in decode attempts, not seconds: a timing flakes on a loaded machine)."""
    from solver.arms.base import MAX_JSON_STARTS

    tries: list[int] = []
    real = json.JSONDecoder.raw_decode

    def counting(self, s, idx=0):
        tries.append(idx)
        return real(self, s, idx)

    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counting)
    counts = []
    for reply in ('{"' * 30_000, '{"a":' * 12_000, "{" * 60_000):
        tries.clear()
        with deadline(5):
            assert find_json_object(reply) is None
        counts.append(len(tries))
    assert max(counts) <= MAX_JSON_STARTS and max(counts) > 0, counts  # tried, but never once per opener
    assert find_json_object('noise {"a": 1} more') == {"a": 1}


def test_the_executor_refuses_an_over_long_reply_before_parsing() -> None:
    with deadline(10):
        run_program("def solve():\n    return 1\n")  # the executor's start-up is not what is timed
        t = time.perf_counter()
        out = run_program(BOMBS["fences"])
        elapsed = time.perf_counter() - t
    assert out.kind == "rejected" and f"over {MAX_REPLY_CHARS}" in out.detail and elapsed < 0.5


def test_stored_reply_is_small_and_names_the_original() -> None:
    reply = BOMBS["answer-spam"]
    s = stored(reply)
    assert len(s["reply"]) == STORED_PREFIX_CHARS and s["reply_chars"] == MB
    assert s["reply_sha256"] == "sha256:" + hashlib.sha256(reply.encode()).hexdigest()
    again = replayed(s)  # decided the same way as the original: by its length
    assert len(again) > MAX_REPLY_CHARS and read_answer(again, "decimal") == ("unreadable", None)
    assert stored("short") == {"reply": "short"}


@pytest.mark.parametrize("arm,outcome", [("open-book", "unreadable"), ("program-solve", "rejected"),
                                         ("extract-solve", "unreadable")])
def test_a_run_with_1_mb_replies_keeps_results_small(arm: str, outcome: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(results_mod.os, "fsync", lambda fd: None)
    data = subset_csv(tmp_path / "s.csv")
    reply = "Answer: 42\n```python\ndef solve():\n    return 42\n```\n" + '{"x": 1}' + "x" * MB
    t = time.perf_counter()
    with deadline(60), Loopback(lambda r: reply) as server:
        opts = EngineOptions(model="m", base_url=server.url, concurrency=2, retries=0, backoff_s=0.01, timeout_s=30.0)
        run(RunConfig(arm=arm, data=data, out=tmp_path / "o", seeds=[42], engine="openai", engine_options=opts,
                      progress=False, executor_workers=1, limit=2))
    assert time.perf_counter() - t < 20
    lines = (tmp_path / "o" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and all(len(line) < 20_000 for line in lines), [len(x) for x in lines]
    for r in read_rows(tmp_path / "o"):
        assert r["outcome"] == outcome and r["answer"] is None and not r["correct"]
        assert r["reply_chars"] == len(reply) and r["calls"][0]["reply_chars"] == len(reply)
        assert r["program"] is None
    replay = RunConfig(arm=arm, data=data, out=tmp_path / "r", seeds=[42], engine="replay", limit=2,
                       engine_options=EngineOptions(model="m", replay_from=tmp_path / "o"), progress=False,
                       executor_workers=1)
    run(replay)
    assert [r["outcome"] for r in read_rows(tmp_path / "r")] == [outcome, outcome]
    assert json.loads(lines[0])["reply_sha256"].startswith("sha256:")
