"""`formula exec FILE`: run one model-written program in the restricted executor."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the `exec` sub-command to an argparse sub-parsers object."""
    parser = subparsers.add_parser(
        "exec",
        help="run a model-written program (or a reply with a ```python block) in the restricted executor",
        description=(
            "Run one program that defines `def solve():` in a fresh, resource-limited child "
            "process and print its outcome. Exit status 0 when it returned a valid value."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="program or model reply; '-' reads standard input")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output format")
    parser.set_defaults(handler=handle)
    return parser


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    return Path(path).read_text(encoding="utf-8")


def render_table(outcome: Any) -> str:
    """One or two readable lines."""
    timing = f"(cpu {outcome.cpu_s:.3f} s, wall {outcome.wall_s:.3f} s)"
    if outcome.ok:
        value = outcome.display_value()
        shown = value if isinstance(value, str) else json.dumps(value)
        return f"value: {shown}  {timing}"
    line = f"{outcome.kind}  {timing}"
    return f"{line}\n  {outcome.detail}" if outcome.detail else line


def handle(args: argparse.Namespace) -> int:
    """Run FILE; print the outcome; 0 only for a valid returned value."""
    try:
        source = _read(args.file)
    except FileNotFoundError:
        print(f"error: no such file: {args.file}", file=sys.stderr)
        return 1
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read {args.file}: {exc}", file=sys.stderr)
        return 1
    from solver.executor import run_program, shutdown

    try:
        outcome = run_program(source)
    finally:
        shutdown()
    if getattr(args, "format", "table") == "json":
        print(json.dumps(outcome.to_json_dict()))
    else:
        print(render_table(outcome))
    return 0 if outcome.ok else 1


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry: `python -m solver.exec_cli FILE [--format json]`."""
    parser = argparse.ArgumentParser(prog="formula")
    sub = parser.add_subparsers(dest="command")
    exec_parser = register(sub)
    args = exec_parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
