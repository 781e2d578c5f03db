"""The `formula` command line: one entry point, sub-commands registered by the modules that own them.

Each package below (registry, solver, audit, ...) has modules with a `register(sub)` function that
adds its sub-commands; this module composes them in layer order and is imported by nothing else.

Start-up is lazy: `COMMANDS` names each sub-command's module and one-line help, so `formula --help`
imports none of them and `formula solve ...` imports only the modules that build the solve parser
(tests/cli/test_startup.py checks that `COMMANDS` matches what the modules register). The help line is
written there only: `_Commands` gives it to the parser a module registers.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from types import ModuleType
from typing import Any

# Every module that contributes sub-commands, lowest layer first. `tools_cli` and `batch_cli` add
# options to the `schema` and `solve` parsers, so they come after the modules that create those.
COMMAND_MODULES = (
    "registry.commands",
    "registry.governance.commands",
    "registry.texts_cli",
    "solver.solve_cli",
    "solver.replay_cli",
    "solver.exec_cli",
    "solver.run_cli",
    "solver.import_cli",
    "solver.tools_cli",
    "solver.batch_cli",
    "solver.convert_cli",
    "audit.cli",
    "audit.impact_cli",
    "audit.review_cli",
    "audit.safety_cli",
    "audit.report_cli",
    "formula_site.site_cli",
)

_REG, _GOV, _SOLVE = "registry.commands", "registry.governance.commands", "solver.solve_cli"
# sub-command -> (the module that registers it, its help line); EXTENDED: modules that add options to it
COMMANDS: dict[str, tuple[str, str]] = {
    "init": (_GOV, "make a new registry for a committee, with its first person's key"),
    "people": (_GOV, "add a person, rotate their key, retire them (the keys and the policy together)"),
    "validate": (_REG, "load and check the whole registry"),
    "list": (_REG, "one row per calculator"),
    "show": (_REG, "everything about one calculator"),
    "history": (_GOV, "the version lineage of one calculator"),
    "diff": (_REG, "what changed between two versions: the text a clinician reads, then constants and inputs"),
    "schema": (_REG, "the JSON Schema of a calculator file (or a guideline file)"),
    "lock": (_REG, "record content hashes of released versions not yet locked"),
    "release": (_GOV, "release the edited content of a calculator as a new version"),
    "fix": (_GOV, "change constants and release the change as a new version"),
    "approve": (_GOV, "approve a draft version: it becomes active (or on its effective date)"),
    "activate": (_GOV, "make approved versions whose effective date has come active"),
    "reject": (_GOV, "reject a waiting draft: it is removed, the rejection kept on record"),
    "pending": (_GOV, "what awaits approval or its effective date"),
    "recover": (_REG, "roll back a change a killed command left half-written"),
    "review": (_GOV, "record a review sign-off on the active version"),
    "due": (_GOV, "calculators whose review is due"),
    "changelog": (_GOV, "every released version across the registry: who, why, what changed"),
    "stale": (_REG, "stored results produced by a text or version that has since changed"),
    "verify": (_GOV, "for consumers: is every active version reached through valid signed decisions?"),
    "texts": ("registry.texts_cli", "the supplied formula texts rendered from the registry"),
    "solve": (_SOLVE, "compute one calculator from its gold variables"),
    "replay": ("solver.replay_cli", "recompute an answer record and compare"),
    "exec": ("solver.exec_cli", "run a model-written program (or a reply with a ```python block) in the restricted "
             "executor"),
    "run": ("solver.run_cli", "run one of the paper's arms over a benchmark split, for each seed"),
    "score": ("solver.run_cli", "re-score a run folder's stored replies without a model"),
    "import": ("solver.import_cli", "turn another tool's evaluation log into a run folder (formula run's shape)"),
    "serve": ("solver.tools_cli", "serve the calculators as tools (MCP over stdio)"),
    "batch": ("solver.batch_cli", "calculators over a CSV or parquet table (a cohort)"),
    "convert": ("solver.convert_cli", "benchmark-shaped entity objects (JSONL or CSV) as a parquet cohort"),
    "audit": ("audit.cli", "audits of the registry and the library"),
    "impact": ("audit.impact_cli", "compare a formula with its successor on a dataset"),
    "review-pr": ("audit.review_cli", "review a registry change between two git revisions (a pull request)"),
    "safety": ("audit.safety_cli", "the clinical safety case: hazard log, evidence, trace, sign-off"),
    "report": ("audit.report_cli", "report tables from stored evaluation runs"),
    "site": ("formula_site.site_cli", "build or preview the published audit report (a static site)"),
    "export": ("formula_site.site_cli", "export the registry in a standard format"),
}
EXTENDED: dict[str, tuple[str, ...]] = {"solve": ("solver.batch_cli",), "schema": ("solver.tools_cli",)}
DESCRIPTION = "Formula provenance registry and audit toolkit for clinical calculators."


def _all_modules() -> tuple[ModuleType, ...]:
    """Every command module (imported here, lazily, so the layer test sees what cli.main composes)."""
    from audit import cli as audit_cli
    from audit import impact_cli, report_cli, review_cli, safety_cli
    from formula_site import site_cli
    from registry import commands, texts_cli
    from registry.governance import commands as governance_commands
    from solver import batch_cli, convert_cli, exec_cli, import_cli, replay_cli, run_cli, solve_cli, tools_cli

    return (commands, governance_commands, texts_cli, solve_cli, replay_cli, exec_cli, run_cli, import_cli, tools_cli,
            batch_cli, convert_cli, audit_cli, impact_cli, review_cli, safety_cli, report_cli, site_cli)


class _Version(argparse.Action):
    """`formula --version`: the installed distribution's version, looked up only when asked."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the version of formula-registry and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kw: object) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("formula-registry")
        except PackageNotFoundError:
            v = "unknown (not installed)"
        print(f"formula {v}")
        parser.exit(0)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, wrapped at spaces only: its own wrapping also breaks at hyphens ('ssh-' / 'agent',
    'sodium-correction-' / 'hyperglycemia'), which splits the names a reader types."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        return textwrap.fill(" ".join(text.split()), width, initial_indent=indent, subsequent_indent=indent,
                             break_on_hyphens=False)


