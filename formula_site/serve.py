"""The preview server of `formula site serve`: the built folder over loopback HTTP, and nothing else.

Python's own handler serves the files; this one adds what a preview of a published site needs: a path that
cannot name a file (a NUL byte, `%00`, which would raise inside the file lookup and drop the connection) is
answered 400, and a missing page gets the site's own 404 page (mkdocs-material builds `404.html`).

A client that opens connections and never finishes a request must not hold the preview: every connection's
socket times out after `TIMEOUT_S` (a half-sent request is dropped then), and `PreviewServer` serves at most
`MAX_CONNECTIONS` at once, closing any further one at once instead of starting a thread for it.
"""
from __future__ import annotations

import http.server
import threading
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

TIMEOUT_S = 10.0  # seconds a connection may stay silent mid-request (or between requests) before it is closed
MAX_CONNECTIONS = 32  # connections served at once; a browser opens about 6 per host


class PreviewServer(http.server.ThreadingHTTPServer):
    """A threading HTTP server with a cap on the connections it serves at once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limit = MAX_CONNECTIONS
        self.slots = threading.BoundedSemaphore(self.limit)
        self.serving = 0  # connections holding a slot now (read by tests and nothing else)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)  # full: closed at once, no thread started
            return
        self.serving += 1
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.serving -= 1
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.serving -= 1  # (+= and -= on an int happen under the GIL, one bytecode each on this path)
            self.slots.release()


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Serves one built site folder (`directory`); a silent connection is closed after `TIMEOUT_S`."""

    timeout = TIMEOUT_S

    def handle(self) -> None:
        try:
            super().handle()
        except (TimeoutError, ConnectionError):
            self.close_connection = True  # a client that went silent or away: nothing to answer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # the preview prints its address once; a line per request would bury it

    def send_head(self) -> Any:
        path = unquote(urlsplit(self.path).path)
        if "\x00" in path or any(ord(ch) < 0x20 for ch in path):
            self.send_error(400, "Bad request", "a path with a control character names no page")
            return None
        try:
            return super().send_head()
        except ValueError:  # any other path the file lookup refuses
            self.send_error(400, "Bad request", "this path names no page")
            return None

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = Path(self.directory) / "404.html"
        if code != 404 or self.command == "HEAD" or not page.is_file():
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(404, message)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
