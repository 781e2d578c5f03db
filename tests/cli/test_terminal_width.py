"""80 columns in a real terminal (issue 36): `show`, `list`, `pending`, `history`, `due` and every `--help`, each run
in a pseudo-terminal 80 and 120 columns wide (no $COLUMNS: the width the terminal reports), on a registry with a
draft awaiting approval, an approved draft awaiting its date and signed decisions. No line is wider than the
terminal, no word is split at a hyphen, and the governance columns (what changes, who drafted or released it, who
approved it) are never what is left out to make room."""
from __future__ import annotations

import datetime as dt
import os
import re
import sys
from pathlib import Path

import pytest

from registry import clock, loader
from tests.helpers import committee, copy_registry, in_terminal, run
from tests.registry.helpers import NEW, SODIUM

WIDTHS = (80, 120)
CALCIUM = "calcium-correction"
# a line ending inside a hyphenated word ('ssh-' / 'agent'): a letter or digit, then the hyphen
SPLIT = re.compile(r"[A-Za-z0-9]-$")


@pytest.fixture(scope="module")
def committee_registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry with signed decisions: the Katz fix drafted, approved by the chair and waiting for its date, and
    a calcium draft waiting for approval."""
    root = copy_registry(tmp_path_factory.mktemp("terminal") / "registry")
    people = committee(root)
    later = (clock.today() + dt.timedelta(days=5)).isoformat()
    capsys = _Quiet()
    for argv in (["fix", SODIUM, "--set", "correction_per_mg_dl_glucose=0.016", "--label",
                  "correction_per_mg_dl_glucose=Katz factor", "--reason", "Katz 1973 factor", "--draft", "--date",
                  later, *people.args("author")],
                 ["approve", SODIUM, NEW, "--reason", "agreed at the December meeting", *people.args("chair")],
                 ["fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "a draft awaiting approval",
                  "--draft", *people.args("author")]):
        code, _, err = capsys.run(*argv, "--root", str(root))
        assert code == 0, err
    loader.clear_cache()
    return root


class _Quiet:
    """`tests.helpers.run` for a module fixture (which has no capsys): the output is dropped."""

    def run(self, *argv: str) -> tuple[int, str, str]:
        import contextlib
        import io

        out, err = io.StringIO(), io.StringIO()
        from cli.main import main

        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
        return code, out.getvalue(), err.getvalue()


def _env(root: Path) -> dict[str, str]:
    return {**os.environ, loader.ROOT_ENV: str(root)}


def _problems(text: str, width: int) -> list[str]:
    lines = text.splitlines()
    over = [f"{len(line)} > {width}: {line}" for line in lines if len(line) > width]
    split = [f"split at a hyphen: {a!r} / {b!r}" for a, b in zip(lines, lines[1:])
             if SPLIT.search(a) and b.strip()[:1].isalpha()]
    return over + split


COMMANDS = [["show", SODIUM], ["list"], ["pending"], ["history", SODIUM], ["due"], ["--help"]]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a))
def test_tables_and_texts_fit_the_terminal(committee_registry: Path, argv: list[str], width: int) -> None:
    code, out = in_terminal([sys.executable, "-m", "cli", *argv], width, env=_env(committee_registry))
    assert code == 0, out
    assert "Traceback" not in out and out.strip()
    assert not _problems(out, width), "\n".join(_problems(out, width))


@pytest.mark.parametrize("width", WIDTHS)
def test_pending_keeps_what_changes_who_drafted_and_who_approved(committee_registry: Path, width: int) -> None:
    _, out = in_terminal([sys.executable, "-m", "cli", "pending"], width, env=_env(committee_registry))
    flat = " ".join(out.split())
    for words in ("drafted by", "changes", "approved by", "reason", "Dr A. Chair", "R. Maintainer",
                  "albumin_coefficient: 0.8 -> 0.7", "Katz 1973 factor", "Katz factor"):
        assert words in flat, (words, out)
    assert not re.search(r"not shown at \d+ columns: [^;]*(changes|approved by|drafted by)", flat), out


@pytest.mark.parametrize("width", WIDTHS)
def test_history_keeps_who_released_and_approved(committee_registry: Path, width: int) -> None:
    _, out = in_terminal([sys.executable, "-m", "cli", "history", SODIUM], width, env=_env(committee_registry))
    flat = " ".join(out.split())
    assert "released by" in flat and "approved" in flat and "Dr A. Chair (20" in flat and "R. Maintainer" in flat
    assert not re.search(r"not shown at \d+ columns: [^;]*(released by|approved|changelog|effective)", flat), out


def test_list_keeps_a_row_on_one_line_unless_its_concern_is_long(committee_registry: Path) -> None:
    _, out = in_terminal([sys.executable, "-m", "cli", "list"], 80, env=_env(committee_registry))
    table, summary = out.split("\n\n", 1)
    rows = [line for line in table.splitlines() if re.match(r"^(\d+|-)\s", line)]
    continued = [line for line in table.splitlines()[2:] if line.startswith(" ") and "(paper)" not in line]
    assert len(rows) == len(loader.get_registry(committee_registry).calculators)
    assert all(line.split()[0] != "none" for line in continued)  # only long concerns take a second line
    assert len(continued) <= len(rows) // 3, table
    assert "wrong 10" in " ".join(summary.split("\n  ")) and "wrong\n" not in summary
    assert "_" not in summary.split("current text")[0]  # 'contested coefficient 4', not contested_coefficient


HELP_SCRIPT = """
import argparse
from cli.main import build_parser
from tests.cli.test_malformed_args import leaves

