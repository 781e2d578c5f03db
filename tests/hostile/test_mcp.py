"""The MCP server under malformed JSON-RPC: every bad request gets its JSON-RPC error (-32700, -32600,
-32602) or a tool error, a null id is refused per JSON-RPC 2.0, and nothing reaches stderr."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from contextlib import suppress

import pytest

from registry.loader import PROJECT_ROOT, get_registry
from tests.hostile.output_helpers import deadline

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602  # JSON-RPC 2.0's codes

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
# line sent -> (id of the reply, error code) ; None code: a tool result with isError
BAD = [
    ("not json {", None, PARSE_ERROR),
    ('{"jsonrpc": "2.0", "id": 3, "method": "tools/list"', None, PARSE_ERROR),
    (json.dumps([{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}]), None, INVALID_REQUEST),
    ("[]", None, INVALID_REQUEST),
    (json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"x": "y" * 1_100_000}}), None,
     INVALID_REQUEST),
    ("[" * 100_000, None, PARSE_ERROR),
    ("42", None, INVALID_REQUEST),
    ('"tools/list"', None, INVALID_REQUEST),
    (json.dumps({"jsonrpc": "2.0", "id": 6}), 6, INVALID_REQUEST),
    (json.dumps({"jsonrpc": "1.0", "id": 7, "method": "tools/list"}), 7, INVALID_REQUEST),
    (json.dumps({"jsonrpc": "2.0", "id": 8, "method": 12}), 8, INVALID_REQUEST),
    (json.dumps({"jsonrpc": "2.0", "id": None, "method": "tools/list"}), None, INVALID_REQUEST),
    (json.dumps({"jsonrpc": "2.0", "id": [1], "method": "tools/list"}), None, INVALID_REQUEST),
    (json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": [1, 2]}), 9, INVALID_PARAMS),
]
SCREENED = list(BAD)  # the rest is well-framed JSON-RPC; the MCP library checks a method's own params
BAD += [(json.dumps({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
                     "params": {"name": "explain", "arguments": [1]}}), 10, INVALID_PARAMS)]
TOOL_ERRORS = [  # well-formed calls with bad arguments: a tool error naming what is wrong
    (11, {"name": "explain", "arguments": {"calculator": ["mdrd-gfr"]}}, "calculator"),
    (12, {"name": "explain", "arguments": {"calculator": None}}, "calculator"),
    (13, {"name": "explain", "arguments": {"calculator": True}}, "calculator"),
    (14, {"name": "explain", "arguments": {}}, "calculator"),
    (15, {"name": "no-such-tool", "arguments": {}}, "unknown tool"),
    (16, {"name": "body-mass-index", "arguments": {"weight": {"x": 1}}}, "body-mass-index"),
]
LAST = 99


def _exchange(lines: list[str], expect: int) -> tuple[dict, str]:
    """Send lines to `formula serve --mcp`, read `expect` replies (keeping stdin open until then)."""
    p = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--mcp"], cwd=str(PROJECT_ROOT), text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdin and p.stdout

    def feed() -> None:  # in a thread: the server's replies fill its stdout pipe while it still reads
        assert p.stdin
        try:
            p.stdin.write("\n".join(lines) + "\n")
            p.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    threading.Thread(target=feed, daemon=True).start()
    replies: dict = {}
    order: list = []
    try:
        with deadline(60):  # a request that gets no reply fails the test instead of hanging it
            while len(order) < expect:
                line = p.stdout.readline()
                if not line:
                    break
                msg = json.loads(line)
                order.append(msg)
                replies.setdefault(msg.get("id"), []).append(msg)
    except TimeoutError:
        p.kill()
    finally:
        with suppress(BrokenPipeError, OSError, ValueError):
            p.stdin.close()
        err = p.stderr.read() if p.stderr else ""
        p.wait(timeout=30)
    return {"by_id": replies, "all": order}, err


@pytest.fixture(scope="module")
def session() -> tuple[dict, str]:
    lines = [json.dumps(INIT), json.dumps(INITIALIZED)] + [b for b, _, _ in BAD]
    lines += [json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": p}) for i, p, _ in TOOL_ERRORS]
    lines += [json.dumps({"jsonrpc": "2.0", "method": "notifications/x", "params": [1]}),  # bad notification: no reply
              json.dumps({"jsonrpc": "2.0", "id": LAST, "method": "tools/list"})]
    return _exchange(lines, expect=1 + len(BAD) + len(TOOL_ERRORS) + 1)


@pytest.mark.parametrize("line,rid,code", SCREENED, ids=[b[:30] for b, _, _ in SCREENED])
def test_screen_gives_the_jsonrpc_error(line: str, rid, code: int) -> None:
    from solver.tools.jsonrpc import screen

    v = screen(line)
    assert not v.passes and v.error is not None
    assert v.error["error"]["code"] == code and v.error["id"] == rid and v.error["jsonrpc"] == "2.0"


def test_good_messages_and_notifications_pass() -> None:
    from solver.tools.jsonrpc import screen

    assert screen(json.dumps(INIT)).passes and screen(json.dumps(INITIALIZED)).passes
    assert screen(json.dumps({"jsonrpc": "2.0", "id": "a", "result": {}})).passes  # the client's answer
    bad_note = screen(json.dumps({"jsonrpc": "2.0", "method": "x", "params": 3}))
    assert not bad_note.passes and bad_note.error is None  # never answered


def test_every_bad_request_is_answered(session) -> None:
    replies, err = session
    errors = [m for m in replies["all"] if "error" in m]
    got = sorted((m["id"] is None, str(m["id"]), m["error"]["code"]) for m in errors)
    want = sorted((rid is None, str(rid), code) for _, rid, code in BAD)
    assert got == want, errors
    assert replies["by_id"][LAST][0]["result"]["tools"], "the server keeps serving after bad input"
    assert len(replies["by_id"][LAST][0]["result"]["tools"]) >= len(get_registry().calculators)


def test_bad_arguments_are_tool_errors(session) -> None:
    replies, _ = session
    for rid, _, words in TOOL_ERRORS:
        (msg,) = replies["by_id"][rid]
        result = msg["result"]
        assert result["isError"] is True and words in result["content"][0]["text"], msg


def test_nothing_on_stderr(session) -> None:
    _, err = session
    assert "Traceback" not in err and "Error" not in err, err[-2000:]


def _nested(depth: int, rid: int) -> str:
    """A tools/call whose JSON nests `depth` levels of objects and arrays (the message itself is level 1)."""
    if depth == 1:
        return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list"})
    if depth == 2:
        return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": {}})
    if depth == 3:
        return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                           "params": {"name": "explain", "arguments": {}}})
    k = depth - 3
    line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": "explain", "arguments": {"calculator": "NEST"}}})
    return line.replace('"NEST"', "[" * k + "]" * k)


DEPTHS = range(1, 2001)


def test_screen_refuses_every_depth_past_the_limit_and_passes_the_rest() -> None:
    from solver.tools.jsonrpc import MAX_DEPTH, screen

    assert MAX_DEPTH < 200  # below where the MCP library drops a line unanswered
    for depth in DEPTHS:
        v = screen(_nested(depth, depth))
        if depth <= MAX_DEPTH:
            assert v.passes, depth
        else:
            assert not v.passes and v.error is not None and v.error["error"]["code"] == PARSE_ERROR, depth
            assert str(MAX_DEPTH) in v.error["error"]["message"]


def test_every_depth_from_1_to_2000_gets_an_answer() -> None:
    from solver.tools.jsonrpc import MAX_DEPTH

    lines = [json.dumps(INIT), json.dumps(INITIALIZED)] + [_nested(d, 1000 + d) for d in DEPTHS]
    lines.append(json.dumps({"jsonrpc": "2.0", "id": LAST, "method": "tools/list"}))
    replies, err = _exchange(lines, expect=1 + len(DEPTHS) + 1)
    by_id = replies["by_id"]
    for depth in DEPTHS:
        if depth <= MAX_DEPTH:
            assert len(by_id.get(1000 + depth, [])) == 1, depth  # a result, a tool error or -32602: an answer
    deep = [m for m in by_id.get(None, []) if m.get("error", {}).get("code") == PARSE_ERROR]
    assert len(deep) == len(DEPTHS) - MAX_DEPTH
    assert by_id[LAST][0]["result"]["tools"], "the server keeps serving after deep lines"
    assert "Traceback" not in err, err[-2000:]
