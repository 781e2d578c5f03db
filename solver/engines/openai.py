"""Any OpenAI-compatible chat endpoint (`vllm serve`, llama.cpp's server, a hosted API), through httpx.

`concurrency` requests in flight; connection errors, timeouts, 429, 5xx and malformed replies are
retried with exponential backoff (Retry-After honoured); any other 4xx stops the run at once with
the server's message. Only temperature and the output-token cap are set (the paper's rule), plus
the seed when `send_seed` is on.
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import ssl
from functools import lru_cache
from importlib import metadata
from typing import Any

from solver.arms.base import ChatReply
from solver.engines import ENGINES, ChatRequest, EngineError, EngineOptions

RETRY_STATUS = {408, 409, 425, 429}


@lru_cache(maxsize=1)
def _tls_context() -> ssl.SSLContext:
    """One certificate store for every client of the process (loading it costs about 0.1 s)."""
    return ssl.create_default_context()


class _Retry(Exception):
    pass


@ENGINES.register("openai")
class OpenAIEngine:
    name = "openai"

    def __init__(self, options: EngineOptions):
        import httpx

        if not options.base_url:
            raise EngineError("the openai engine needs --base-url (e.g. http://127.0.0.1:8000/v1 for `vllm serve`)")
        if not options.model:
            raise EngineError("the openai engine needs --model (the id the server serves)")
        self.options = options
        self.url = options.base_url.rstrip("/") + "/chat/completions"
        key = options.api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        # One client per request slot: httpx's connection pool rescans every connection on each request,
        # which costs more than the request itself at 32 in flight; one connection per client avoids that.
        slots = max(1, options.concurrency)
        timeout = httpx.Timeout(options.timeout_s, connect=min(30.0, options.timeout_s))
        tls = _tls_context()
        self._clients = [httpx.AsyncClient(timeout=timeout, headers={"Authorization": f"Bearer {key}"}, verify=tls,
                                           limits=httpx.Limits(max_connections=1, max_keepalive_connections=1))
                         for _ in range(slots)]
        self._free: asyncio.Queue | None = None
        self._httpx = httpx
        self.requests = 0
        self.retried = 0
        self.seed_reached_server = False

    def describe(self) -> dict[str, Any]:
        return {"engine": "openai", "client": f"httpx {metadata.version('httpx')}", "base_url": self.options.base_url,
                "model": self.options.model, "concurrency": self.options.concurrency,
                "seed_sent": self.options.send_seed, "seed_reached_server": self.seed_reached_server,
                "requests": self.requests, "retried": self.retried}

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()

    def _payload(self, req: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.options.model, "messages": req.messages,
                                "temperature": req.temperature, "max_tokens": req.max_tokens}
        if self.options.send_seed and req.seed is not None:
            body["seed"] = req.seed
        return body

    async def _once(self, client: Any, req: ChatRequest) -> ChatReply:
        httpx = self._httpx
        where = f"{self.url} (row {req.key[0]}, seed {req.key[1]}, call {req.key[2]})"
        try:
            r = await client.post(self.url, json=self._payload(req))
        except (httpx.TimeoutException, httpx.TransportError) as e:
            raise _Retry(f"{where}: {type(e).__name__}: {e}") from None
        if r.status_code in RETRY_STATUS or r.status_code >= 500:
            raise _Retry(f"{where}: HTTP {r.status_code}: {r.text[:200]}")
        if r.status_code >= 400:
            raise EngineError(f"{where}: HTTP {r.status_code}: {r.text[:500]}")
        try:
            data = r.json()
            choice = data["choices"][0]
            text = choice["message"].get("content")
            finish = choice.get("finish_reason")
        except (json.JSONDecodeError, ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise _Retry(f"{where}: malformed reply (not an OpenAI chat completion): {r.text[:200]!r}") from None
        if "seed" in self._payload(req):
            self.seed_reached_server = True
        return ChatReply(text=text if isinstance(text, str) else "", finish_reason=finish)

    async def chat(self, request: ChatRequest) -> ChatReply:
        if self._free is None:  # created inside the running loop
            self._free = asyncio.Queue()
            for client in self._clients:
                self._free.put_nowait(client)
        client = await self._free.get()
        try:
            last = ""
            for attempt in range(self.options.retries + 1):
                self.requests += 1
                try:
                    return await self._once(client, request)
                except _Retry as e:
                    last = str(e)
                    if attempt == self.options.retries:
                        break
                    self.retried += 1
                    delay = self.options.backoff_s * (2 ** attempt) * (0.5 + random.random() / 2)
                    await asyncio.sleep(min(delay, 60.0))
            raise EngineError(f"gave up after {self.options.retries + 1} attempts: {last}")
        finally:
            self._free.put_nowait(client)
