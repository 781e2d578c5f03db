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
    {"pid": "p2", "sex": "mle", "age": 60, "age_unit": "years", "weight": 70.0, "weight_unit": "kg",
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
    assert main([a.format(src=src, dst=dst) for a in argv]) == 3  # a row without a value: exit 3
    assert "2 values, 1 row error" in capsys.readouterr().err
    assert main([a.format(src=src, dst=dst) for a in argv] + ["--allow-errors"]) == 0
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


def _bmi_rows(n: int) -> pd.DataFrame:
    return pd.DataFrame({"pid": [f"p{i}" for i in range(n)], "weight": [60.0 + i % 40 for i in range(n)],
                         "weight_unit": "kg", "height": [150.0 + i % 50 for i in range(n)], "height_unit": "cm"})


@pytest.mark.parametrize("name, content, said", [
    ("bad.parquet", b"not parquet", "cannot read {path} as a Parquet table"),
    ("bad.csv", b"\xff\xfe\x00weight", "{path}: not UTF-8 text"),
    ("empty.csv", b"", "cannot read {path} as a CSV table"),
])
def test_an_unreadable_table_is_refused_by_name(tmp_path, capsys, name, content, said):
    """A file that is no table of its kind: one message naming it and what to do, exit 1, nothing written."""
    src = tmp_path / name
    src.write_bytes(content)
    out = tmp_path / f"o{src.suffix}"
    assert main(["batch", str(src), "--calculator", "ckd-epi-2021", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert said.format(path=src) in err and "Traceback" not in err and err.count("\n") == 1, err
    assert not out.exists()


def test_parquet_streams_batch_by_batch(tmp_path, capsys, monkeypatch):
    """A parquet input is read in batches (several here) and written batch by batch; values equal compute's."""
    from solver import batch_stream

    monkeypatch.setattr(batch_stream, "BATCH_ROWS", 7)
    frame = _bmi_rows(30)
    frame.loc[11, "weight"] = -5.0  # one bad row, in the second batch
    src = tmp_path / "big.parquet"
    frame.to_parquet(src, row_group_size=10)
    for suffix in (".parquet", ".csv"):
        dst = tmp_path / f"out{suffix}"
        assert main(["batch", str(src), "--calculator", "body-mass-index", "--out", str(dst), "--no-progress"]) == 3
        assert "29 values, 1 row error" in capsys.readouterr().err
        out = pd.read_parquet(dst) if suffix == ".parquet" else pd.read_csv(dst)
        assert out["pid"].tolist() == frame["pid"].tolist()
        for i in (0, 10, 29):
            want = compute(6, {"weight": [frame["weight"][i], "kg"], "height": [frame["height"][i], "cm"]}, variant="benchmark").value
            assert out["value"][i] == want
        assert pd.isna(out["value"][11]) and "weight" in out["error"][11]
        assert out["error"].notna().sum() == 1


def test_one_bad_cell_is_its_rows_error_only(tmp_path, capsys):
    src, dst = tmp_path / "c.csv", tmp_path / "o.csv"
    src.write_text("weight,weight_unit,height,height_unit\n70,kg,170,cm\n1,2,kg,170,cm\nabc,kg,180,cm\n80.5,kg,175,cm\n"
                   .replace("1,2,kg", '"1,2",kg'), encoding="utf-8")
    assert main(["batch", str(src), "--calculator", "6", "--out", str(dst), "--allow-errors"]) == 0
    assert "2 values, 2 row errors" in capsys.readouterr().err
    out = pd.read_csv(dst)
    assert out["value"][0] == compute(6, {"weight": [70, "kg"], "height": [170, "cm"]}, variant="benchmark").value
    assert out["value"][3] == compute(6, {"weight": [80.5, "kg"], "height": [175, "cm"]}, variant="benchmark").value
    assert "'1,2'" in out["error"][1] and "'abc'" in out["error"][2]


def test_bare_numeric_age_says_how_to_give_the_unit(tmp_path, capsys):
    src = tmp_path / "c.csv"
    pd.DataFrame({"age": [60, 70], "sex": ["Male", "Female"], "creatinine": [1.1, 0.9],
                  "creatinine_unit": "mg/dL"}).to_csv(src, index=False)
    assert main(["batch", str(src), "--calculator", "ckd-epi-2021", "--out", str(tmp_path / "o.csv")]) == 1
    err = capsys.readouterr().err
    assert "'age_unit'" in err and '--columns \'{"age": ["age", "years"]}\'' in err
    assert main(["batch", str(src), "--calculator", "ckd-epi-2021", "--out", str(tmp_path / "o.csv"),
                 "--columns", '{"age": ["age", "years"]}']) == 0


def test_out_equal_to_the_input_is_refused(tmp_path, capsys):
    src = tmp_path / "c.csv"
    _bmi_rows(3).to_csv(src, index=False)
    before = src.read_bytes()
    for out in (str(src), str(tmp_path / "." / "c.csv")):
        assert main(["batch", str(src), "--calculator", "6", "--out", out]) == 1
        assert "is the input table" in capsys.readouterr().err
    assert src.read_bytes() == before


def test_a_table_without_a_required_input_is_refused_before_computing(tmp_path, capsys):
    """exit 2, naming every missing input of every calculator asked for, the table's columns and a --columns
    mapping (a near column name where there is one); nothing is written."""
    src, dst = tmp_path / "c.parquet", tmp_path / "o.parquet"
    pd.DataFrame({"Weight": [70.0], "Weight_unit": ["kg"], "ht": [170.0]}).to_parquet(src)
    assert main(["batch", str(src), "--calculator", "body-mass-index", "--calculator", "2", "--out", str(dst)]) == 2
    err = capsys.readouterr().err
    assert "body-mass-index needs 'weight', 'height'" in err
    assert "creatinine-clearance-cockcroft-gault needs 'sex', 'age', 'weight', 'height'" in err
    assert "the table's columns: Weight, Weight_unit, ht" in err
    assert '"weight": "Weight"' in err and '"height": "COLUMN"' in err
    assert not dst.exists()
    assert all(len(line) <= 80 for line in err.splitlines())


def test_several_calculators_in_one_pass(tmp_path, capsys):
    """Each calculator gets a <slug> and a <slug>_error column; --columns parts go to the calculators that read them."""
    src = tmp_path / "c.parquet"
    frame = _bmi_rows(5).assign(age=[40, 50, 60, 70, 80], sex=["Male", "Female", "Male", "Female", "x"],
                                creatinine=[1.0, 1.1, 1.2, 1.3, 1.4])
    frame.to_parquet(src)
    for suffix in (".parquet", ".csv"):
        dst = tmp_path / f"o{suffix}"
        argv = ["batch", str(src), "--calculator", "body-mass-index,ckd-epi-2021", "--out", str(dst), "--columns",
                '{"age": ["age", "years"], "creatinine": ["creatinine", "mg/dL"]}', "--allow-errors"]
        assert main(argv) == 0
        err = capsys.readouterr().err
        assert "body-mass-index 1.0.1 (published, vectorised): 5 values, 0 row errors" in err
        assert "ckd-epi-2021 1.2.1 (published, vectorised): 4 values, 1 row error" in err
        out = pd.read_parquet(dst) if suffix == ".parquet" else pd.read_csv(dst)
        assert list(out.columns[-4:]) == ["body-mass-index", "body-mass-index_error", "ckd-epi-2021",
                                          "ckd-epi-2021_error"]
        want = compute("ckd-epi-2021", {"age": [50, "years"], "sex": "Female", "creatinine": [1.1, "mg/dL"]},
                       variant="published").value
        assert out["ckd-epi-2021"][1] == want and out["body-mass-index_error"].isna().all()
        assert "'sex'" in out["ckd-epi-2021_error"][4]


def test_convert_to_parquet_then_batch(tmp_path, capsys):
    """Benchmark entity objects (one a line, or under "Relevant Entities") -> the schema; a four-part height is
    folded into inches; the batch over it gives compute's answers on the original objects."""
    import pyarrow.parquet as pq

    rows = [{"weight": [150, "lbs"], "height": [5, "ft", 9, "in"]},
            {"Relevant Entities": {"weight": [70.5, "kg"], "height": [170, "cm"]}}]
    src, mid, dst = tmp_path / "e.jsonl", tmp_path / "c.parquet", tmp_path / "o.parquet"
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    assert main(["convert", "--to", "parquet", str(src), str(mid)]) == 0
    table = pq.read_table(mid)
    assert table.column("height").to_pylist() == [69, 170] and table.column("height_unit").to_pylist() == ["in", "cm"]
    assert str(table.schema.field("weight_unit").type).startswith("dictionary")
    assert main(["batch", str(mid), "--calculator", "body-mass-index", "--out", str(dst)]) == 0
    got = pd.read_parquet(dst)["value"].tolist()
    assert got == [compute(6, {"weight": [150, "lbs"], "height": [5, "ft", 9, "in"]}, variant="published").value,
                   compute(6, rows[1]["Relevant Entities"], variant="published").value]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{\n", encoding="utf-8")
    assert main(["convert", "--to", "parquet", str(bad), str(tmp_path / "x.parquet")]) == 1
    assert "bad.jsonl:1: not JSON" in capsys.readouterr().err and not (tmp_path / "x.parquet").exists()


def test_the_parquet_bench_runs_and_reports_its_floor_and_ceilings() -> None:
    """bench/columnar.py --frames parquet (issue 48's measure) on a small file: it runs `formula batch`, the loop and
    the floor, checks their answers agree, and reports each ratio and the ceilings' summary (no timing asserted)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("pyarrow")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "bench/columnar.py", "--frames", "parquet", "--rows", "3000", "--loop-rows",
                           "60", "--repeat", "1", "--only", "body-mass-index", "--format", "json"], cwd=root,
                          capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    (got,) = json.loads(done.stdout)["results"]
    assert got["calculator"] == "body-mass-index" and got["rows"] == 3000 and got["vectorised"]
    assert got["floor_s"] > 0 and {"batch_s", "loop_s_scaled", "ratio", "ceiling", "peak_mb", "fixed_s"} <= set(got)
