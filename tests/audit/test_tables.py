"""Report tables from synthetic runs whose answers the tests set: every number is recomputed here
from the same rules, independently of audit.tables."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from audit.runs import RunError, read_run
from audit.tables import build_report, to_csv, to_markdown
from cli.main import main
from tests.audit.synthetic import Case, benchmark_cases, right, slow_bootstrap, slow_sign_flip_p, write_run

SEEDS = (42, 43, 44)
DRAWS = 200


# Rules with structure per audit group, per calculator and per seed.
def prog(c: Case, s: int) -> tuple[str, bool]:
    if c.group == "replaced":
        return ("raised", False) if c.index == 0 else ("value", c.index >= 2)
    if c.calculator_id % 3 == 0:
        return ("value", c.index < 1)
    return ("value", c.index < 3 or s == 44)


def arith(c: Case, s: int) -> tuple[str, bool]:
    if c.group == "replaced":
        return "answered", c.index < 1
    return ("unreadable", False) if c.index == 3 and s == 42 else ("answered", c.index < 2)


def gold(c: Case, s: int) -> tuple[str, bool]:
    return ("value", True) if c.calculator_id < 20 else ("no_answer", False)


RULES = {"prog": prog, "arith": arith, "gold": gold}
ARMS = {"prog": "program-solve", "arith": "open-book", "gold": "gold-solve"}


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return benchmark_cases(per_calc=4)


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory: pytest.TempPathFactory, cases: list[Case]) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    return {name: write_run(root / name, ARMS[name], cases, SEEDS, rule) for name, rule in RULES.items()}


@pytest.fixture(scope="module")
def report(run_dirs: dict[str, Path]) -> dict:
    return build_report([run_dirs["prog"], run_dirs["arith"], run_dirs["gold"]],
                        [("prog", "arith"), ("prog", "gold")], draws=DRAWS, seed=3)


def expected_frame(cases: list[Case], *names: str) -> pd.DataFrame:
    rows = []
    for s in SEEDS:
        for c in cases:
            row = {"row_number": c.row_number, "calculator_id": c.calculator_id, "seed": s, "group": c.group,
                   "category": c.category, "slug": c.slug}
            for n in names:
                row[n + "_outcome"], row[n] = RULES[n](c, s)
            rows.append(row)
    return pd.DataFrame(rows)


def output_kinds(cases: list[Case]) -> list[str]:
    from registry.loader import get_registry
    reg = get_registry()
    return [reg.calculators[c.slug].output.kind.value for c in cases]


def test_the_synthetic_registry_has_the_papers_groups(cases: list[Case]) -> None:
    calcs = {c.calculator_id: c.group for c in cases}
    assert len(calcs) == 55
    assert sorted(pd.Series(list(calcs.values())).value_counts().items()) == [("none", 39), ("other", 12),
                                                                              ("replaced", 4)]


def test_pinned_json_shape(report: dict) -> None:
    assert {"runs", "gaps", "draws", "seed"} <= set(report)
    assert report["draws"] == DRAWS and report["seed"] == 3
    for r in report["runs"]:
        assert {"dir", "arm", "model", "n_rows", "accuracy", "by_group", "outcomes"} <= set(r)
        assert set(r["by_group"]) == {"replaced", "other", "none"}
    for g in report["gaps"]:
        assert {"a", "b", "subset", "n", "gap_pp", "case_ci", "cluster_ci", "perm_p", "mcnemar_p", "holm_p", "icc",
                "n_eff"} <= set(g)
        assert g["subset"] in {"all", "not_replaced", "no_issue", "library_covered"}
    json.dumps(report)  # JSON-ready


def test_accuracy_on_the_full_set_subsets_and_audit_groups(report: dict, cases: list[Case]) -> None:
    df = expected_frame(cases, "prog", "arith", "gold")
    for entry in report["runs"]:
        name = entry["label"]
        assert entry["arm"] == ARMS[name] and entry["model"] == "test/model"
        assert entry["n_rows"] == len(cases) * len(SEEDS)
        assert entry["accuracy"] == pytest.approx(100 * df[name].mean())
        for g in ("replaced", "other", "none"):
            assert entry["by_group"][g] == pytest.approx(100 * df.loc[df.group == g, name].mean())
        assert entry["subsets"]["not_replaced"] == pytest.approx(100 * df.loc[df.group != "replaced", name].mean())
        assert entry["subsets"]["no_issue"] == pytest.approx(100 * df.loc[df.group == "none", name].mean())
        for cat, sub in df.groupby("category"):
            assert entry["by_category"][cat] == pytest.approx(100 * sub[name].mean())
        kinds = {c.calculator_id: k for c, k in zip(cases, output_kinds(cases))}
        for kind, sub in df.groupby(df.calculator_id.map(kinds)):
            assert entry["by_output_type"][kind] == pytest.approx(100 * sub[name].mean())
    assert report["subsets"]["all"] == 55 and report["subsets"]["not_replaced"] == 51
    assert report["subsets"]["no_issue"] == 39


def test_outcome_accounting(report: dict, cases: list[Case]) -> None:
    df = expected_frame(cases, "prog", "arith", "gold")
    n = len(df)
    by = {r["label"]: r["outcomes"] for r in report["runs"]}
    # prog: the first case of each replaced calculator raises on every seed
    raised = 4 * len(SEEDS)
    assert by["prog"]["by_kind"] == {"raised": raised, "value": n - raised}
    assert by["prog"]["executor"] == raised and by["prog"]["no_output"] == 0
    assert by["prog"]["none_pct"] == pytest.approx(100 * raised / n)
    assert by["prog"]["right"] == int(df["prog"].sum())
    assert by["prog"]["attempted_accuracy"] == pytest.approx(100 * df["prog"].sum() / (n - raised))
    dates = df.category == "date"
    assert by["prog"]["dates_accuracy"] == pytest.approx(100 * df.loc[dates, "prog"].mean())
    # arith: one unreadable reply per non-replaced calculator on seed 42, counted as no valid answer
    unread = 51
    assert by["arith"]["unreadable"] == unread and by["arith"]["none"] == unread
    assert by["arith"]["attempted_accuracy"] == pytest.approx(100 * df["arith"].sum() / n)  # unreadable is attempted
    # gold: abstains (no output) outside calculators 1-19
    absent = int((df.gold_outcome == "no_answer").sum())
    assert by["gold"]["no_output"] == absent and by["gold"]["wrong"] == 0
    assert by["gold"]["right_pct"] + by["gold"]["none_pct"] == pytest.approx(100)
    # every calculator is library-covered here, so the unsupported block is empty
    assert by["gold"]["supported"]["rows"] == n and by["gold"]["unsupported"]["rows"] == 0


def test_paired_gaps_against_independent_computations(report: dict, cases: list[Case]) -> None:
    df = expected_frame(cases, "prog", "arith", "gold")
    subsets = {"all": df, "not_replaced": df[df.group != "replaced"], "no_issue": df[df.group == "none"]}
    gaps = {(g["a"], g["b"], g["subset"]): g for g in report["gaps"]}
    assert set(gaps) == {(a, b, s) for a, b in (("prog", "arith"), ("prog", "gold")) for s in subsets}
    for (a, b, s), g in gaps.items():
        sub = subsets[s]
        d = sub[a].astype(int) - sub[b].astype(int)
        assert g["n"] == sub.row_number.nunique() and g["calculators"] == sub.calculator_id.nunique()
        assert g["gap_pp"] == pytest.approx(100 * d.mean())
        assert g["cluster_ci"] == pytest.approx(list(np.percentile(slow_bootstrap(sub, "calculator_id", DRAWS, 3,
                                                                                  a, b), [2.5, 97.5])))
        assert g["case_ci"] == pytest.approx(list(np.percentile(slow_bootstrap(sub, "row_number", DRAWS, 3, a, b),
                                                                [2.5, 97.5])))
        per_case = sub.assign(d=d).groupby("row_number")["d"].mean()
        assert g["perm_p"] == pytest.approx(slow_sign_flip_p(per_case.to_numpy(), DRAWS, 3))
        k_a = int((sub[a] & ~sub[b]).sum())
        k_b = int((~sub[a] & sub[b]).sum())
        assert g["mcnemar_p"] == pytest.approx(sps.binomtest(k_a, k_a + k_b).pvalue if k_a + k_b else 1.0)
        calc_of = sub.groupby("row_number")["calculator_id"].first()
        groups = [per_case[calc_of == c].to_numpy() for c in sorted(calc_of.unique())]
        if np.var(per_case) > 0 and any(np.var(x) > 0 for x in groups):
            f = sps.f_oneway(*groups).statistic
            m = len(per_case) / len(groups)  # balanced: 4 cases per calculator
            icc = (f - 1) / (f + m - 1)
            assert g["icc"] == pytest.approx(icc)
            assert g["n_eff"] == pytest.approx(len(per_case) / (1 + (m - 1) * max(icc, 0)))
    # Holm within each subset's family of two comparisons, by hand
    for s in subsets:
        p1, p2 = gaps[("prog", "arith", s)]["perm_p"], gaps[("prog", "gold", s)]["perm_p"]
        lo, hi = sorted([p1, p2])
        adj_lo, adj_hi = min(1, 2 * lo), min(1, max(2 * lo, hi))
        assert sorted([gaps[("prog", "arith", s)]["holm_p"], gaps[("prog", "gold", s)]["holm_p"]]) == \
            pytest.approx([adj_lo, adj_hi])


def test_a_known_gap_and_cluster_interval(tmp_path: Path) -> None:
    # A right everywhere, B right only on the first half of the calculators: the gap is the other
    # half's share, and the cluster interval is wide (whole calculators move together)
    cases = benchmark_cases(per_calc=5, ids=range(1, 31))
    ids = sorted({c.calculator_id for c in cases})
    first = set(ids[: len(ids) // 2])
    write_run(tmp_path / "a", "program-solve", cases, SEEDS, right)
    write_run(tmp_path / "b", "open-book", cases, SEEDS, lambda c, s: ("answered", c.calculator_id in first))
    rep = build_report([tmp_path / "a", tmp_path / "b"], [("a", "b")], draws=2000, seed=1)
    g = next(g for g in rep["gaps"] if g["subset"] == "all")
    assert g["gap_pp"] == pytest.approx(100 * (len(ids) - len(first)) / len(ids))
    assert g["icc"] == pytest.approx(1.0)  # differences are constant within calculators
    assert g["n_eff"] == pytest.approx(len(ids))  # one effective case per calculator
    lo, hi = g["cluster_ci"]
    assert lo < g["gap_pp"] - 10 and hi > g["gap_pp"] + 10
    assert g["mcnemar_p"] < 1e-10 and g["perm_p"] < 0.001


def test_library_covered_subset_when_the_library_covers_part(run_dirs: dict[str, Path], cases: list[Case]) -> None:
    covered = {c.slug for c in cases if c.calculator_id < 20}
    rep = build_report([run_dirs["prog"], run_dirs["gold"]], [("prog", "gold")], draws=50, covered=covered)
    df = expected_frame(cases, "prog", "gold")
    cov = df[df.slug.isin(covered)]
    g = next(g for g in rep["gaps"] if g["subset"] == "library_covered")
    assert g["gap_pp"] == pytest.approx(100 * (cov.prog.astype(int) - cov.gold.astype(int)).mean())
    assert rep["runs"][1]["subsets"]["library_covered"] == pytest.approx(100.0)  # gold is right on all it covers
    out = rep["runs"][1]["outcomes"]
    assert out["supported"]["right_pct"] == pytest.approx(100.0)
    assert out["unsupported"]["none_pct"] == pytest.approx(100.0)
    assert rep["subsets"]["library_covered"] == len(covered)


def test_library_first_hybrids(report: dict, cases: list[Case]) -> None:
    df = expected_frame(cases, "prog", "arith", "gold")
    answered = df.gold_outcome == "value"
    hyb = {h["fallback"]: h for h in report["hybrids"]}
    assert set(hyb) == {"prog", "arith"} and all(h["library"] == "gold" for h in hyb.values())
    for fb, h in hyb.items():
        correct = np.where(answered, df.gold, df[fb])
        assert h["library_share"] == pytest.approx(100 * answered.mean())
        assert h["accuracy"] == pytest.approx(100 * correct.mean())
        refs = {g["reference"]: g for g in h["gaps"]}
        assert set(refs) == {"prog", "arith", "gold"}
        for ref, g in refs.items():
            assert g["gap_pp"] == pytest.approx(100 * (correct.astype(int) - df[ref].astype(int)).mean())
    # Table 23: the same baseline with each fallback of the --compare pair prog:arith
    (fg,) = report["hybrid_gaps"]
    assert (fg["library"], fg["a"], fg["b"]) == ("gold", "prog", "arith")
    h_prog = np.where(answered, df.gold, df.prog).astype(int)
    h_arith = np.where(answered, df.gold, df.arith).astype(int)
    assert fg["gap_pp"] == pytest.approx(100 * (h_prog - h_arith).mean())


def test_seed_agreement(report: dict, cases: list[Case]) -> None:
    df = expected_frame(cases, "prog", "arith", "gold")
    agree = {s["run"]: s for s in report["seed_agreement"]}
    for name in RULES:
        wide = df.pivot(index="row_number", columns="seed", values=name)
        per_seed = df.groupby("seed")[name].mean() * 100
        s = agree[name]
        assert s["accuracy"] == pytest.approx(100 * df[name].mean())
        assert s["seed_sd"] == pytest.approx(float(np.std(per_seed.to_numpy(), ddof=1)))
        alike = wide.nunique(axis=1) == 1
        assert s["agree_pct"] == pytest.approx(100 * alike.mean())
        assert s["right_pct"] == pytest.approx(100 * wide.all(axis=1).mean())
        assert s["wrong_pct"] == pytest.approx(100 * (~wide.astype(bool)).all(axis=1).mean())
        pairs = [(42, 43), (42, 44), (43, 44)]
        assert s["pairwise_pct"] == pytest.approx(100 * np.mean([(wide[i] == wide[j]).mean() for i, j in pairs]))
    assert agree["gold"]["agree_pct"] == 100.0 and agree["gold"]["seed_sd"] == 0.0
    assert agree["prog"]["agree_pct"] < 100.0


def test_per_calculator_rows_and_stale_texts(tmp_path: Path, cases: list[Case]) -> None:
    stale_v = {c.calculator_id for c in cases if c.slug == "mdrd-gfr"}
    stale_sha = {c.calculator_id for c in cases if c.slug == "body-mass-index"}

    def text(c: Case) -> tuple[str | None, str | None]:
        from tests.audit.synthetic import current_text
        v, sha = current_text(c.slug)
        if c.calculator_id in stale_v:
            return "0.9.0", "sha256:" + "a" * 64
        if c.calculator_id in stale_sha:
            return v, "sha256:" + "b" * 64
        return v, sha

    write_run(tmp_path / "old", "program-solve", cases, SEEDS, prog, text=text)
    rep = build_report([tmp_path / "old"], draws=10)
    rows = {r["slug"]: r for r in rep["per_calculator"]}
    assert len(rows) == 55
    assert rows["mdrd-gfr"]["stale"] and rows["mdrd-gfr"]["text_versions"] == ["0.9.0"]
    assert rows["body-mass-index"]["stale"]
    assert sum(r["stale"] for r in rows.values()) == 2
    assert "mdrd-gfr" in rows["mdrd-gfr"]["warning"] and "0.9.0" in rows["mdrd-gfr"]["warning"]
    assert len([w for w in rep["warnings"] if "stale" in w]) == 2
    df = expected_frame(cases, "prog")
    for slug, sub in df.groupby("slug"):
        assert rows[slug]["accuracy"] == pytest.approx(100 * sub.prog.mean())
        assert rows[slug]["group"] == sub.group.iloc[0]
    md = to_markdown(rep)
    assert "STALE" in md and "0.9.0" in md


def test_markdown_and_csv(report: dict) -> None:
    md = to_markdown(report)
    for heading in ("## Accuracy (%)", "## Accuracy by audit group", "## Outcomes", "## Paired gaps",
                    "## Library-first hybrids", "## Agreement across seeds", "## Per calculator"):
        assert heading in md
    assert f"Draws: {DRAWS}; seed: 3" in md
    rows = list(csv.DictReader(io.StringIO(to_csv(report))))
    by = {(r["table"], r["row"], r["column"]): r["value"] for r in rows}
    assert float(by[("runs", "prog", "accuracy")]) == pytest.approx(report["runs"][0]["accuracy"])
    g = report["gaps"][0]
    assert float(by[("gaps", f"{g['a']} - {g['b']} [all]", "gap_pp")]) == pytest.approx(g["gap_pp"])
    assert by[("report", "", "draws")] == str(DRAWS)


# ---------------------------------------------------------------------- errors


def test_runs_that_do_not_share_cases_and_seeds(tmp_path: Path, cases: list[Case]) -> None:
    write_run(tmp_path / "a", "program-solve", cases, SEEDS, right)
    write_run(tmp_path / "b", "open-book", cases, SEEDS[:2], right, skip=lambda c, s: c.row_number == 5)
    with pytest.raises(RunError) as e:
        build_report([tmp_path / "a", tmp_path / "b"], [("a", "b")], draws=10)
    msg = str(e.value)
    assert "do not share cases and seeds" in msg and "seeds differ" in msg and "44" in msg
    assert "only in a" in msg and "row 5 seed 42" in msg


@pytest.mark.parametrize("line,message", [
    ("{not json", "not valid JSON"),
    ('{"row_number": 1, "calculator_id": 2, "seed": 42, "outcome": "value"}', "missing field 'correct'"),
    ('{"row_number": "1", "calculator_id": 2, "seed": 42, "outcome": "value", "correct": true}',
     "field 'row_number' must be int"),
    ('{"row_number": 1, "calculator_id": 2, "seed": 42, "outcome": "value", "correct": 1}',
     "field 'correct' must be bool"),
])
def test_bad_rows_name_file_line_and_field(tmp_path: Path, line: str, message: str) -> None:
    d = tmp_path / "run"
    d.mkdir()
    good = '{"row_number": 9, "calculator_id": 2, "seed": 42, "outcome": "value", "correct": true}'
    (d / "results.jsonl").write_text(good + "\n" + line + "\n")
    with pytest.raises(RunError) as e:
        read_run(d)
    assert f"results.jsonl:2: {message}" in str(e.value)


def test_duplicate_rows_unknown_calculators_and_missing_manifest(tmp_path: Path) -> None:
    d = tmp_path / "run"
    d.mkdir()
    row = '{"row_number": 1, "calculator_id": 2, "seed": 42, "outcome": "value", "correct": true}'
    (d / "results.jsonl").write_text(row + "\n" + row + "\n")
    with pytest.raises(RunError, match="seed 42 already on line 1"):
        read_run(d)
    (d / "results.jsonl").write_text(row.replace('"calculator_id": 2', '"calculator_id": 999') + "\n")
    with pytest.raises(RunError, match="calculator_id 999 is not a benchmark calculator"):
        build_report([d], draws=10)
    (d / "results.jsonl").write_text(row + "\n")
    run = read_run(d)
    assert run.warnings and "no manifest" in run.warnings[0]
    with pytest.raises(RunError, match="no results.jsonl"):
        read_run(tmp_path)


def test_manifest_read_tolerantly(tmp_path: Path, cases: list[Case]) -> None:
    d = write_run(tmp_path / "m", "blind-program-solve", cases[:8], SEEDS, right, model=None,
                  manifest={"model": {"id": "Qwen/Qwen2.5-7B-Instruct", "revision": "abc"}, "extra": [1]})
    run = read_run(d)
    assert run.arm == "blind-program-solve" and run.model == "Qwen/Qwen2.5-7B-Instruct"
    rep = build_report([run], draws=5)  # a run already read is accepted as is
    assert rep["runs"][0]["manifest"]["engine"] == "replay" and "extra" not in rep["runs"][0]["manifest"]


# ---------------------------------------------------------------------- command line


def test_cli_json_markdown_csv(run_dirs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    args = ["report", "tables", str(run_dirs["prog"]), str(run_dirs["arith"]), "--compare", "prog:open-book",
            "--draws", "50", "--seed", "7"]
    assert main(args + ["--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["draws"] == 50 and rep["seed"] == 7
    assert {(g["a"], g["b"]) for g in rep["gaps"]} == {("prog", "arith")}
    assert main(args) == 0
    assert "## Paired gaps" in capsys.readouterr().out
    assert main(args + ["--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("table,row,column,value")


def test_cli_errors(run_dirs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "tables", str(run_dirs["prog"]), "--compare", "prog:nothing", "--draws", "5"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "'nothing' is not one of the runs" in err and "Traceback" not in err
    assert main(["report", "tables", str(tmp_path / "missing")]) == 1
    assert "not a run directory" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["report", "tables", str(run_dirs["prog"]), "--draws", "0"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["report", "tables", str(run_dirs["prog"]), "--compare", "prog"])
    assert e.value.code == 2


def test_incomplete_runs_warn(tmp_path: Path, cases: list[Case]) -> None:
    d = write_run(tmp_path / "part", "program-solve", cases[:8], SEEDS, right, manifest={"seeds": [42, 43, 44, 45]},
                  skip=lambda c, s: s == 44 and c.row_number == 3)
    warnings = read_run(d).warnings
    assert any("manifest lists seeds [42, 43, 44, 45]" in w for w in warnings)
    assert any("incomplete, 23 of 24 case-seed rows" in w for w in warnings)
    assert read_run(write_run(tmp_path / "whole", "program-solve", cases[:8], SEEDS, right)).warnings == []


def test_run_keys_number_a_shared_folder_name_and_never_use_the_path(tmp_path):
    """Two runs in folders of one name were keyed by their absolute paths (issue 29)."""
    from pathlib import Path

    from audit.runs import Run
    from audit.tables import run_keys

    runs = [Run(dir=Path(f"/somewhere/{k}/prog"), manifest={}, rows=None, arm="a", model=None)  # type: ignore[arg-type]
            for k in ("x", "y")] + [Run(dir=Path("/elsewhere/arith"), manifest={}, rows=None, arm="b", model=None)]  # type: ignore[arg-type]
    assert run_keys(runs) == ["prog#1", "prog#2", "arith"]

