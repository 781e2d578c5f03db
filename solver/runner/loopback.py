"""A loopback OpenAI-compatible chat server with scripted replies, for tests, benchmarks and dry runs.

    with Loopback(lambda request: "Answer: 42", delay=0.1) as server:
        ... --engine openai --base-url server.url ...

Listens on 127.0.0.1 only. The responder gets the request's JSON body and returns the reply text,
or a `Scripted` value for failures: an HTTP status, a malformed body, a delay, a null content.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from registry import jsontext

MAX_BODY = 16 * 1024 * 1024


@dataclass(frozen=True)
class Scripted:
    status: int = 200
    text: str | None = None  # the reply's content (None: a null content)
    raw: bytes | None = None  # a body sent as is (malformed JSON, say)
    delay: float = 0.0  # extra seconds before answering
    finish_reason: str = "stop"


Responder = Callable[[dict[str, Any]], "str | Scripted"]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Loopback:
    def __init__(self, responder: Responder, *, delay: float = 0.0, model: str = "loopback"):
        self.responder = responder
        self.delay = delay
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        if isinstance(host, bytes):  # typeshed allows bytes; an IPv4 server binds a str host
            host = host.decode()
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "Loopback":
        # long: the server start and its readiness checks, in order
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                return

            def handle(self) -> None:
                try:
                    super().handle()
                except (ConnectionResetError, BrokenPipeError):
                    pass

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                if not self.path.endswith("/chat/completions") or length > MAX_BODY:
                    self._send(404, b'{"error": "not found"}')
                    return
                try:
                    body = jsontext.loads(self.rfile.read(length))
                except jsontext.JsonError:
                    self._send(400, b'{"error": "bad json"}')
                    return
                with owner._lock:
                    owner.requests.append(body)
                    owner.in_flight += 1
                    owner.max_in_flight = max(owner.max_in_flight, owner.in_flight)
                try:
                    reply = owner.responder(body)
                    if not isinstance(reply, Scripted):
                        reply = Scripted(text=reply)
                    wait = owner.delay + reply.delay
                    if wait:
                        time.sleep(wait)
                    if reply.raw is not None:
                        self._send(reply.status, reply.raw)
                    elif reply.status != 200:
                        self._send(reply.status, json.dumps({"error": {"message": f"scripted {reply.status}"}}).encode())
                    else:
                        self._send(200, json.dumps({
                            "id": "loopback", "object": "chat.completion", "model": body.get("model", owner.model),
                            "choices": [{"index": 0, "finish_reason": reply.finish_reason,
                                         "message": {"role": "assistant", "content": reply.text}}],
                        }).encode())
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    with owner._lock:
                        owner.in_flight -= 1

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
