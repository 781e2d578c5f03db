"""The `formula` command line: one entry point, sub-commands registered by the modules that own them.

Each package below (registry, solver, audit, ...) has modules with a `register(sub)` function that
adds its sub-commands; this module composes them in layer order and is imported by nothing else.
"""
from __future__ import annotations

import argparse
import os
import sys

from audit import cli as audit_cli
from audit import impact_cli, report_cli
from formula_site import site_cli
from registry import commands, texts_cli
from registry.cliutil import CommandError
from registry.loader import ROOT_ENV
from solver import batch_cli, exec_cli, replay_cli, run_cli, solve_cli, tools_cli

# Every module that contributes sub-commands, lowest layer first. `tools_cli` and `batch_cli` add
# options to the `schema` and `solve` parsers, so they come after the modules that create those.
COMMAND_MODULES = (
    commands,
    texts_cli,
    solve_cli,
    replay_cli,
    exec_cli,
    run_cli,
    tools_cli,
    batch_cli,
    audit_cli,
    impact_cli,
    report_cli,
    site_cli,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="formula",
        description="Formula provenance registry and audit toolkit for clinical calculators.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 done, 1 a tool error (`error: ...` on stderr), 2 a usage error (argparse)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    root = getattr(args, "root", None)
    before = os.environ.get(ROOT_ENV)
    if root is not None:  # one way to name the registry: every layer the command calls then reads this one
        os.environ[ROOT_ENV] = str(root)
    try:
        return int(args.handler(args) or 0)
    except CommandError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print(f"interrupted: {e}" if str(e) else "interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    finally:
        if root is not None:  # in-process callers (tests, scripts) get their environment back
            if before is None:
                os.environ.pop(ROOT_ENV, None)
            else:
                os.environ[ROOT_ENV] = before


if __name__ == "__main__":
    sys.exit(main())
