"""The `--check` modes pre-commit hooks run: `texts render --check` and `stale --check --runs DIR`."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from registry.loader import PROJECT_ROOT
from tests.helpers import edit, run


def test_texts_render_check_writes_nothing_and_fails_on_a_stale_catalogue(registry_copy: Path, capsys) -> None:
    root = str(registry_copy)
    code, out, _ = run(capsys, "texts", "render", "--check", "--root", root)
    assert code == 0 and "is what a render writes" in out
    texts = registry_copy / "formulas" / "texts"
    before = {p.name: p.read_bytes() for p in texts.iterdir()}
    edit(registry_copy / "formulas" / "calcium-correction.yaml", "value: 0.8", "value: 0.9")
    code, _, err = run(capsys, "texts", "render", "--check", "--root", root)
    assert code == 1 and "calcium-correction: unreleased edits" in err
    assert "formulas/texts/calcium-correction.md" in err and "R-CATALOGUE" in err
    assert {p.name: p.read_bytes() for p in texts.iterdir()} == before  # nothing written
    code, _, err = run(capsys, "texts", "render", "--check", "--out", str(registry_copy / "x"), "--root", root)
    assert code == 1 and "drop --out" in err


def test_stale_runs_reads_every_run_below_a_folder(registry_copy: Path, capsys) -> None:
    root = str(registry_copy)
    code, out, _ = run(capsys, "stale", "--check", "--runs", str(registry_copy / "results"), "--root", root)
    assert code == 0 and "no stored run below" in out  # a registry without results/ has nothing stale
    runs = registry_copy / "results"
    for name in ("gold-solve", "gold-solve-published"):
        shutil.copytree(PROJECT_ROOT / "results" / "embedded" / name, runs / "embedded" / name)
    assert run(capsys, "stale", "--check", "--runs", str(runs), "--root", root)[0] == 0
    # a text change makes the cases of that calculator stale in both runs
    (runs / "embedded" / "gold-solve" / "results.jsonl").write_text(
        json.dumps({"slug": "calcium-correction", "text_version": "0.9.0"}) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "stale", "--check", "--runs", str(runs), "--root", root, "--format", "json")
    rows = json.loads(out)
    assert code == 1 and [(r["slug"], Path(r["results"]).parent.name) for r in rows] == [
        ("calcium-correction", "gold-solve")]
    assert "1 stale case in 1 of 2 runs" in err
    code, _, err = run(capsys, "stale", str(runs / "embedded" / "gold-solve"), "--runs", str(runs), "--root", root)
    assert code == 1 and "not both" in err
