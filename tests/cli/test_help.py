"""Every option and argument of every command says what it is for in `--help` (issue 29: 13 commands had a
bare `--format`, and `diff`'s versions, `score`'s folder, `import`'s files, `texts changed --since` and
`solve --route` said nothing)."""
from __future__ import annotations

import argparse

from cli.main import build_parser


def _silent(parser: argparse.ArgumentParser, name: str) -> list[str]:
    out = []
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sub, p in a.choices.items():
                out += _silent(p, f"{name} {sub}")
        elif isinstance(a, argparse._HelpAction) or a.help == argparse.SUPPRESS:
            continue
        elif not (a.help or "").strip():
            out.append(f"{name} {'/'.join(a.option_strings) or a.dest}")
    return out


def test_every_option_has_help():
    assert _silent(build_parser(), "formula") == []


def test_the_help_of_a_command_shows_it(capsys):
    import pytest

    with pytest.raises(SystemExit):
        build_parser("solve").parse_args(["solve", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--route" in out and "the library only" in out and "json: the whole answer record" in out
