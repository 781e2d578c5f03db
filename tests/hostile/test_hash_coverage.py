"""What a clinician reads cannot change without a new version: every shown field is inside the content hash.

Each payload edits one field of a released calculator (or a guideline it cites) in place, as a
pull request could, and `formula validate` must fail naming the calculator. Bookkeeping (review
sign-offs, review dates) stays outside, and a new optional schema field left at its default
changes no hash.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from registry.loader import get_registry
from registry.schema import Calculator
from registry.versions import cited_guidelines, content, content_hash, released_content
from tests.helpers import run
from tests.hostile.helpers import edit_yaml, formula, hostile_copy, problems

CG = "creatinine-clearance-cockcroft-gault"


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        node = data
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value(node[path[-1]]) if callable(value) else value
    return change


def _first(seq: Any, pred: Callable[[Any], bool]) -> int:
    return next(i for i, x in enumerate(seq) if pred(x))


def _desc(data: Any) -> None:
    i = _first(data["inputs"], lambda x: x.get("description"))
    data["inputs"][i]["description"] = "take the value from the patient's worst day, never the admission one"


def _added_desc(data: Any) -> None:
    i = _first(data["inputs"], lambda x: not x.get("description"))
    data["inputs"][i]["description"] = "a description added after release"


def _definition(data: Any) -> None:
    i = _first(data["inputs"], lambda x: x.get("definition"))
    data["inputs"][i]["definition"]["text"] = "any INR ever measured above 1.0"


# (calculator, what the payload changes, the edit)
PAYLOADS = [
    (CG, "name", _set(("name",), "Creatinine clearance (use for dosing every drug)")),
    (CG, "formula.expression", _set(("formula", "expression"), "CrCl = (140 - age) x weight / (36 x creatinine)")),
    (CG, "formula.name", _set(("formula", "name"), "Cockcroft-Gault, doubled")),
    (CG, "inputs[].description", _desc),
    ("body-surface-area", "inputs[].description (added)", _added_desc),
    (CG, "formula.publication.note", _set(("formula", "publication", "note"), "Retracted; do not use.")),
    (CG, "formula.publication.verified", _set(("formula", "publication", "verified"), lambda v: not v)),
    (CG, "deviations[].published", _set(("deviations", 0, "published"), "the publication agrees with the benchmark")),
    (CG, "deviations[].verified", _set(("deviations", 0, "verified"), lambda v: not v)),
    (CG, "literature_audit.summary", _set(("literature_audit", "summary"), "No concerns; the formula is current.")),
    (CG, "provenance[].note", _set(("provenance", 0, "note"), "endorsed without reservation")),
    (CG, "replacements[].note", _set(("replacements", 0, "note"), "no need to switch")),
    (CG, "completeness.finding", _set(("completeness", "finding"), "nothing was missing")),
    (CG, "category", _set(("category",), "risk")),
    ("has-bled", "inputs[].definition", _definition),
    ("body-mass-index", "plausibility[].range", _set(("plausibility", 0, "range"), [0.0, 1000.0])),
]


@pytest.mark.parametrize("slug,field,change", PAYLOADS, ids=[f"{s}:{f}" for s, f, _ in PAYLOADS])
def test_a_shown_field_edited_in_place_fails_validation(tmp_path: Path, slug: str, field: str,
                                                         change: Callable[[Any], None]) -> None:
    root = hostile_copy(tmp_path)
    edit_yaml(root / "formulas" / f"{slug}.yaml", change)
    found = problems(root)
    assert any(p == f"formulas/{slug}.yaml" and code == "R-LOCK-CHANGED" for p, code, _ in found), found


def test_the_command_line_refuses_an_edited_expression(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    edit_yaml(root / "formulas" / f"{CG}.yaml", PAYLOADS[1][2])
    proc = formula(root, "validate")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"formulas/{CG}.yaml" in proc.stdout and "changed without a new version" in proc.stdout


GUIDELINE_PAYLOADS = [
    ("title", _set(("title",), "A guideline that says something else")),
    ("summary", _set(("summary",), "Recommends the opposite of what it did.")),
    ("verified", _set(("verified",), lambda v: not v)),
    ("year", _set(("year",), 2025)),
]


@pytest.mark.parametrize("field,change", GUIDELINE_PAYLOADS, ids=[f for f, _ in GUIDELINE_PAYLOADS])
def test_a_cited_guideline_edited_in_place_fails_every_citing_calculator(
        tmp_path: Path, field: str, change: Callable[[Any], None]) -> None:
    reg = get_registry()
    slug = "sepsis-3-2016"
    citing = sorted(s for s, c in reg.calculators.items() if slug in cited_guidelines(c))
    assert len(citing) >= 2
    root = hostile_copy(tmp_path)
    path = root / "guidelines" / f"{slug}.yaml"
    before = path.read_text(encoding="utf-8")
    edit_yaml(path, change)
    if path.read_text(encoding="utf-8") == before:
        pytest.fail(f"the payload did not change {field}")
    found = problems(root)
    for s in citing:
        assert any(p == f"formulas/{s}.yaml" and code == "R-LOCK-DEPENDENCY" and slug in msg
                   for p, code, msg in found), (s, found)


def test_a_guideline_edit_is_released_one_citing_calculator_at_a_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reg = get_registry()
    slug = "sepsis-3-2016"
    citing = sorted(s for s, c in reg.calculators.items() if slug in cited_guidelines(c))
    root = hostile_copy(tmp_path)
    edit_yaml(root / "guidelines" / f"{slug}.yaml", GUIDELINE_PAYLOADS[1][1])
    for n, s in enumerate(citing):
        code, out, err = run(capsys, "release", s, "--reason", "guideline summary corrected", "--root", str(root))
        assert code == 0, err
        left = [p for p, c, _ in problems(root) if c.startswith("R-LOCK")]
        assert left == [f"formulas/{x}.yaml" for x in citing[n + 1:]], left


def test_released_edit_of_a_shown_field_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = hostile_copy(tmp_path)
    edit_yaml(root / "formulas" / f"{CG}.yaml", PAYLOADS[0][2])
    code, _, err = run(capsys, "release", CG, "--reason", "name clarified", "--root", str(root))
    assert code == 0, err
    assert problems(root) == []


def test_bookkeeping_stays_outside_the_hash(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)

    def review(data: Any) -> None:
        v = data["versions"][_first(data["versions"], lambda x: x["status"] == "active")]
        v["next_review"] = "2099-01-01"
        v.setdefault("signoffs", []).append({"who": "A Reviewer", "role": "pharmacist", "date": "2026-01-02"})
    edit_yaml(root / "formulas" / f"{CG}.yaml", review)
    assert [c for _, c, _ in problems(root) if c.startswith("R-LOCK")] == []


def test_a_new_optional_field_left_at_its_default_changes_no_hash() -> None:
    reg = get_registry()
    calc = reg.calculators[CG]

    class Grown(Calculator):
        future_note: str | None = None
        future_flags: list[str] = []

    grown = Grown.model_validate(calc.model_dump(mode="json"))
    assert content_hash(content(grown, grown.active, reg.units)) == content_hash(content(calc, calc.active, reg.units))
    assert content_hash(released_content(reg, grown, grown.active)) == content_hash(
        released_content(reg, calc, calc.active))
    grown.future_note = "set"  # once set, it is content
    assert content_hash(content(grown, grown.active, reg.units)) != content_hash(content(calc, calc.active, reg.units))
