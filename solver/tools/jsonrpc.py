"""JSON-RPC 2.0 framing checks for the MCP server's stdio transport, before the MCP library sees a line.

The MCP library drops a line it cannot parse without answering; a client then waits forever. Each
line is screened here and a bad one is answered with the JSON-RPC error it deserves:
-32700 (not JSON), -32600 (a batch array, not an object, no `jsonrpc: "2.0"`, a method that is not
text, a null or non-scalar id, neither a method nor a response), -32602 (params that are not an
object); a line over 1 Mi characters is -32600 unparsed, and one nested deeper than `MAX_DEPTH` (64)
objects and arrays is -32700 (the MCP library's parser gives up near 200 levels and drops the line
unanswered; Python's json near 1,000). Notifications (no id) are never answered: a
bad one is dropped. The error's id is the request's when it has a usable one, else null, as JSON-RPC
2.0 says.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from registry import jsontext

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
MAX_LINE_CHARS = 1 << 20  # no tool call needs more; a longer line is refused before it is parsed
MAX_DEPTH = 64  # objects and arrays nested in one message; a tool call needs 4 or 5, the MCP library drops ~200


@dataclass(frozen=True)
class Verdict:
    """What to do with one line: pass it on, answer it with `error`, or drop it (a bad notification)."""

    passes: bool
    error: dict[str, Any] | None = None


PASS = Verdict(True)
DROP = Verdict(False)


def error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def _usable_id(rid: Any) -> bool:
    return isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))


def screen(line: str) -> Verdict:
    """The verdict on one line of the transport."""
    if not line.strip():
        return DROP
    if len(line) > MAX_LINE_CHARS:
        return Verdict(False, error(None, INVALID_REQUEST,
                                    f"Invalid Request: the message is over {MAX_LINE_CHARS} characters"))
    too_deep = Verdict(False, error(None, PARSE_ERROR, f"Parse error: the message nests objects and arrays more "
                                                       f"than {MAX_DEPTH} levels deep"))
    try:
        msg = jsontext.loads(line, max_depth=MAX_DEPTH)
    except jsontext.TooDeep:
        return too_deep
    except ValueError:
        return Verdict(False, error(None, PARSE_ERROR, "Parse error: the line is not JSON"))
    if _deeper_than(msg, MAX_DEPTH):
        return too_deep
    if isinstance(msg, list):
        return Verdict(False, error(None, INVALID_REQUEST,
                                    "Invalid Request: batch arrays are not supported; send one message per line"))
    if not isinstance(msg, dict):
        return Verdict(False, error(None, INVALID_REQUEST, "Invalid Request: a JSON-RPC message is a JSON object"))
    rid = msg.get("id")
    has_id = "id" in msg
    reply_id = rid if _usable_id(rid) else None
    if msg.get("jsonrpc") != "2.0":
        return _bad(has_id, reply_id, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
    if "method" not in msg:
        if has_id and ("result" in msg or "error" in msg):
            return PASS  # the client's answer to a request of ours
        return _bad(True, reply_id, INVALID_REQUEST, 'Invalid Request: no "method"')
    if not isinstance(msg["method"], str):
        return _bad(has_id, reply_id, INVALID_REQUEST, 'Invalid Request: "method" must be a string')
    if has_id and not _usable_id(rid):
        return Verdict(False, error(None, INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer'))
    if "params" in msg and not isinstance(msg["params"], dict):
        return _bad(has_id, reply_id, INVALID_PARAMS, 'Invalid params: "params" must be an object')
    return PASS


def _deeper_than(msg: Any, limit: int) -> bool:
    """Whether objects and arrays nest more than `limit` levels (the message itself is level 1); no recursion."""
    stack = [(msg, 1)] if isinstance(msg, (dict, list)) else []
    while stack:
        value, level = stack.pop()
        if level > limit:
            return True
        items = value.values() if isinstance(value, dict) else value
        stack.extend((v, level + 1) for v in items if isinstance(v, (dict, list)))
    return False


def _bad(answer: bool, rid: Any, code: int, message: str) -> Verdict:
    return Verdict(False, error(rid, code, message)) if answer else DROP
