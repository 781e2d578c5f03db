"""CLI start-up stays lazy: `formula --help` imports no command module, and `cli.main` none of the heavy ones.

The command table in cli.main (names, owners, help lines) must match what the modules register, so
the lazy top-level help never drifts from the real parsers.
"""
from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys

from cli import main as cli_main
from tests.helpers import PROJECT_ROOT

HEAVY = ("pandas", "numpy", "scipy", "pyarrow", "solver.executor", "solver.library", "registry.loader", "jinja2",
         "pydantic")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         cwd=PROJECT_ROOT, capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_importing_cli_main_imports_nothing_heavy() -> None:
    loaded = _modules_after("import cli.main")
    assert not [m for m in HEAVY if m in loaded], sorted(m for m in HEAVY if m in loaded)


def test_top_level_help_imports_no_command_module() -> None:
    code = ("import contextlib, io, cli.main\nwith contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        cli.main.main(['--help'])\n    except SystemExit:\n        pass")
    loaded = _modules_after(code)
    assert not [m for m in (*HEAVY, *cli_main.COMMAND_MODULES) if m in loaded]


def test_solve_does_not_import_pandas_or_numpy() -> None:
    code = ("import contextlib, io, cli.main\nwith contextlib.redirect_stdout(io.StringIO()):\n"
            "    cli.main.main(['solve', '--calculator', 'body-mass-index', '--entities', "
            "'{\"weight\": [70, \"kg\"], \"height\": [170, \"cm\"]}'])")
    loaded = _modules_after(code)
    assert "pandas" not in loaded and "numpy" not in loaded


def test_the_command_table_matches_the_modules() -> None:
    """Each module registers exactly the commands COMMANDS names for it, without a help line of its own (the line
    is written once, in COMMANDS; cli.main gives it to the parser)."""
    registered: dict[str, str] = {}
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    for name in cli_main.COMMAND_MODULES:
        before = set(sub.choices)
        importlib.import_module(name).register(sub)
        registered.update({c: name for c in set(sub.choices) - before})
    own_help = [a.dest for a in sub._choices_actions]  # a choice action is made only for a parser given help=
    assert registered == {c: owner for c, (owner, _) in cli_main.COMMANDS.items()}
    assert own_help == [], f"help lines written in a module as well as in cli.main.COMMANDS: {own_help}"
    real = cli_main.build_parser()
    subs = next(a for a in real._actions if isinstance(a, argparse._SubParsersAction))
    assert {a.dest: a.help for a in subs._choices_actions} == {c: h for c, (_, h) in cli_main.COMMANDS.items()}
    extended = {c: tuple(m for m in mods) for c, mods in cli_main.EXTENDED.items()}
    assert extended == {"solve": ("solver.batch_cli",), "schema": ("solver.tools_cli",)}


def test_one_command_parser_equals_its_part_of_the_whole() -> None:
    whole = cli_main.build_parser()
    subs = next(a for a in whole._actions if isinstance(a, argparse._SubParsersAction))
    for command in ("solve", "schema", "batch", "validate"):
        alone = cli_main.build_parser(command)
        one = next(a for a in alone._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
        assert sorted(a.dest for a in one._actions) == sorted(a.dest for a in subs.choices[command]._actions), command
