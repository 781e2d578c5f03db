"""Engines: where an arm's chat turns are answered.

`vllm` (offline `vllm.LLM`, every pending prompt in one batched `chat` call; `pip install -e '.[vllm]'`),
`openai` (any OpenAI-compatible endpoint, e.g. `vllm serve`, many requests in flight, retries) and
`replay` (the stored replies of an earlier run). Each registers itself with `@ENGINES.register`;
heavy backends are imported only when their engine is built.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from solver.arms.base import ChatReply
from solver.plugins import Plugins


class EngineError(RuntimeError):
    """A turn the engine could not answer (after its retries); the run stops and can be resumed."""


@dataclass(frozen=True)
class ChatRequest:
    messages: list[dict[str, str]]
    temperature: float
    max_tokens: int
    key: tuple[int, int, int]  # (row_number, seed, call): what replay matches on
    seed: int | None = None  # sent to the server only with --send-seed (the paper never sends it)


@dataclass
class EngineOptions:
    model: str | None = None
    revision: str | None = None
    base_url: str | None = None
    concurrency: int = 8
    timeout_s: float = 600.0
    retries: int = 5
    backoff_s: float = 1.0
    send_seed: bool = False
    replay_from: Path | None = None
    api_key: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Engine(Protocol):
    name: str

    async def chat(self, request: ChatRequest) -> ChatReply: ...

    def describe(self) -> dict[str, Any]:
        """What the manifest records: engine version, model, server, whether seeds reached it."""
        ...

    async def aclose(self) -> None: ...


ENGINES: Plugins[Callable[[EngineOptions], Engine]] = Plugins("engine", "solver.engines")


def build_engine(name: str, options: EngineOptions) -> Engine:
    return ENGINES.get(name)(options)
