"""`formula site serve` releases half-sent connections and serves a bounded number at once; the MCP server
answers every request written just before the end of its input.

Generated variants: every way to stop mid-request (nothing sent, part of the request line, the line without
its headers, headers without the blank line), many at once past the cap; MCP sessions of several sizes and
kinds of request, with and without a final newline."""
from __future__ import annotations

import functools
import http.client
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from formula_site import serve
from registry.loader import PROJECT_ROOT


@pytest.fixture()
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[serve.PreviewServer]:
    (tmp_path / "index.html").write_text("<p>home</p>", encoding="utf-8")
    monkeypatch.setattr(serve.SiteHandler, "timeout", 0.5)
    monkeypatch.setattr(serve, "MAX_CONNECTIONS", 4)
    httpd = serve.PreviewServer(("127.0.0.1", 0), functools.partial(serve.SiteHandler, directory=str(tmp_path)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _get(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/index.html")
    status = conn.getresponse().status
    conn.close()
    return status


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes `sock` (reads end, or it is reset) within `seconds`."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


HALF_SENT = [b"", b"G", b"GET /index.html", b"GET /index.html HTTP/1.1\r\n",
             b"GET /index.html HTTP/1.1\r\nHost: x\r\n", b"GET /index.html HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 500]


@pytest.mark.parametrize("sent", HALF_SENT, ids=[f"{len(s)} bytes" for s in HALF_SENT])
def test_a_half_sent_connection_is_released_after_the_timeout(site: serve.PreviewServer, sent: bytes) -> None:
    with socket.create_connection(site.server_address) as sock:
        sock.sendall(sent)
        assert _closed_within(sock, 5.0)


@pytest.mark.parametrize("extra", [1, 8])
def test_connections_past_the_cap_are_closed_and_the_site_still_answers(site: serve.PreviewServer, extra: int,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serve.SiteHandler, "timeout", 3.0)  # the held ones keep their slots through the test
    held = [socket.create_connection(site.server_address) for _ in range(site.limit)]
    deadline = time.monotonic() + 5
    while site.serving < site.limit and time.monotonic() < deadline:
        time.sleep(0.01)  # until the server has taken them all
    assert site.serving == site.limit
    try:
        over = [socket.create_connection(site.server_address) for _ in range(extra)]
        for sock in over:
            assert _closed_within(sock, 0.4)  # before any timeout: refused for want of a slot
            sock.close()
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            assert _get(site.server_address[1]) == 200
            return
        except (ConnectionError, http.client.HTTPException):
            time.sleep(0.1)  # the slots free as the held connections' threads end
    pytest.fail("the site did not answer once the held connections were gone")


# ---------------------------------------------------------------- MCP: every request before end of input

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
KINDS = {
    "tools/list": lambda i: {"jsonrpc": "2.0", "id": i, "method": "tools/list"},
    "a calculator": lambda i: {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                               "params": {"name": "body-mass-index", "arguments": {"weight": 70, "height": 1.75}}},
    "a bad call": lambda i: {"jsonrpc": "2.0", "id": f"s{i}", "method": "tools/call",
                             "params": {"name": "explain", "arguments": {}}},
}


@pytest.mark.parametrize("newline", [True, False], ids=["newline", "no final newline"])
@pytest.mark.parametrize("count", [1, 40])
@pytest.mark.parametrize("kind", [*KINDS, "mixed"])
def test_mcp_answers_every_request_written_before_end_of_input(kind: str, count: int, newline: bool) -> None:
    kinds = list(KINDS.values())
    make = [kinds[i % len(kinds)] if kind == "mixed" else KINDS[kind] for i in range(count)]
    requests = [m(i + 1) for i, m in enumerate(make)]
    lines = [json.dumps(INIT), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    lines += [json.dumps(r) for r in requests]
    run = subprocess.run([sys.executable, "-m", "cli", "serve", "--mcp"], cwd=str(PROJECT_ROOT), timeout=120,
                         input="\n".join(lines) + ("\n" if newline else ""), capture_output=True, text=True)
    answered = {json.dumps(json.loads(x).get("id")) for x in run.stdout.splitlines()}
    wanted = {json.dumps(r["id"]) for r in requests} | {"0"}
    assert wanted <= answered, sorted(wanted - answered)
    assert run.returncode == 0 and run.stderr == ""
