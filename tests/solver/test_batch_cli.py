"""`formula batch` / `formula solve --batch`: a table in, the same table with value and error out."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from cli.main import main
from solver.library import compute

ROWS = [
    {"pid": "p1", "sex": "Male", "age": 53, "age_unit": "years", "weight": 87.0, "weight_unit": "kg",
     "height": json.dumps([175, "cm"]), "creatinine": json.dumps([1.39, "mg/dL"])},
    {"pid": "p2", "sex": "male", "age": 60, "age_unit": "years", "weight": 70.0, "weight_unit": "kg",
     "height": json.dumps([5, "ft", 9, "in"]), "creatinine": json.dumps([100, "µmol/L"])},
    {"pid": "p3", "sex": "Female", "age": 71, "age_unit": "years", "weight": 154.0, "weight_unit": "lbs",
     "height": json.dumps([5, "ft", 4, "in"]), "creatinine": json.dumps([88, "µmol/L"])},
]


def _ents(r):
    return {"sex": r["sex"], "age": [r["age"], r["age_unit"]], "weight": [r["weight"], r["weight_unit"]],
            "height": json.loads(r["height"]), "creatinine": json.loads(r["creatinine"])}


@pytest.mark.parametrize("suffix, argv", [
    (".csv", ["batch", "{src}", "--calculator", "2", "--out", "{dst}"]),
    (".parquet", ["solve", "--batch", "{src}", "--calculator", "creatinine-clearance-cockcroft-gault",
                  "--out", "{dst}", "--no-progress"]),
])
def test_batch_round_trip(tmp_path, capsys, suffix, argv):
    src, dst = tmp_path / "cohort.csv", tmp_path / f"out{suffix}"
    pd.DataFrame(ROWS).to_csv(src, index=False)
    assert main([a.format(src=src, dst=dst) for a in argv]) == 0
    assert "2 values, 1 row errors" in capsys.readouterr().err
    out = pd.read_csv(dst) if suffix == ".csv" else pd.read_parquet(dst)
    assert out["pid"].tolist() == ["p1", "p2", "p3"]
    assert out["value"][0] == compute(2, _ents(ROWS[0]), variant="published").value
    assert out["value"][2] == compute(2, _ents(ROWS[2]), variant="published").value
    assert "'sex'" in out["error"][1]
    assert not list(tmp_path.glob(".out*"))  # no temporary file left behind


def test_batch_refusals(tmp_path, capsys):
    src = tmp_path / "c.csv"
    pd.DataFrame(ROWS).to_csv(src, index=False)
    assert main(["batch", str(src), "--calculator", "2", "--out", str(tmp_path / "o.xlsx")]) == 1
    assert "must end in .csv or .parquet" in capsys.readouterr().err
    assert main(["batch", str(tmp_path / "none.csv"), "--calculator", "2", "--out", str(tmp_path / "o.csv")]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["batch", str(src), "--calculator", "no-such", "--out", str(tmp_path / "o.csv")]) == 1
    assert "unknown calculator" in capsys.readouterr().err
    assert main(["batch", str(src), "--calculator", "2", "--out", str(tmp_path / "o.csv"),
                 "--columns", '{"mass": "weight"}']) == 1
    assert "unknown input" in capsys.readouterr().err
    assert not (tmp_path / "o.csv").exists()
    with pytest.raises(SystemExit) as e:
        main(["solve", "--calculator", "2"])
    assert e.value.code == 2
    with pytest.raises(SystemExit):
        main(["solve", "--calculator", "2", "--batch", str(src)])  # no --out
