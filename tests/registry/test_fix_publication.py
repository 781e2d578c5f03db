"""`formula fix --name` and labels against the cited publication (issue 49, item 11): a Katz formula still cited
to Hillier (1999) is warned of, as a kept label is, and `--publication FILE` changes the citation in the same
release (checked before anything is written)."""
from __future__ import annotations

from pathlib import Path

import pytest

from registry.loader import clear_cache, load
from tests.helpers import copy_registry, run, solo

SODIUM = "sodium-correction-hyperglycemia"
CONST = "correction_per_mg_dl_glucose"
KATZ = """authors: [Katz MA]
title: 'Hyperglycemia-induced hyponatremia: calculation of expected serum sodium depression'
journal: New England Journal of Medicine
year: 1973
"""


@pytest.fixture()
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = copy_registry(tmp_path / "registry")
    solo(root, monkeypatch)
    return root


def _fix(capsys: pytest.CaptureFixture[str], root: Path, *extra: str) -> tuple[int, str, str]:
    return run(capsys, "fix", SODIUM, "--set", f"{CONST}=0.016", "--reason", "the Katz factor", "--root", str(root),
               *extra)


@pytest.mark.parametrize("how", [
    ["--label", f"{CONST}=Katz factor"],  # the label changes; the name and the citation keep Hillier
    ["--label", f"{CONST}=Katz factor", "--name", "Katz sodium correction for hyperglycemia"],
    ["--label", f"{CONST}=Hillier factor", "--name", "Katz sodium correction for hyperglycemia"],  # a rename alone
])
def test_a_citation_that_names_the_old_label_or_name_is_warned_of(root: Path, capsys: pytest.CaptureFixture[str],
                                                                  how: list[str]) -> None:
    code, _, err = _fix(capsys, root, *how)
    assert code == 0, err
    [warning] = [line for line in err.splitlines() if "formula.publication" in line]
    assert "cites Hillier TA (1999)" in warning and "hillier" in warning and "--publication FILE" in warning
    assert warning.endswith("[R-LABEL-NAME]")


def test_publication_changes_the_citation_in_the_same_release(root: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    cited = tmp_path / "katz.yaml"
    cited.write_text(KATZ, encoding="utf-8")
    code, _, err = _fix(capsys, root, "--label", f"{CONST}=Katz factor", "--name",
                        "Katz sodium correction for hyperglycemia", "--publication", str(cited))
    assert code == 0, err
    assert "formula.publication" not in err and "R-LABEL-NAME" not in err
    clear_cache()
    c = load(root).calculators[SODIUM]
    assert (c.formula.publication.authors, c.formula.publication.year) == (["Katz MA"], 1973)
    assert c.formula.name == "Katz sodium correction for hyperglycemia"


@pytest.mark.parametrize("bad, said", [("authors: [Katz MA]\ntitle: t\nyear: 1973\n", "journal or an issuing body"),
                                       ("authors: []\ntitle: t\njournal: j\nyear: 1973\n", "authors"),
                                       ("[1, 2]\n", "(file)"),
                                       ("authors: [K]\ntitle: t\njournal: j\nyear: 1973\nvolum: 1\n", "volum")])
def test_a_bad_publication_file_is_refused_naming_the_field_and_nothing_is_written(
        root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str, said: str) -> None:
    cited = tmp_path / "bad.yaml"
    cited.write_text(bad, encoding="utf-8")
    path = root / "formulas" / f"{SODIUM}.yaml"
    before = path.read_bytes()
    code, _, err = _fix(capsys, root, "--label", f"{CONST}=Katz factor", "--publication", str(cited))
    assert code != 0 and f"--publication {cited}" in err and said in err and "Traceback" not in err, err
    assert path.read_bytes() == before
