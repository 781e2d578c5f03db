"""Engines: the OpenAI-compatible client's retries and errors, vLLM batching (stand-in), replay checks."""
from __future__ import annotations

import asyncio
import importlib.util
import itertools
import json
import socket
import threading
import time
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from solver.data import ONE_SHOT
from solver.engines import ChatRequest, EngineError, EngineOptions, build_engine
from solver.runner import RunConfig, run
from solver.runner import results as results_mod
from solver.runner.loopback import Loopback, Scripted
from tests.solver.evalkit import N_SUBSET, by_key, oracle_reply, program_for, read_rows, row_for, subset_csv

REQ = ChatRequest(messages=[{"role": "user", "content": "hi"}], temperature=0.0, max_tokens=5, key=(1, 42, 0), seed=42)


@pytest.fixture(autouse=True)
def no_fsync(monkeypatch):
    monkeypatch.setattr(results_mod.os, "fsync", lambda fd: None)


def chat_once(url, req=REQ, **kw):
    async def go():
        eng = build_engine("openai", EngineOptions(model="m", base_url=url, retries=kw.pop("retries", 3),
                                                   backoff_s=0.01, **kw))
        try:
            return await eng.chat(req), eng.describe()
        finally:
            await eng.aclose()
    return asyncio.run(go())


def sequence(*replies):
    it = iter(replies)
    lock = threading.Lock()

    def responder(request):
        with lock:
            return next(it)
    return responder


def test_retries_on_500_429_and_malformed_json():
    with Loopback(sequence(Scripted(status=500), Scripted(status=429), Scripted(raw=b"{not json"),
                           Scripted(raw=b'{"choices": []}'), "Answer: 5")) as server:
        reply, info = chat_once(server.url, retries=4)
    assert reply.text == "Answer: 5" and info["retried"] == 4 and len(server.requests) == 5


def test_gives_up_after_retries():
    with Loopback(lambda r: Scripted(status=503)) as server:
        with pytest.raises(EngineError, match=r"gave up after 3 attempts: .*HTTP 503"):
            chat_once(server.url, retries=2)
    assert len(server.requests) == 3


def test_other_4xx_stops_at_once_with_the_servers_message():
    with Loopback(lambda r: Scripted(status=404)) as server:
        with pytest.raises(EngineError, match=r"HTTP 404: .*scripted 404"):
            chat_once(server.url)
    assert len(server.requests) == 1


def test_timeout_is_retried_then_reported():
    with Loopback(lambda r: Scripted(text="late", delay=1.0)) as server:
        with pytest.raises(EngineError, match="Timeout"):
            chat_once(server.url, retries=1, timeout_s=0.2)


def test_connection_refused_is_retried_then_reported():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(EngineError, match="ConnectError"):
        chat_once(f"http://127.0.0.1:{port}/v1", retries=1)


def test_empty_and_null_replies_are_answers_not_errors():
    with Loopback(sequence(Scripted(text=None), Scripted(text=""))) as server:
        assert chat_once(server.url)[0].text == "" and chat_once(server.url)[0].text == ""


def test_seed_is_sent_only_when_asked():
    with Loopback(lambda r: "ok") as server:
        _, info = chat_once(server.url)
        assert "seed" not in server.requests[-1] and info["seed_reached_server"] is False
        _, info = chat_once(server.url, send_seed=True)
        assert server.requests[-1]["seed"] == 42 and info["seed_reached_server"] is True


