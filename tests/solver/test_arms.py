"""Arm definitions: pinned names, Table 16 settings, access rules from the template AST, no leaks."""
from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from registry.loader import get_registry
from registry.texts import render as render_text
from registry.texts import text_hash
from solver.arms import ARMS, load_arm
from solver.arms import spec as specmod
from solver.arms.base import CaseInput
from solver.arms.formulate import TreeError, solve_reply
from solver.arms.spec import ArmError, ArmSpec, check_access, load_spec, lock_problems
from solver.runner.core import pick_example
from tests.solver.evalkit import ROWS

PINNED = ["note-only", "note-only-gold", "page-without-formula", "open-book", "extract-solve", "gold-solve",
          "program-solve", "program-solve-syntax", "blind-program-solve", "blind-vote", "blind-repair",
          "blind-repair-vote", "formulate-solve", "gold-solve-published", "gold-solve-successor"]

# Table 16 (and Appendix A.1): note budget (0 = whole note), temperature, output-token cap
TABLE16 = {
    "note-only": (120, 0.0, 4096), "note-only-gold": (120, 0.0, 4096), "page-without-formula": (250, 0.0, 4096),
    "open-book": (0, 0.0, 4096), "extract-solve": (0, 0.0, 512), "program-solve": (0, 0.0, 2048),
    "program-solve-syntax": (0, 0.0, 2048), "blind-program-solve": (0, 0.0, 1024), "blind-vote": (0, 0.7, 1024),
    "blind-repair": (0, 0.0, 1024), "blind-repair-vote": (0, 0.7, 1024), "formulate-solve": (0, 0.0, 2048),
}
ACCESS = {  # Table 1: formula, variables
    "note-only": ("recalled", "extracted"), "note-only-gold": ("recalled", "given"),
    "page-without-formula": ("suppressed", "given"), "open-book": ("given", "given"),
    "extract-solve": ("hardcoded", "extracted"), "gold-solve": ("hardcoded", "given"),
    "program-solve": ("given", "given"), "blind-program-solve": ("recalled", "extracted"),
}


def test_every_pinned_arm_registered_and_loads():
    assert sorted(ARMS.names()) == sorted(PINNED)
    for name in PINNED:
        assert load_arm(name).spec.name == name


@pytest.mark.parametrize("name", sorted(TABLE16))
def test_table16_settings(name):
    s = load_spec(name)
    assert (s.note_budget_words, s.temperature, s.max_tokens) == TABLE16[name]
    if name in ACCESS:
        assert (s.formula_access, s.variable_access) == ACCESS[name]
    assert s.samples == (5 if name in ("blind-vote", "blind-repair-vote") else 1)
    assert s.worked_example == ("seeded" if name.startswith("note-only") else "none")


def test_arm_versions_locked():
    assert lock_problems() == []


def _spec(**kw) -> ArmSpec:
    base = dict(name="t", version="1.0.0", changelog=["1.0.0: t"], title="t", paper="t", kind="text",
                formula_access="recalled", variable_access="extracted", note_budget_words=0, temperature=0.0,
                max_tokens=10, templates={"user": "t.j2"})
    base.update(kw)
    return ArmSpec(**base)


@pytest.fixture
def tdir(tmp_path, monkeypatch):
    monkeypatch.setattr(specmod, "TEMPLATES", tmp_path)
    return tmp_path


def test_access_formula_text_refused_without_formula_access(tdir):
    (tdir / "t.j2").write_text("{{ note }} {{ formula_text }}")
    with pytest.raises(ArmError, match="names formula_text"):
        check_access(_spec())
    check_access(_spec(formula_access="given"))


def test_access_through_include_and_unknown_names(tdir):
    (tdir / "inner.j2").write_text("{{ variables }}")
    (tdir / "t.j2").write_text("{{ note }}{% include 'inner.j2' %}")
    with pytest.raises(ArmError, match="names variables"):
        check_access(_spec())
    (tdir / "t.j2").write_text("{{ note }} {{ answer }} {{ explanation }} {{ lower_limit }}")
    with pytest.raises(ArmError, match="answer, explanation, lower_limit"):
        check_access(_spec())


def test_access_promised_names_must_be_used(tdir):
    (tdir / "t.j2").write_text("{{ note }}")
    with pytest.raises(ArmError, match="never uses formula_text"):
        check_access(_spec(formula_access="given"))