class Parser(argparse.ArgumentParser):
    """Every `formula` parser: sub-commands are made with the parser's own class, so they share its formatter."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        kw.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kw)


class _Commands(argparse._SubParsersAction):
    """The sub-commands of `formula`: each one's help line is the one `COMMANDS` holds (written once, there; the
    module that registers a command writes its description and options)."""

    def add_parser(self, name: str, **kw: Any) -> Any:
        if name in COMMANDS:
            kw.setdefault("help", COMMANDS[name][1])
        return super().add_parser(name, **kw)


def _parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = Parser(prog="formula", description=DESCRIPTION)
    parser.add_argument("--version", action=_Version)
    parser.register("action", "parsers", _Commands)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    return parser, sub


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `command`, only the modules that build that sub-command are imported."""
    parser, sub = _parser()
    if command is None:
        modules = _all_modules()
    else:
        names = (COMMANDS[command][0], *EXTENDED.get(command, ()))
        modules = tuple(importlib.import_module(n) for n in COMMAND_MODULES if n in names)
    for module in modules:
        module.register(sub)
    return parser


def _light_parser() -> argparse.ArgumentParser:
    """Top-level help and usage errors from the table alone: no command module is imported."""
    parser, sub = _parser()
    for name in COMMANDS:
        sub.add_parser(name, add_help=False)
    return parser


def _command(argv: list[str]) -> str | None:
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS and "-h" not in argv[: argv.index(first)] else None


RELEASING = frozenset({"release", "fix", "approve", "activate"})  # commands that make a version active or a draft


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 done, 1 a tool error (`error: ...` on stderr), 2 a usage error (argparse)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = _command(argv)
    parser = build_parser(command) if command is not None else _light_parser()
    args = parser.parse_args(argv)
    from registry.cliutil import CommandError  # imported once a command runs (every command reads it)
    from registry.loader import ROOT_ENV

    if command in RELEASING:  # every release runs the calculator's reference cases (the audit layer's check)
        from audit.release_check import reference_lines
        from registry.governance.writeplan import on_release

        on_release(reference_lines)

    from registry import tables  # --wide: this command's tables at their full width (and the note names it)

    tables.WIDE, tables.WIDE_OPTION = bool(getattr(args, "wide", False)), hasattr(args, "wide")
    from registry.loader import find_root, hold

    before = os.environ.get(ROOT_ENV)
    found = find_root(getattr(args, "root", None))  # the one rule (--root, the environment, upwards, installed)
    os.environ[ROOT_ENV] = str(found.path)  # every layer the command calls, and every process it starts, reads it
    hold(found)
    try:
        return int(args.handler(args) or 0)
    except CommandError as e:
        from registry.terminal import printable, tell

        tell(printable(f"error: {e}"), file=sys.stderr)  # messages quote registry text and arguments
        return 1
    except KeyboardInterrupt as e:
        print(f"interrupted: {e}" if str(e) else "interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    finally:
        tables.WIDE = tables.WIDE_OPTION = False
        hold(None)
        if before is None:  # in-process callers (tests, scripts) get their environment back
            os.environ.pop(ROOT_ENV, None)
        else:
            os.environ[ROOT_ENV] = before


if __name__ == "__main__":
    sys.exit(main())
