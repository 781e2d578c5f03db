"""`formula exec FILE`: run one model-written program in the restricted executor.

Exit status: 0 the program returned a valid value; 1 a tool error (the file
cannot be read, the executor cannot start); 2 a usage error (argparse); 3 the
program gave no valid value (no program, rejected, raised, a limit, bad kind).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from registry.terminal import printable, say

EXIT_VALUE = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_NO_VALUE = 3


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the `exec` sub-command to an argparse sub-parsers object."""
    parser = subparsers.add_parser(
        "exec",
        description=(
            "Run one program that defines `def solve():` in a fresh, resource-limited child "
            "process and print its outcome. Exit status: 0 the program returned a valid value; "
            "1 tool error (unreadable file, executor could not start); 2 usage error; "
            "3 the program gave no valid value (no program, rejected, raised, limit, bad kind)."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="program or model reply; '-' reads standard input")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output format")
    parser.add_argument(
        "--policy",
        choices=("clinical", "paper"),
        default="clinical",
        help="what syntax programs may use: clinical (default; f-strings, generator expressions, "
        "`_` names) or paper (exactly the paper's Table 17 rules); the isolation is the same",
    )
    parser.set_defaults(handler=handle)
    return parser


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    return Path(path).read_text(encoding="utf-8")


def render_table(outcome: Any) -> str:
    """One or two readable lines."""
    timing = f"(cpu {outcome.cpu_s:.3f} s, wall {outcome.wall_s:.3f} s, policy {outcome.policy})"
    if outcome.ok:
        value = outcome.display_value()
        shown = value if isinstance(value, str) else json.dumps(value)
        return f"value: {shown}  {timing}"
    line = f"{outcome.kind}  {timing}"
    return f"{line}\n  {printable(outcome.detail)}" if outcome.detail else line


def handle(args: argparse.Namespace) -> int:
    """Run FILE; print the outcome; see the module docstring for the exit status."""
    try:
        source = _read(args.file)
    except FileNotFoundError:
        print(f"error: no such file: {printable(args.file)}", file=sys.stderr)
        return EXIT_TOOL_ERROR
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read {printable(args.file)}: {printable(str(exc))}", file=sys.stderr)
        return EXIT_TOOL_ERROR
    from solver.executor import run_program, shutdown
    from solver.executor.pool import ServerError

    try:
        outcome = run_program(source, policy=getattr(args, "policy", "clinical"))
    except (ServerError, OSError) as exc:
        print(f"error: the executor could not run the program: {printable(str(exc))}", file=sys.stderr)
        return EXIT_TOOL_ERROR
    finally:
        shutdown()
    if getattr(args, "format", "table") == "json":
        say(json.dumps(outcome.to_json_dict()))  # ASCII-escaped: surrogates survive
    else:
        say(render_table(outcome))
    return EXIT_VALUE if outcome.ok else EXIT_NO_VALUE


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry: `python -m solver.exec_cli FILE [--format json] [--policy P]`."""
    parser = argparse.ArgumentParser(prog="formula")
    sub = parser.add_subparsers(dest="command")
    exec_parser = register(sub)
    args = exec_parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
