"""The benchmark reader: every column checked, problems named by file, row and column."""
from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import pytest

from solver.data import BENCHMARK_COLUMNS, ONE_SHOT, REFERENCE_CASES, DatasetError, read_benchmark, read_cases


def _rows() -> list[dict[str, str]]:
    with ONE_SHOT.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _write(path: Path, rows: list[dict[str, str]], columns=BENCHMARK_COLUMNS) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    return path


def test_one_shot_reads_with_types_and_hash():
    ds = read_benchmark(ONE_SHOT)
    assert len(ds.rows) == 55 and ds.kind == "benchmark"
    assert ds.sha256 == "sha256:" + hashlib.sha256(ONE_SHOT.read_bytes()).hexdigest()
    by_id = {r.calculator_id: r for r in ds.rows}
    assert by_id[2].answer == pytest.approx(67.00495) and by_id[2].lower == pytest.approx(63.6547)
    assert by_id[69].answer == (34, 3)  # ('34 weeks', '3 days')
    assert by_id[13].answer == "12/02/2000"
    assert isinstance(by_id[4].answer, int)  # an integer score
    assert by_id[24].output_type == "integer" and by_id[24].lower != by_id[24].upper  # dosage window kept


def test_reference_cases_read_without_notes():
    ds = read_benchmark(REFERENCE_CASES)
    assert len(ds.rows) == 2200 and ds.kind == "reference" and all(r.note == "" for r in ds.rows)


def test_read_cases_api_unchanged():
    assert len(read_cases(REFERENCE_CASES)) == 2200 and len(read_cases(ONE_SHOT)) == 55


def test_parquet_same_rows(tmp_path):
    pd = pytest.importorskip("pandas")  # the test extra installs it; this only guards a bare install
    frame = pd.read_csv(ONE_SHOT, dtype=str, keep_default_na=False)
    frame["Row Number"] = frame["Row Number"].astype(int)
    frame["Calculator ID"] = frame["Calculator ID"].astype(int)
    path = tmp_path / "test.parquet"
    frame.to_parquet(path)
    a, b = read_benchmark(ONE_SHOT).rows, read_benchmark(path).rows
    assert [(r.row_number, r.answer, r.entities, r.note) for r in a] == [(r.row_number, r.answer, r.entities, r.note)
                                                                          for r in b]


def test_missing_column_named(tmp_path):
    cols = [c for c in BENCHMARK_COLUMNS if c != "Lower Limit"]
    path = _write(tmp_path / "x.csv", _rows(), cols)
    with pytest.raises(DatasetError, match=r"x\.csv: missing column\(s\) 'Lower Limit'"):
        read_benchmark(path)


@pytest.mark.parametrize("column,value,message", [
    ("Calculator ID", "abc", "'Calculator ID': 'abc' is not a whole number"),
    ("Ground Truth Answer", "n/a", "'Ground Truth Answer': 'n/a' is not a number"),
    ("Upper Limit", "", "'Upper Limit'"),
    ("Relevant Entities", "{not json", "'Relevant Entities'"),
    ("Relevant Entities", "[1, 2]", "must be a mapping"),
    ("Output Type", "fraction", "'Output Type': 'fraction' is not one of"),
    ("Row Number", "1.5", "'Row Number'"),
])
def test_bad_cell_named_by_row_and_column(tmp_path, column, value, message):
    rows = _rows()
    rows[3][column] = value
    path = _write(tmp_path / "bad.csv", rows)
    with pytest.raises(DatasetError) as info:
        read_benchmark(path)
    assert f"bad.csv:5: column '{column}'" in str(info.value) and message in str(info.value)


def test_bad_date_answer(tmp_path):
    rows = _rows()
    i = next(n for n, r in enumerate(rows) if r["Calculator ID"] == "13")
    rows[i]["Ground Truth Answer"] = "2000-13-45"
    with pytest.raises(DatasetError, match="neither an MM/DD/YYYY date"):
        read_benchmark(_write(tmp_path / "d.csv", rows))


def test_duplicate_row_number(tmp_path):
    rows = _rows()
    rows[1]["Row Number"] = rows[0]["Row Number"]
    with pytest.raises(DatasetError, match="repeats"):
        read_benchmark(_write(tmp_path / "dup.csv", rows))


def test_unsupported_and_absent(tmp_path):
    (tmp_path / "x.xlsx").write_text("x")
    with pytest.raises(DatasetError, match="unsupported format"):
        read_benchmark(tmp_path / "x.xlsx")
    with pytest.raises(DatasetError, match="no such file"):
        read_benchmark(tmp_path / "none.csv")
    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    with pytest.raises(DatasetError, match="not a readable parquet"):
        read_benchmark(tmp_path / "bad.parquet")