@pytest.mark.parametrize("slow_programs", [False, True], ids=["quiet machine", "loaded machine"])
def test_empty_reply_rows_and_a_stopped_run_resume(tmp_path, monkeypatch, slow_programs):
    if slow_programs:  # as on a loaded machine: every program takes a while, so replies outpace the executor
        from solver.runner import core

        real = core.ExecutorPool.run

        async def slow(self, source):
            await asyncio.sleep(0.5)
            return await real(self, source)
        monkeypatch.setattr(core.ExecutorPool, "run", slow)
    data = subset_csv(tmp_path / "s.csv")
    calls = itertools.count()

    def saved_rows() -> int:
        try:
            text = (tmp_path / "r" / "results.jsonl").read_text(encoding="utf-8")
        except FileNotFoundError:
            return 0
        return text.count("\n")

    def flaky(request):  # empty replies for one case; the server dies after six requests
        n = next(calls)
        if n == 6:  # ... once the six answered cases are saved (their programs may still be running under load)
            deadline = time.monotonic() + 120
            while saved_rows() < 6 and time.monotonic() < deadline:
                time.sleep(0.02)
        if n >= 6:
            return Scripted(status=500)
        return "" if "def solve" in request["messages"][0]["content"] and n == 0 else oracle_reply(request)

    cfg = dict(arm="program-solve", data=data, seeds=[42], engine="openai", progress=False, executor_workers=1)
    with Loopback(flaky) as server:
        opts = EngineOptions(model="m", base_url=server.url, concurrency=1, retries=1, backoff_s=0.01)
        s = run(RunConfig(out=tmp_path / "r", engine_options=opts, **cfg))
    assert s.stopped and "HTTP 500" in s.stopped
    rows = read_rows(tmp_path / "r")
    # six replies came back and the server died only after all six were saved: the same six rows every time
    assert len(rows) == 6 and sum(r["outcome"] == "no_program" for r in rows) == 1
    empty = next(r for r in rows if r["outcome"] == "no_program")
    assert empty["reply"] == "" and empty["correct"] is False and empty["table8"] == "no program"
    man = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert man["status"] == "stopped" and man["finished_at"] is None
    with Loopback(oracle_reply) as server:
        opts = EngineOptions(model="m", base_url=server.url, concurrency=4, retries=1, backoff_s=0.01)
        s = run(RunConfig(out=tmp_path / "r", engine_options=opts, **cfg))
    assert s.stopped is None and s.done_before == len(rows) and len(read_rows(tmp_path / "r")) == N_SUBSET