def every(parser, words=()):
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from every(child, (*words, name))

for words, parser in every(build_parser()):
    print("=== formula", " ".join(words))
    print(parser.format_help())
"""


@pytest.mark.parametrize("width", WIDTHS)
def test_every_help_fits_and_keeps_hyphenated_words_whole(width: int) -> None:
    code, out = in_terminal([sys.executable, "-c", HELP_SCRIPT], width, cwd=Path(__file__).resolve().parents[2])
    assert code == 0, out[-3000:]
    helps = out.split("=== formula")[1:]
    assert len(helps) > 40  # every command and sub-command
    problems = [f"formula{h.splitlines()[0]}: {p}" for h in helps for p in _problems(h, width)]
    assert not problems, "\n".join(problems)
    approve = next(h for h in helps if h.startswith(" approve\n"))
    assert "ssh-agent" in approve  # argparse's own wrapping broke it into 'ssh-' / 'agent'


def test_review_pr_names_its_output_by_its_metavar(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run(capsys, "review-pr", "--help")
    out = " ".join(capsys.readouterr().out.split())
    assert "--out OUT write the report to the file OUT" in out and "FILE" not in out


def test_records_when_the_kept_columns_cannot_stand_side_by_side(monkeypatch: pytest.MonkeyPatch) -> None:
    from registry.tables import render_table

    monkeypatch.setenv("COLUMNS", "60")
    rows = [{"slug": "creatinine-clearance-cockcroft-gault", "version": "1.1.0", "who": "Dr A. Chair (chair)",
             "changes": "constant factor: 0.024 -> 0.016", "hash": "sha256:" + "0" * 12}]
    text = render_table(rows, ["slug", "version", "who", "changes", "hash"], drop=["hash"],
                        keep=["version", "who", "changes"])
    assert text.splitlines()[0] == "creatinine-clearance-cockcroft-gault  1.1.0"
    assert "  who      Dr A. Chair (chair)" in text and "0.024 -> 0.016" in text and "sha256:" in text
    assert all(len(line) <= 60 for line in text.splitlines())
    monkeypatch.setenv("COLUMNS", "200")  # room enough: a table
    assert render_table(rows, ["slug", "version", "who", "changes", "hash"], keep=["who"]).splitlines()[0].split() == \
        ["slug", "version", "who", "changes", "hash"]
