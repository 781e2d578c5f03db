"""`formula schema --calculator` and `formula serve --mcp`: the calculators as tools.

The registry layer owns `formula schema` (the JSON Schema of the registry's files) and may not
import the solver, so this module, one layer up, extends that parser with `--calculator` and
`--format` through argparse's public API and dispatches: with `--calculator` it prints the
generated input schema or tool definition, otherwise the registry's own handler runs unchanged.
It must therefore be registered after `registry.commands` (cli/main.py lists it later).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Callable

from registry.cliutil import add_root
from solver.tools.schema import FORMATS


def register(sub: argparse._SubParsersAction) -> None:
    schema = sub.choices.get("schema")
    if schema is not None:
        original: Callable[[argparse.Namespace], int] = schema.get_default("handler")
        schema.add_argument("--calculator", metavar="SLUG|ID",
                            help="print the JSON Schema (draft 2020-12) of this calculator's inputs instead")
        schema.add_argument("--format", choices=FORMATS, default=None,
                            help="with --calculator: the bare schema (jsonschema, default), an OpenAI function "
                            "tool (openai) or an MCP tool definition (mcp)")
        schema.add_argument("--strict", action="store_true",
                            help="with --format openai: OpenAI's strict mode (every field required, optional ones "
                            "nullable, additionalProperties false, no prefixItems or if/then)")
        schema.set_defaults(handler=lambda args: _schema(args, original))

    p = sub.add_parser("serve",
                       description="Serve every active calculator as a tool of a Model Context Protocol server on "
                       "stdin/stdout, plus list_calculators and explain. Each call is checked by the validation "
                       "gates (completeness, type, enum, unit, range) and answered with an answer record.")
    p.add_argument("--mcp", action="store_true", required=True, help="speak MCP over stdio (the only transport)")
    p.add_argument("--variant", choices=("benchmark", "published"), default="published",
                   help="which variant of the formulas the tools compute (default: published, the formulas as "
                   "published; benchmark reproduces MedCalc-Bench's reference, quirks included)")
    add_root(p)
    p.set_defaults(handler=_serve)


def _schema(args: argparse.Namespace, original: Callable[[argparse.Namespace], int]) -> int:
    if args.calculator is None:
        if args.format is not None or args.strict:
            print("error: --format and --strict need --calculator", file=sys.stderr)
            return 2
        return original(args)
    from registry.loader import get_registry
    from solver.tools.schema import tool_definition

    reg = get_registry()
    try:
        calc = reg.get(args.calculator)
    except KeyError:
        from registry.suggest import unknown_calculator

        print("error: " + unknown_calculator(reg, args.calculator), file=sys.stderr)
        return 1
    if args.strict:
        if args.format != "openai":
            print("error: --strict is a form of --format openai", file=sys.stderr)
            return 2
        from solver.tools.schema import strict_tool

        print(json.dumps(strict_tool(calc, reg), indent=2, ensure_ascii=False))
        return 0
    print(json.dumps(tool_definition(calc, args.format or "jsonschema", reg), indent=2, ensure_ascii=False))
    return 0


def _serve(args: argparse.Namespace) -> int:
    try:
        from solver.tools.mcp_server import serve_stdio
    except ImportError as e:
        from registry.terminal import install_hint

        print(f"error: the MCP server needs the 'tools' extra ({e}); {install_hint('tools')}", file=sys.stderr)
        return 1
    serve_stdio(variant=args.variant)
    return 0