def test_cli_reports_a_stopped_run(tmp_path, capsys):
    from cli.main import main

    with Loopback(lambda r: Scripted(status=401)) as server:
        rc = main(["run", "--arm", "open-book", "--engine", "openai", "--model", "m", "--base-url", server.url,
                   "--data", str(ONE_SHOT), "--seeds", "42", "--out", str(tmp_path / "o"), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 1 and err.startswith("error: ") and "HTTP 401" in err and "rerun the same command" in err
    assert "Traceback" not in err


# ------------------------------------------------------------------------------------------------ vllm


@dataclass
class FakeSamplingParams:  # vllm.SamplingParams' keyword interface
    temperature: float = 1.0
    max_tokens: int = 16
    seed: int | None = None


class FakeLLM:
    """Stand-in with vllm.LLM.chat's signature and RequestOutput's shape (outputs[0].text/finish_reason)."""

    def __init__(self, reply):
        self.reply = reply
        self.calls = []

    def chat(self, messages, sampling_params=None, use_tqdm=True, **kwargs):
        assert isinstance(messages, list) and all(isinstance(m, list) for m in messages)
        assert isinstance(sampling_params, list) and len(sampling_params) == len(messages)
        self.calls.append((messages, sampling_params))
        return [SimpleNamespace(prompt=None, outputs=[SimpleNamespace(text=self.reply({"messages": m}),
                                                                      finish_reason="stop", token_ids=[])])
                for m in messages]


def test_vllm_every_first_turn_in_one_batched_call(tmp_path):
    llm = FakeLLM(oracle_reply)
    opts = EngineOptions(model="Qwen/Qwen2.5-7B-Instruct", extra={"llm": llm, "sampling_params": FakeSamplingParams})
    s = run(RunConfig(arm="program-solve", data=subset_csv(tmp_path / "s.csv"), out=tmp_path / "v", seeds=[42, 43],
                      engine="vllm", engine_options=opts, progress=False, executor_workers=1))
    assert s.correct == 2 * N_SUBSET
    assert len(llm.calls) == 1 and len(llm.calls[0][0]) == 2 * N_SUBSET
    assert {(p.temperature, p.max_tokens, p.seed) for p in llm.calls[0][1]} == {(0.0, 2048, None)}
    man = json.loads((tmp_path / "v" / "manifest.json").read_text())
    assert man["engine_info"]["batches"] == [2 * N_SUBSET] and man["engine_info"]["seed_reached_server"] is False


def test_vllm_repair_turns_form_a_second_batch(tmp_path):
    def reply(req):
        if len(req["messages"]) == 1:
            return "I cannot write code."  # no valid program: every case takes a corrective turn
        assert req["messages"][1]["content"] == "I cannot write code."
        assert "The executor reported:\nrejected: " in req["messages"][-1]["content"]  # its own error string
        return program_for(row_for(req))

    llm = FakeLLM(reply)
    opts = EngineOptions(model="m", extra={"llm": llm, "sampling_params": FakeSamplingParams})
    s = run(RunConfig(arm="blind-repair", data=subset_csv(tmp_path / "s.csv"), out=tmp_path / "v", seeds=[42],
                      engine="vllm", engine_options=opts, progress=False, executor_workers=1))
    assert s.correct == N_SUBSET and [len(c[0]) for c in llm.calls] == [N_SUBSET, N_SUBSET]
    rows = read_rows(tmp_path / "v")
    assert all(len(r["calls"]) == 2 and r["calls"][0]["executor"] == "rejected" for r in rows)


def test_vllm_missing_package_is_a_clear_error(monkeypatch):
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here")
    with pytest.raises(EngineError, match=r"pip install -e '\.\[vllm\]'"):
        build_engine("vllm", EngineOptions(model="m"))


def _gpu() -> bool:
    if importlib.util.find_spec("vllm") is None or importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu(), reason="needs vllm and a GPU")
def test_vllm_real_model_runs_program_solve(tmp_path):
    """Where vllm and a GPU exist: a small served model through the real engine, 3 cases."""
    import os

    model = os.environ.get("FORMULA_VLLM_MODEL", "Qwen/Qwen2.5-0.5B-Instruct")
    opts = EngineOptions(model=model, extra={"llm_kwargs": {"max_model_len": 8192, "gpu_memory_utilization": 0.5}})
    s = run(RunConfig(arm="program-solve", data=subset_csv(tmp_path / "s.csv"), out=tmp_path / "g", seeds=[42],
                      engine="vllm", engine_options=opts, progress=False, limit=3))
    assert s.stopped is None and s.rows == 3
    assert all(r["reply"] for r in read_rows(tmp_path / "g"))


# ------------------------------------------------------------------------------------------------ replay


def test_replay_refuses_a_changed_prompt(tmp_path):
    data = subset_csv(tmp_path / "s.csv")
    with Loopback(oracle_reply) as server:
        run(RunConfig(arm="open-book", data=data, out=tmp_path / "a", seeds=[42], engine="openai", progress=False,
                      engine_options=EngineOptions(model="m", base_url=server.url)))
    rows = read_rows(tmp_path / "a")
    rows[0]["calls"][0]["prompt_sha256"] = "sha256:" + "0" * 64  # as if the arm's prompt had changed since
    (tmp_path / "a" / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = run(RunConfig(arm="open-book", data=data, out=tmp_path / "b", seeds=[42], engine="replay", progress=False,
                      engine_options=EngineOptions(model="m", replay_from=tmp_path / "a")))
    assert s.stopped and "prompt differs" in s.stopped
    s = run(RunConfig(arm="open-book", data=data, out=tmp_path / "c", seeds=[43], engine="replay", progress=False,
                      engine_options=EngineOptions(model="m", replay_from=tmp_path / "a")))
    assert s.stopped and "no stored reply" in s.stopped
    assert len(by_key(read_rows(tmp_path / "c"))) == 0
