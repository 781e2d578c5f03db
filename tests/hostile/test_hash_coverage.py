"""What a clinician reads cannot change without a new version: every shown field is inside the content hash.

Each payload edits one field of a released calculator (or a guideline it cites) in place, as a
pull request could, and `formula validate` must fail naming the calculator. Bookkeeping (review
sign-offs, review dates) stays outside, and a new optional schema field left at its default
changes no hash.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable

import pytest
from pydantic import Field

from registry.loader import Registry, get_registry
from registry.schema import Calculator, Guideline, Input
from registry.versions import content, content_hash, read_lock, released_content
from registry.yamlio import load_text, rt_dump, rt_load
from tests.helpers import SHIPPED_ROOT, run, solo
from tests.hostile.helpers import edit_yaml, formula, hostile_copy, problems

CG = "creatinine-clearance-cockcroft-gault"


def cited_guidelines(c: Calculator) -> set[str]:
    """The guidelines a calculator cites, read here independently of the code under test."""
    return ({r.guideline for r in c.provenance} | set(c.literature_audit.guidelines)
            | {r.guideline for r in c.replacements if r.guideline})


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


def _edited(slug: str, change: Callable[[Any], None]) -> tuple[Registry, Calculator]:
    """The registry with one calculator file edited in place (read back through the schema, as the loader does)."""
    path = SHIPPED_ROOT / "formulas" / f"{slug}.yaml"
    data = rt_load(path)
    change(data)
    calc = Calculator.model_validate(load_text(rt_dump(data), path))
    reg = get_registry()
    return dataclasses.replace(reg, calculators={**reg.calculators, slug: calc}, hashes={}), calc


def _locked(slug: str) -> str:
    c = get_registry().calculators[slug]
    return read_lock(SHIPPED_ROOT / "formulas" / "REGISTRY.lock")[slug][c.active.version]


@pytest.mark.parametrize("slug,field,change", PAYLOADS, ids=[f"{s}:{f}" for s, f, _ in PAYLOADS])
def test_a_shown_field_edited_in_place_changes_the_version_hash(slug: str, field: str,
                                                                change: Callable[[Any], None]) -> None:
    reg, calc = _edited(slug, change)
    assert calc.model_dump() != get_registry().calculators[slug].model_dump(), "the payload changed nothing"
    assert content_hash(released_content(reg, calc, calc.active)) != _locked(slug)


def test_validate_fails_for_each_edited_calculator(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    chosen: dict[str, tuple[str, Callable[[Any], None]]] = {}  # one payload per calculator: one cause each
    for slug, field, change in PAYLOADS:
        chosen.setdefault(slug, (field, change))
    extra = [("body-surface-area", "formula.expression", _set(("formula", "expression"), "BSA = 1")),
             ("apache-ii", "deviations[].benchmark", _set(("deviations", 0, "benchmark"), "nothing differs")),
             ("adjusted-body-weight", "literature_audit.summary", _set(("literature_audit", "summary"), "fine"))]
    for slug, field, change in extra:
        chosen[slug] = (field, change)
    for slug, (_, change) in chosen.items():
        edit_yaml(root / "formulas" / f"{slug}.yaml", change)
    found = problems(root)
    for slug, (field, _) in chosen.items():
        assert any(p == f"formulas/{slug}.yaml" and code == "R-LOCK-CHANGED" for p, code, _ in found), (field, found)


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


GUIDELINE = "sepsis-3-2016"


def _citing() -> list[str]:
    return sorted(s for s, c in get_registry().calculators.items() if GUIDELINE in cited_guidelines(c))


@pytest.mark.parametrize("field,change", GUIDELINE_PAYLOADS, ids=[f for f, _ in GUIDELINE_PAYLOADS])
def test_a_cited_guideline_edited_in_place_changes_every_citing_hash(field: str, change: Callable[[Any], None]) -> None:
    path = SHIPPED_ROOT / "guidelines" / f"{GUIDELINE}.yaml"
    data = rt_load(path)
    change(data)
    g = Guideline.model_validate(load_text(rt_dump(data), path))
    reg = get_registry()
    assert g != reg.guidelines[GUIDELINE], "the payload changed nothing"
    view = dataclasses.replace(reg, guidelines={**reg.guidelines, GUIDELINE: g}, hashes={})
    assert len(_citing()) >= 2
    for s in _citing():
        c = view.calculators[s]
        assert content_hash(released_content(view, c, c.active)) != _locked(s), s


def test_validate_names_the_edited_guideline_for_every_citing_calculator(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    edit_yaml(root / "guidelines" / f"{GUIDELINE}.yaml", GUIDELINE_PAYLOADS[0][1])
    found = problems(root)
    for s in _citing():
        assert any(p == f"formulas/{s}.yaml" and code == "R-LOCK-DEPENDENCY" and GUIDELINE in msg
                   for p, code, msg in found), (s, found)


def test_a_guideline_edit_is_released_one_citing_calculator_at_a_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    citing = _citing()
    root = hostile_copy(tmp_path)
    solo(root, monkeypatch)  # a signed maintainer who may release at once
    edit_yaml(root / "guidelines" / f"{GUIDELINE}.yaml", GUIDELINE_PAYLOADS[1][1])
    for n, s in enumerate(citing):
        code, out, err = run(capsys, "release", s, "--reason", "guideline summary corrected", "--root", str(root))
        assert code == 0, err
        left = [p for p, c, _ in problems(root) if c.startswith("R-LOCK")]
        assert left == [f"formulas/{x}.yaml" for x in citing[n + 1:]], left


def test_released_edit_of_a_shown_field_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root = hostile_copy(tmp_path)
    solo(root, monkeypatch)  # a signed maintainer who may release at once
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

    class GrownInput(Input):
        future_hint: str | None = None

    class Grown(Calculator):
        inputs: list[GrownInput] = Field(default_factory=list)  # type: ignore[assignment]
        future_note: str | None = None
        future_flags: list[str] = Field(default_factory=list)

    grown = Grown.model_validate(calc.model_dump(mode="json"))
    assert content_hash(content(grown, grown.active, reg.units)) == content_hash(content(calc, calc.active, reg.units))
    assert content_hash(released_content(reg, grown, grown.active)) == content_hash(
        released_content(reg, calc, calc.active))
    grown = grown.model_copy(update={"future_note": "set"})  # once set, it is content
    assert content_hash(content(grown, grown.active, reg.units)) != content_hash(content(calc, calc.active, reg.units))


def test_content_keys_never_collide_with_calculator_fields() -> None:
    from registry.versions import ADDED_KEYS, covered_fields

    assert not set(ADDED_KEYS) & set(Calculator.model_fields)
    assert "versions" not in covered_fields() and {"name", "formula", "deviations"} <= set(covered_fields())


def test_an_older_lock_still_verifies_after_the_schema_gains_optional_fields() -> None:
    from registry.versions import legacy_content

    reg = get_registry()
    calc = reg.calculators[CG]

    class GrownInput(Input):
        future_hint: str | None = None

    class Grown(Calculator):
        inputs: list[GrownInput] = Field(default_factory=list)  # type: ignore[assignment]

    grown = Grown.model_validate(calc.model_dump(mode="json"))
    assert legacy_content(grown, grown.active, reg.units) == legacy_content(calc, calc.active, reg.units)
    first = grown.inputs[0].model_copy(update={"future_hint": "released with it"})  # a value set on the branch
    grown = grown.model_copy(update={"inputs": [first, *grown.inputs[1:]]})  # that added it is kept
    assert legacy_content(grown, grown.active, reg.units) != legacy_content(calc, calc.active, reg.units)
