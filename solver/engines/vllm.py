"""Offline vLLM: the pending prompts of a run go to the model in one batched `LLM.chat` call.

Arms ask for turns one at a time; this engine collects them until no new turn has arrived for
`batch_window_s` (every first turn of every case, in practice) and hands the whole batch to vLLM,
which schedules it on the GPU. `vllm` is imported only when this engine is built (`pip install -e '.[vllm]'`).
"""
from __future__ import annotations

import asyncio
from importlib import metadata
from typing import Any

from solver.arms.base import ChatReply
from solver.engines import ENGINES, ChatRequest, EngineError, EngineOptions


@ENGINES.register("vllm")
class VllmEngine:
    name = "vllm"

    def __init__(self, options: EngineOptions, *, llm: Any = None, sampling_params: Any = None):
        if not options.model:
            raise EngineError("the vllm engine needs --model (a Hugging Face id or a local path)")
        llm = llm if llm is not None else options.extra.get("llm")  # a stand-in object, for tests
        sampling_params = sampling_params or options.extra.get("sampling_params")
        if llm is None:
            try:
                import vllm
            except ImportError:
                from registry.terminal import install_hint

                raise EngineError(f"the vllm engine needs vLLM: {install_hint('vllm')} (on a machine with a GPU)") from None
            kwargs = dict(options.extra.get("llm_kwargs", {}))
            if options.revision:
                kwargs["revision"] = options.revision
            llm = vllm.LLM(model=options.model, **kwargs)
            sampling_params = vllm.SamplingParams
        self.options = options
        self.llm = llm
        self.sampling_params = sampling_params
        self.window = float(options.extra.get("batch_window_s", 0.05))
        self._pending: list[tuple[ChatRequest, asyncio.Future]] = []
        self._flusher: asyncio.Task | None = None
        self.batches: list[int] = []
        self.seed_reached_server = False

    def describe(self) -> dict[str, Any]:
        try:
            version = metadata.version("vllm")
        except metadata.PackageNotFoundError:
            version = None
        return {"engine": "vllm", "vllm_version": version, "model": self.options.model,
                "revision": self.options.revision, "seed_sent": self.options.send_seed,
                "seed_reached_server": self.seed_reached_server, "batches": list(self.batches)}

    async def aclose(self) -> None:
        if self._flusher is not None:
            await self._flusher

    async def chat(self, request: ChatRequest) -> ChatReply:
        fut = asyncio.get_running_loop().create_future()
        self._pending.append((request, fut))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await fut

    def _params(self, req: ChatRequest) -> Any:
        kw: dict[str, Any] = {"temperature": req.temperature, "max_tokens": req.max_tokens}
        if self.options.send_seed and req.seed is not None:
            kw["seed"] = req.seed
            self.seed_reached_server = True
        return self.sampling_params(**kw)

    async def _flush(self) -> None:
        seen = -1
        while seen != len(self._pending):  # wait until no new turn arrives for one window
            seen = len(self._pending)
            await asyncio.sleep(self.window)
        batch, self._pending = self._pending, []
        try:
            outputs = await asyncio.to_thread(self.llm.chat, [r.messages for r, _ in batch],
                                              [self._params(r) for r, _ in batch], use_tqdm=False)
            if len(outputs) != len(batch):
                raise EngineError(f"vLLM returned {len(outputs)} outputs for {len(batch)} prompts")
            self.batches.append(len(batch))
            for (_, fut), out in zip(batch, outputs):
                first = out.outputs[0]
                fut.set_result(ChatReply(text=first.text or "", finish_reason=getattr(first, "finish_reason", None)))
        except Exception as e:  # noqa: BLE001 - every waiting turn learns why
            err = e if isinstance(e, EngineError) else EngineError(f"vLLM failed: {type(e).__name__}: {e}")
            for _, fut in batch:
                if not fut.done():
                    fut.set_exception(err)
        if self._pending:
            self._flusher = asyncio.create_task(self._flush())
