"""Benchmark fidelity: every difference between the variants is a recorded deviation."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit.deviations import fidelity
from cli.main import main
from registry.loader import get_registry
from solver.data import REFERENCE_CASES, DatasetError, read_cases

ROWS = fidelity(get_registry(), read_cases(REFERENCE_CASES))


def test_no_undocumented_difference() -> None:
    undocumented = [(r.slug, r.differ) for r in ROWS if r.differ and not r.deviations]
    assert not undocumented, f"the variants differ without a recorded deviation: {undocumented}"


def test_published_variant_answers_or_refuses_clearly() -> None:
    assert sum(r.cases for r in ROWS) == 2200
    # refusals are counted, never raised; they only happen where a deviation says why
    assert all(r.deviations for r in ROWS if r.errors), [(r.slug, r.errors) for r in ROWS if r.errors]


def test_known_deviations_show_up() -> None:
    by_slug = {r.slug: r for r in ROWS}
    assert by_slug["ckd-epi-2021"].differ > 0  # male kappa 0.7 versus the published 0.9
    assert by_slug["body-mass-index"].differ == 0


def test_cli_json_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "deviations", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report[0]["cases"] == 2200 and report[0]["data_hash"].startswith("sha256:")
    assert main(["audit", "deviations"]) == 0
    out = capsys.readouterr().out
    assert "score differently under the published formulas" in out


def test_bad_dataset_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "split.csv"
    bad.write_text("Calculator ID,Question\n2,x\n", encoding="utf-8")
    assert main(["audit", "deviations", "--data", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "missing column(s) Relevant Entities" in err and str(bad) in err
    with pytest.raises(DatasetError, match="no such file"):
        read_cases(tmp_path / "none.csv")
