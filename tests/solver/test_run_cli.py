"""`formula run` and `formula score` from the command line; the vote rule."""
from __future__ import annotations

import csv
import json
from types import SimpleNamespace

import pytest

from cli.main import main
from solver.arms.program import ProgramArm
from solver.data import ONE_SHOT
from solver.runner import results as results_mod
from solver.runner.loopback import Loopback
from tests.solver.evalkit import oracle_reply, read_rows, subset_csv


@pytest.fixture(autouse=True)
def no_fsync(monkeypatch):
    monkeypatch.setattr(results_mod.os, "fsync", lambda fd: None)


def test_run_no_model_arm(tmp_path, capsys):
    rc = main(["run", "--arm", "gold-solve", "--data", "one-shot", "--seeds", "42", "--out", str(tmp_path / "o"),
               "--no-progress"])
    assert rc == 0 and "gold-solve: 55/55 correct (100.00%)" in capsys.readouterr().out
    man = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert man["dataset"]["path"] == "solver/embedded/one_shot_data.csv"  # portable: relative to the checkout


@pytest.mark.parametrize("args,message", [
    (["--arm", "program-solve"], "needs a model"),
    (["--arm", "no-such-arm"], "unknown arm 'no-such-arm'"),
    (["--arm", "open-book", "--engine", "openai"], "--engine openai needs --model"),
    (["--arm", "open-book", "--engine", "openai", "--model", "m"], "needs --base-url"),
    (["--arm", "gold-solve", "--limit", "0"], "at least 1"),
])
def test_run_usage_errors(tmp_path, capsys, args, message):
    rc = main(["run", *args, "--data", str(ONE_SHOT), "--out", str(tmp_path / "o"), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 1 and err.startswith("error: ") and message in err and "Traceback" not in err


def test_run_bad_dataset_names_file_row_column(tmp_path, capsys):
    src = list(csv.DictReader(ONE_SHOT.open(encoding="utf-8", newline="")))
    src[0]["Lower Limit"] = "low"
    bad = tmp_path / "bad.csv"
    with bad.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(src[0]))
        w.writeheader()
        w.writerows(src)
    rc = main(["run", "--arm", "gold-solve", "--data", str(bad), "--out", str(tmp_path / "o"), "--no-progress"])
    assert rc == 1 and "bad.csv:2: column 'Lower Limit': 'low' is not a number" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_score_rescoring_stored_replies(tmp_path, capsys):
    data = subset_csv(tmp_path / "s.csv")
    out = tmp_path / "r"
    with Loopback(oracle_reply) as server:
        assert main(["run", "--arm", "open-book", "--engine", "openai", "--model", "m", "--base-url", server.url,
                     "--data", str(data), "--seeds", "42", "--out", str(out), "--no-progress"]) == 0
    rows = read_rows(out)
    for r in rows[:3]:  # as a buggy scorer might have left them
        r["answer"], r["correct"], r["outcome"] = None, False, "unreadable"
    results_mod.rewrite(out / "results.jsonl", rows)
    capsys.readouterr()
    assert main(["score", str(out), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["changed"] == 3 and report["correct"] == report["rows"] == len(rows)
    assert all(r["correct"] for r in read_rows(out))
    assert main(["score", str(tmp_path / "none")]) == 1
    assert "not a run folder" in capsys.readouterr().err


def _cand(kind, value=None):
    return (None, SimpleNamespace(kind=kind, value=value))


def test_vote_rule():
    ok = lambda o: o.kind == "value"  # noqa: E731
    choose = ProgramArm._choose
    assert choose([_cand("value", 1), _cand("value", 2), _cand("value", 2), _cand("value", 1)], ok) == 0  # tie: first
    assert choose([_cand("value", 1), _cand("value", 2), _cand("value", 2.0)], ok) == 1  # 2 == 2.0
    assert choose([_cand("raised"), _cand("value", 7), _cand("value", 8)], ok) == 1  # no majority: first answer
    assert choose([_cand("raised"), _cand("rejected")], ok) == 0  # none runs: abstain


def test_the_score_table_lines_up_whatever_the_arm_name(tmp_path, capsys):
    """Issue 50: an arm name longer than the old fixed 24 columns no longer pushes its row's numbers out from
    under their headings."""
    import shutil

    from registry.loader import PROJECT_ROOT

    run = tmp_path / "run"
    shutil.copytree(PROJECT_ROOT / "results" / "embedded" / "gold-solve", run)
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    manifest["arm"] = "gold-solve-with-a-much-longer-arm-name"
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    rows = read_rows(run)
    for r in rows:
        r["arm"] = manifest["arm"]
    results_mod.rewrite(run / "results.jsonl", rows)
    capsys.readouterr()
    assert main(["score", str(run)]) == 0
    head, _, row = capsys.readouterr().out.splitlines()[:3]
    for word, value in (("rows", str(len(rows))), ("accuracy", "100.00%"), ("changed", "0")):
        at = head.index(word)
        assert row[at:at + len(value)] == value, (head, row)
