"""The `formula` command line: one entry point, sub-commands registered by the modules that own them."""
from __future__ import annotations

import argparse
import sys

from registry import commands, texts_cli


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="formula",
        description="Formula provenance registry and audit toolkit for clinical calculators.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    commands.register(sub)
    texts_cli.register(sub)
    _register_optional(sub)
    return parser


def _register_optional(sub: argparse._SubParsersAction) -> None:
    """Commands that live in the solver and audit packages register themselves here."""
    from audit import cli as audit_cli  # `formula audit ...`
    from solver import exec_cli  # restricted executor: `formula exec`
    from solver import solve_cli  # calculator library: `formula solve`

    solve_cli.register(sub)
    exec_cli.register(sub)
    audit_cli.register(sub)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
