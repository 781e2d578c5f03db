"""A name that names a label (issue 36): after the Katz fix, nothing of the entry may still call it Hillier's.

The shipped sodium correction calls its formula "Hillier sodium correction for hyperglycemia" and its factor
(0.024 mEq/L per mg/dL, Hillier 1999) "Hillier factor"; Katz's 1973 factor is 0.016 (1.6 mEq/L per 100 mg/dL).
"""
from __future__ import annotations

from pathlib import Path

from registry.labels import distinctive, leftovers
from registry.loader import load
from tests.helpers import solo
from tests.registry.helpers import SODIUM, copy_registry, formula

KATZ = ["--set", "correction_per_mg_dl_glucose=0.016", "--label", "correction_per_mg_dl_glucose=Katz factor",
        "--reason", "Katz 1973 factor"]


def test_only_the_words_that_name_the_variant_count() -> None:
    assert distinctive("Hillier factor", "Katz factor") == {"hillier"}
    assert distinctive("Hillier's factor", "Katz factor") == {"hillier"}
    assert distinctive("CKD-EPI 2009 coefficient", "CKD-EPI 2021 coefficient") == set()  # no word names 2009 alone


def test_prose_may_compare_the_variants_but_not_keep_the_old_label(tmp_path: Path) -> None:
    c = load(copy_registry(tmp_path / "reg")).calculators[SODIUM]
    found = {fld for _, fld, _ in leftovers(c, {"correction_per_mg_dl_glucose": ("Hillier factor", "Katz factor")})}
    # the formula's name names Hillier; the text's "Katz (1973) proposed a smaller factor than Hillier (1999)"
    # compares the two and its label comes from {{ label... }}: not flagged; the citation (Hillier 1999) is (issue 49)
    assert found == {"formula.name", "formula.publication"}
    last = c.versions[-1]
    text = last.text.replace("{{ label.correction_per_mg_dl_glucose }}", "Hillier factor")
    c = c.model_copy(update={"versions": [*c.versions[:-1], last.model_copy(update={"text": text})]})
    found = {fld for _, fld, _ in leftovers(c, {"correction_per_mg_dl_glucose": ("Hillier factor", "Katz factor")})}
    assert found == {"formula.name", "formula.publication", f"versions[{c.versions[-1].version}].text"}


def test_fix_warns_validate_names_the_rule_and_name_renames(tmp_path: Path, capsys, monkeypatch) -> None:
    root = copy_registry(tmp_path / "reg")
    solo(root, monkeypatch)  # a signed maintainer who releases at once
    code, _, err = formula(capsys, root, "fix", SODIUM, *KATZ)
    assert code == 0, err
    [warning] = [line for line in err.splitlines() if line.startswith("warning:") and "formula.name:" in line]
    assert "formula.name" in warning and "Hillier" in warning and "--name" in warning and "[R-LABEL-NAME]" in warning
    code, out, _ = formula(capsys, root, "validate")
    assert code == 0  # a warning: the registry stays valid
    [line] = [x for x in out.splitlines() if "[R-LABEL-NAME]" in x and "formula.name:" in x]
    assert line.startswith(f"warning: formulas/{SODIUM}.yaml:11: formula.name: 'Hillier sodium correction")

    # the same release can rename it and cite Katz: then nothing is left to flag, and show no longer says Hillier
    root = copy_registry(tmp_path / "again")
    solo(root, monkeypatch)
    cited = tmp_path / "katz.yaml"
    cited.write_text("authors: [Katz MA]\ntitle: Hyperglycemia-induced hyponatremia\njournal: N Engl J Med\n"
                     "year: 1973\n", encoding="utf-8")
    code, _, err = formula(capsys, root, "fix", SODIUM, *KATZ, "--name", "Katz sodium correction for hyperglycemia",
                           "--publication", str(cited))
    assert code == 0 and "warning:" not in err, err
    code, out, _ = formula(capsys, root, "validate")
    assert code == 0 and "R-LABEL-NAME" not in out
    code, out, _ = formula(capsys, root, "show", SODIUM)
    assert "Katz sodium correction for hyperglycemia" in out and "Hillier sodium correction" not in out
    assert "0.016" in out


def test_a_bad_name_is_refused_before_anything_is_written(tmp_path: Path, capsys, monkeypatch) -> None:
    from tests.registry.helpers import fingerprint

    root = copy_registry(tmp_path / "reg")
    solo(root, monkeypatch)
    before = fingerprint(root)
    code, _, err = formula(capsys, root, "fix", SODIUM, *KATZ, "--name", "two\nlines")
    assert code != 0 and "--name" in err
    assert fingerprint(root) == before
