"""`formula audit ...` on an unreleased edit: the static check runs, the executable one refuses (the library would)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import edit, run


def test_completeness_on_an_unreleased_edit(registry_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(registry_copy / "formulas" / "ideal-body-weight.yaml", "value: 2.3", "value: 2.4")
    root = str(registry_copy)
    code, _, err = run(capsys, "audit", "completeness", "--root", root)
    assert code == 1 and "[R-LOCK-CHANGED]" in err
    assert err.splitlines()[-1].startswith("error: the registry has unreleased edits")
    code, out, _ = run(capsys, "audit", "completeness", "--root", root, "--no-cases")
    assert code == 0 and re.search(r"\ncurrent text: (\d+) of \1 complete", out)
    code, _, err = run(capsys, "audit", "deviations", "--root", root)
    assert code == 1 and err.splitlines()[-1].startswith("error: ")


def test_report_tables_takes_globs(capsys: pytest.CaptureFixture[str]) -> None:
    """`formula report tables 'runs/*/'`: a quoted glob names every run folder it matches, in order; one that
    matches none is an error naming it (issue 29: `--results` and the report tables take globs alike)."""
    import json

    embedded = Path(__file__).resolve().parents[2] / "results" / "embedded" / "medcalc-bench-2024"
    code, out, _ = run(capsys, "report", "tables", str(embedded / "*"), "--draws", "5", "--format", "json")
    assert code == 0
    assert [r["label"] for r in json.loads(out)["runs"]] == sorted(p.name for p in embedded.iterdir() if p.is_dir())
    code, _, err = run(capsys, "report", "tables", str(embedded / "no-such-*"))
    assert code == 1 and "no-such-*" in err and "no run folder" in err
