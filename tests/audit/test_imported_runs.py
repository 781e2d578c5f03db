"""The embedded imported MedCalc-Bench runs in the report tables: the authors' own accuracy by category,
pairing only within one dataset, on the cases both runs hold with the same gold."""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from audit.runs import RunError, pair, read_run
from audit.tables import build_report

REPO = Path(__file__).resolve().parents[2]
IMPORTED = REPO / "results" / "embedded" / "medcalc-bench-2024"
MINI = IMPORTED / "gpt-4o-mini-direct-answer"
GPT4 = IMPORTED / "gpt-4-direct-answer"
GOLD_SOLVE = REPO / "results" / "embedded" / "gold-solve"


def _rows(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def _kept_lines(folder: Path) -> list[dict]:
    return [{"Category": r["source_category"], "Result": r["source_result"], "Calculator ID": str(r["calculator_id"])}
            for r in _rows(folder)]


def _source_lines(folder: Path) -> list[dict]:
    """The MedCalc-Bench file's own `Category` and `Result` per line: read from the file itself where this
    checkout has it (../shared/medcalc/runs/, checked against the SHA-256 the manifest recorded), else from
    the verbatim copies each imported row keeps (`source_category`, `source_result`)."""
    import hashlib

    f = json.loads((folder / "manifest.json").read_text())["source"]["files"][0]
    path = (REPO / f["path"]).resolve()
    if path.is_file() and "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest() == f["sha256"]:
        return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return _kept_lines(folder)


def _table_stats(lines: list[dict]) -> tuple[dict[str, float], float]:
    """What MedCalc-Bench's evaluation/table_stats.py reports (our own code): per file Category, the share
    of lines whose Result is Correct, in percent to two decimals; overall, the share over all lines."""
    per: dict[str, list[int]] = defaultdict(list)
    for x in lines:
        per[x["Category"]].append(1 if x["Result"] == "Correct" else 0)
    every = [v for vs in per.values() for v in vs]
    return {c: round(100 * sum(v) / len(v), 2) for c, v in per.items()}, round(100 * sum(every) / len(every), 2)


def test_gpt4o_mini_accuracy_by_category_equals_medcalc_benchs_table_stats():
    lines = _source_lines(MINI)
    assert len(lines) == 1047
    theirs, overall = _table_stats(lines)
    ours = build_report([MINI], draws=10)["runs"][0]
    assert round(ours["accuracy"], 2) == overall
    # their category names ('lab') are the registry's ('lab test'): match them through the calculators
    from registry.loader import get_registry

    reg = get_registry()
    names = defaultdict(set)
    for x in lines:
        names[x["Category"]].add(reg.by_id(int(x["Calculator ID"])).category.value)
    assert all(len(v) == 1 for v in names.values())
    assert {c: round(ours["by_category"][next(iter(names[c]))], 2) for c in theirs} == theirs
    assert len(theirs) == 7


def test_kept_category_and_result_are_the_files():
    lines = _source_lines(MINI)
    kept = _kept_lines(MINI)
    assert [(x["Category"], x["Result"]) for x in lines] == [(x["Category"], x["Result"]) for x in kept]


def test_imported_verdicts_agree_with_the_files():
    for folder in sorted(p for p in IMPORTED.iterdir() if p.is_dir()):
        man = json.loads((folder / "manifest.json").read_text())
        assert man["source"]["differences"] == [], folder.name
        rows = _rows(folder)
        assert all(r["correct"] == (r["source_result"] == "Correct") for r in rows), folder.name
        assert man["correct"] == sum(r["correct"] for r in rows) and man["source"]["files"][0]["commit"]


def test_embedded_runs_are_what_the_importer_writes_now():
    """Re-score every embedded row from the answer the file recorded; where the source file is here,
    re-import it and compare row for row."""
    from solver.scoring import rescore_row, score

    for folder in sorted(p for p in IMPORTED.iterdir() if p.is_dir()):
        for r in _rows(folder):
            fresh = dict(r)
            rescore_row(fresh)
            fresh["correct"] = fresh["outcome"] == "answered" and score(
                fresh["answer"], fresh["output_type"], fresh["ground_truth"], fresh["lower_limit"],
                fresh["upper_limit"])
            assert (fresh["answer"], fresh["correct"]) == (r["answer"], r["correct"]), (folder.name, r["row_number"])


def test_reimporting_the_source_gives_the_embedded_rows(tmp_path):
    from solver.importers.run import import_run

    f = json.loads((MINI / "manifest.json").read_text())["source"]["files"][0]
    src = (REPO / f["path"]).resolve()
    if not src.is_file():  # this checkout has no ../shared: the check above still covers every row
        pytest.skip(f"{src} is not in this checkout")
    import_run("medcalc-bench", [src], tmp_path / "run")
    assert _rows(tmp_path / "run") == _rows(MINI)


def test_imported_runs_pair_on_shared_cases_with_the_same_gold():
    a, b = read_run(GPT4), read_run(MINI)
    # the same case is the same note and calculator (the 2024 split was renumbered between the two commits)
    ra = {(r["note_id"], r["calculator_id"]): r for r in _rows(GPT4)}
    rb = {(r["note_id"], r["calculator_id"]): r for r in _rows(MINI)}
    shared = [k for k in ra if k in rb]
    same_gold = [k for k in shared if json.dumps(float(ra[k]["ground_truth"]) if isinstance(ra[k]["ground_truth"],
                                                 (int, float)) else ra[k]["ground_truth"])
                 == json.dumps(float(rb[k]["ground_truth"]) if isinstance(rb[k]["ground_truth"], (int, float))
                               else rb[k]["ground_truth"])]
    assert len(shared) == 347 and len(same_gold) < len(shared)
    p = pair(a, b)
    assert len(p) == len(same_gold) and p.attrs["gold_differs"] == len(shared) - len(same_gold)
    assert sorted(p["a"].astype(int).tolist()) == sorted(int(ra[k]["correct"]) for k in same_gold)
    assert sorted(p["b"].astype(int).tolist()) == sorted(int(rb[k]["correct"]) for k in same_gold)
    report = build_report([GPT4, MINI], compare=[("gpt-4-direct-answer", "gpt-4o-mini-direct-answer")], draws=50)
    gap = next(g for g in report["gaps"] if g["subset"] == "all")
    assert (gap["n"], gap["gold_differs"]) == (len(same_gold), len(shared) - len(same_gold))
    assert gap["dataset"] == "MedCalc-Bench 2024 test split, 1,047 rows"


def test_runs_of_different_datasets_are_never_paired():
    with pytest.raises(RunError, match="different datasets"):
        pair(read_run(MINI), read_run(GOLD_SOLVE))
    with pytest.raises(RunError, match="different datasets"):
        build_report([MINI, GOLD_SOLVE], compare=[("gpt-4o-mini-direct-answer", "gold-solve")], draws=10)
