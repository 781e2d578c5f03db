"""`formula serve --mcp`: every active calculator as a tool of an MCP server on stdio.

Tools: one per active calculator (named by its slug; input schema generated from the registry),
`list_calculators`, and `explain(calculator)`. A calculator call answers with the answer record
as structured content (and the same JSON as text); a refused call is a tool error
(`isError`) whose text names the failed gate and the inputs, so an agent can correct itself.
"""
from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from registry.loader import Registry, get_registry
from registry.suggest import did_you_mean, unknown_calculator
from solver.library import CalculatorError
from solver.tools.gates import GateError
from solver.tools.jsonrpc import screen
from solver.tools.schema import DRAFT, tool_definition
from solver.tools.service import active_calculators, call, explain, list_calculators

SERVER_NAME = "formula-registry"
LIST_TOOL = "list_calculators"
EXPLAIN_TOOL = "explain"


def _fixed_tools() -> list[types.Tool]:
    return [
        types.Tool(name=LIST_TOOL, title="List the calculators",
                   description="Every calculator served here: slug, benchmark id, formula version and content "
                   "hash, output, intended use, literature concern and successors.",
                   input_schema={"$schema": DRAFT, "type": "object", "properties": {}, "additionalProperties": False}),
        types.Tool(name=EXPLAIN_TOOL, title="Explain a calculator",
                   description="The rendered formula text, the publication, guideline provenance, the literature "
                   "concern and successors of one calculator.",
                   input_schema={"$schema": DRAFT, "type": "object", "required": ["calculator"],
                                 "additionalProperties": False,
                                 "properties": {"calculator": {"type": ["string", "integer"],
                                                               "description": "registry slug or benchmark id"}}}),
    ]


def _tool(reg: Registry, calc: Any) -> types.Tool:
    d = tool_definition(calc, "mcp", reg)
    return types.Tool(name=d["name"], title=d["title"], description=d["description"],
                      input_schema=d["inputSchema"], _meta=d["_meta"])


def _ok(data: Any) -> types.CallToolResult:
    text = json.dumps(data, ensure_ascii=False)
    structured = data if isinstance(data, dict) else {"result": data}
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)


def _error(message: str, detail: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text="error: " + message)],
                                structured_content={"error": detail}, is_error=True)


def handle(reg: Registry, name: str, arguments: dict[str, Any] | None, variant: str) -> types.CallToolResult:
    """One tool call, transport-free (the server and the tests use it)."""
    args = arguments or {}
    if name == LIST_TOOL:
        return _ok({"calculators": list_calculators(reg)})
    if name == EXPLAIN_TOOL:
        ref = args.get("calculator")
        if not isinstance(ref, (str, int)) or isinstance(ref, bool):
            return _error(f"explain needs 'calculator', a registry slug or benchmark id, got {type(ref).__name__}",
                          {"gate": "type", "variable": "calculator"})
        try:
            return _ok(explain(reg, ref))
        except KeyError:
            return _error(unknown_calculator(reg, ref, f"call {LIST_TOOL} for the slugs"),
                          {"gate": "completeness", "variable": "calculator"})
    if name not in reg.calculators:
        return _error(f"unknown tool {name!r}{did_you_mean(name, reg.calculators)}; call {LIST_TOOL} for the "
                      "calculators", {"gate": None})
    try:
        record = call(reg, name, args, variant=variant)
    except GateError as e:
        return _error(str(e), {"gate": e.gate, "calculator": e.calculator,
                               "findings": [{"variable": f.variable, "message": f.message} for f in e.findings]})
    except CalculatorError as e:
        return _error(str(e), {"gate": "compute", "calculator": e.calculator, "variable": e.variable,
                               "kind": type(e).__name__, "message": e.message})
    return _ok(record.model_dump(mode="json"))


def build_server(reg: Registry | None = None, variant: str = "published") -> Server:
    reg = reg or get_registry()
    tools = _fixed_tools() + [_tool(reg, c) for c in active_calculators(reg)]

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            return handle(reg, params.name, params.arguments, variant)
        except Exception as e:  # noqa: BLE001 - a tool error for the client, never a traceback on stderr
            return _error(f"{params.name}: the call failed ({type(e).__name__}: {e})", {"gate": None})

    return Server(SERVER_NAME, version=_version(), instructions="Clinical calculators from a versioned formula "
                  "registry. Call list_calculators, then a calculator with the benchmark's entity format "
                  "(values or [value, unit] pairs); every answer names its formula version, content hash and "
                  f"variant (this server computes the {variant} variant).",
                  on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("formula-registry")
    except PackageNotFoundError:
        return "0"


DRAIN_S = 30.0  # seconds, after the end of input, that requests already read may take to be answered


def _key(rid: Any) -> str:
    import json

    return json.dumps(rid)


class _Answered:
    """The session's write stream, noting the id of every response sent (so the end of input can wait for them)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.ids: set[str] = set()

    async def send(self, message: Any) -> None:
        await self.inner.send(message)
        rid = getattr(getattr(message, "message", None), "id", None)
        if rid is not None:
            self.ids.add(_key(rid))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def __aenter__(self) -> _Answered:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.inner.__aexit__(*exc)


class _ScreenedLines:
    """The process's stdin as lines for the MCP transport, each screened first (solver/tools/jsonrpc.py):
    a bad line is answered with its JSON-RPC error on the session's write stream and not passed on. At the end
    of input the lines end only once every request passed on has been answered (else the transport would close
    the session with the last requests still unanswered), or after `DRAIN_S`."""

    def __init__(self) -> None:
        import io
        import sys

        self._lines = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
        self.write: Any = None
        self.answered: _Answered | None = None
        self.ready = anyio.Event()
        self.pending: set[str] = set()

    def __aiter__(self) -> Any:
        return self._screened()

    async def _screened(self) -> Any:
        from mcp.shared.message import SessionMessage

        async for line in self._lines:
            verdict = screen(line)
            if verdict.passes:
                self._note(line)
                yield line
            elif verdict.error is not None:
                await self.ready.wait()
                await self.write.send(SessionMessage(types.JSONRPCError.model_validate(verdict.error)))
        await self._drain()

    def _note(self, line: str) -> None:
        """Remember the id of a request passed on (a notification or a client's response has none to answer)."""
        from registry import jsontext

        msg = jsontext.loads(line)
        if isinstance(msg, dict) and "method" in msg and msg.get("id") is not None:
            self.pending.add(_key(msg["id"]))

    async def _drain(self) -> None:
        await self.ready.wait()
        with anyio.move_on_after(DRAIN_S):
            while self.answered is not None and not self.pending <= self.answered.ids:
                await anyio.sleep(0.01)


def serve_stdio(variant: str = "published") -> None:
    server = build_server(variant=variant)

    async def main() -> None:
        lines = _ScreenedLines()
        async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
            answered = _Answered(write)
            lines.write, lines.answered = answered, answered
            lines.ready.set()
            await server.run(read, answered, server.create_initialization_options())

    anyio.run(main)
