"""Terminal tables (registry/tables.py): wrapped at spaces only, identifiers whole, low-value columns left out
with a note naming them and how to see them; `--wide` shows everything (issue 29: `awa/iti/ng/app/rov/al`,
`R./Mainta/iner`, `versio/n`, 40 stale rows in 360 lines)."""
from __future__ import annotations

import re

import pytest

from registry import tables
from registry.tables import render_table
from tests.helpers import run

STATES = ["awaiting approval", "approved, awaiting its effective date", "awaiting approval"]
ROWS = [{"slug": f"sodium-correction-hyperglycemia-{k}", "version": f"1.{k}.0", "state": STATES[k % 3],
         "effective": "2026-12-01", "drafted_by": "R. Maintainer (clinical pharmacist)",
         "reason": "Published rounding as registry data: both OPTN steps half up; the benchmark's round-half-even "
                   "kept as deviation rounding-ties",
         "row_number": 1000 + k, "seed": k, "arm": "program-solve"} for k in range(40)]
COLS = ["slug", "version", "state", "effective", "drafted_by", "reason", "row_number", "seed", "arm"]


def _tokens(text: str) -> set[str]:
    return set(text.split())


@pytest.mark.parametrize("width", [60, 80, 120])
def test_cells_wrap_at_spaces_only_and_identifiers_stay_whole(monkeypatch, width):
    monkeypatch.setenv("COLUMNS", str(width))
    text = render_table(ROWS, COLS, drop=["arm", "seed", "row_number"])
    body = text.split("\n(not shown")[0]
    assert all(len(line) <= width for line in body.splitlines())
    tokens = _tokens(body)
    shown = [c for c in COLS if tables.heading(c).split()[0] in body.splitlines()[0]]
    for r in ROWS:
        for c in shown:
            for word in str(r[c]).split():
                assert word in tokens, f"{word!r} of {c} broken at {width} columns"
    for c in shown:  # headings too: `released by`, never `versio/n`
        assert all(w in tokens for w in tables.heading(c).split()), c


def test_low_value_columns_go_before_prose_turns_into_a_word_a_line(monkeypatch):
    """At 80 columns the row numbers, seeds and arms go (and the note says so), so the reason reads in a few
    lines per row instead of one word per line."""
    monkeypatch.setenv("COLUMNS", "80")
    text = render_table(ROWS, COLS, drop=["arm", "seed", "row_number"])
    body, note = text.split("\n(not shown")
    note = " ".join(note.split())
    assert "row number" in note and "seed" in note and "arm" in note and "--format json" in note
    assert len(body.splitlines()) <= 2 + 6 * len(ROWS)
    reason_lines = [line for line in body.splitlines()[2:] if line.strip()]
    assert len(reason_lines) < 9 * len(ROWS)


def test_not_a_terminal_or_wide_shows_every_column(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    assert "program-solve" in render_table(ROWS, COLS, drop=["arm"])
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(tables, "WIDE", True)
    text = render_table(ROWS, COLS, drop=["arm", "seed", "row_number"])
    assert "program-solve" in text and "not shown" not in text


def test_the_wide_option_of_the_commands(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, narrow, _ = run(capsys, "list")
    assert code == 0 and "(not shown at 80 columns:" in narrow and "--wide" in narrow
    code, wide, _ = run(capsys, "list", "--wide")
    assert code == 0 and "not shown" not in wide and "intended use" in wide
    code, wide, _ = run(capsys, "history", "meld-na", "--wide")  # a table, whatever the terminal (no records)
    assert code == 0 and "not shown" not in wide and re.search(r"sha256:[0-9a-f]{12}", wide)
    assert wide.splitlines()[1].split()[0] == "version"
    assert tables.WIDE is False  # reset after the command


def test_a_long_token_is_cut_on_its_own_lines_rather_than_losing_its_column(capsys, monkeypatch):
    """One dotted identifier in the changelog's reasons must not cost the table its `why` column at 80 columns;
    the token gets lines of its own, cut at the column's edge, and every other word stays whole."""
    assert tables.wrap_cell("lower bound (published_map_points); deviation", 12) == \
        "lower bound\n(published_m\nap_points);\ndeviation"
    assert tables.wrap_cell("awaiting approval", 8) == "awaiting\napproval"
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "changelog", "--format", "table")
    assert code == 0 and out.splitlines()[0].split() == ["effective", "slug", "version", "why"]
    assert all(len(line) <= 80 for line in out.splitlines())