def test_definition_rules():
    with pytest.raises(ValueError, match="temperature 0.7"):
        _spec(samples=5)
    with pytest.raises(ValueError, match="greedily"):
        _spec(temperature=0.7)
    with pytest.raises(ValueError, match="changelog"):
        _spec(version="1.0.1")


SENTINELS = {"answer": 98765.4321, "lower": 12344.321, "upper": 56788.123, "explanation": "SENTINEL-EXPLANATION-7d1f"}


def _cases(rows, seed=42):
    reg = get_registry()
    for row in rows:
        calc = reg.by_id(row.calculator_id)
        text = render_text(calc, calcs=reg.calculators, units=reg.units)
        yield row, calc, text


def test_no_test_row_answer_explanation_or_limits_reach_any_prompt():
    """Render every model arm for every one-shot row, with the row's gold fields replaced by sentinels."""
    reg = get_registry()
    checked = 0
    cases = list(_cases(ROWS))
    for name in PINNED:
        arm = load_arm(name)
        for row, calc, text in cases:
            marked = dataclasses.replace(row, **SENTINELS)
            example = pick_example(arm.spec, row, 42, ROWS)
            case = CaseInput(row=marked, seed=42, calc=calc, formula_text=text, text_version=calc.active.version,
                             text_sha256=text_hash(text), example=example, registry=reg)
            for prompt in arm.prompts(case).values():
                for value in SENTINELS.values():
                    assert str(value) not in prompt, (name, row.row_number)
                assert row.explanation[:60] not in prompt, (name, row.row_number)  # the real one, too
                if example is not None:
                    assert example.row_number != row.row_number
                checked += 1
    assert checked >= 12 * 55 - 3  # every model arm x row (formulate-solve skips the 3 date rows)


def test_note_budget_and_formula_presence():
    reg = get_registry()
    row, calc, text = next((r, c, t) for r, c, t in _cases(ROWS) if len(r.note.split()) > 300)

    def prompt(name):
        arm = load_arm(name)
        case = CaseInput(row=row, seed=42, calc=calc, formula_text=text, text_version="", text_sha256="",
                         example=pick_example(arm.spec, row, 42, ROWS), registry=reg)
        return arm.prompts(case)["user"]

    words = row.note.split()
    assert " ".join(words[:120]) in prompt("note-only") and " ".join(words[:121]) not in prompt("note-only")
    assert " ".join(words[:250]) in prompt("page-without-formula")
    assert " ".join(words[:251]) not in prompt("page-without-formula")
    assert row.note in prompt("open-book") and row.note in prompt("blind-program-solve")
    assert text.strip() in prompt("open-book") and text.strip() in prompt("program-solve")
    for name in ("note-only", "page-without-formula", "blind-program-solve", "formulate-solve"):
        assert text.strip() not in prompt(name)
    syntax, plain = prompt("program-solve-syntax"), prompt("program-solve")
    assert len(syntax.splitlines()) == len(plain.splitlines()) + 2


def test_seed_chooses_note_only_example():
    spec = load_spec("note-only")
    chosen = {pick_example(spec, ROWS[0], seed, ROWS).row_number for seed in range(42, 47)}
    assert len(chosen) > 1 and ROWS[0].row_number not in chosen


def test_formulate_tree_exact():
    reply = {"variables": {"a": 0.1, "b": 0.2}, "missing": [], "tree": {"op": "+", "args": ["a", "b"]}}
    assert solve_reply(reply) == Fraction(3, 10)  # exact: 0.1 + 0.2 is 3/10, not 0.30000000000000004
    cmp = {"variables": {"x": 5}, "tree": {"op": "+", "args": [{"op": ">=", "args": ["x", 5]}, 1]}}
    assert solve_reply(cmp) == 2
    for bad, msg in [({"variables": {"x": 1}, "missing": ["x"], "tree": "x"}, "missing"),
                     ({"variables": {}, "tree": "y"}, "unknown variable"),
                     ({"variables": {}, "tree": {"op": "/", "args": [1, 0]}}, "division by zero"),
                     ({"variables": {}, "tree": {"op": "log", "args": [1, 2]}}, "unknown operator"),
                     ({"variables": {}, "tree": {"op": "^", "args": [2, 0.5]}}, "whole-number exponent"),
                     ({"variables": {"x": True}, "tree": "x"}, "not a number")]:
        with pytest.raises(TreeError, match=msg):
            solve_reply(bad)
