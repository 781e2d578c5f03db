"""A registry template is data: a payload that reaches for code is reported with its file, field and
line, and never runs (no marker file appears), in every command that renders templates."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from registry.loader import get_registry, load
from registry.texts import TextError, render, render_expression
from registry.yamlio import block
from solver.tools.service import explain
from tests.helpers import SHIPPED_ROOT
from tests.hostile.helpers import edit_yaml, formula, hostile_copy, problems

SLUG = "body-mass-index"


def _escapes(marker: Path) -> list[str]:
    """Classic jinja2 escapes, each of which runs `touch MARKER` (or opens it) in a plain Environment."""
    return [
        f"{{{{ cycler.__init__.__globals__.os.system('touch {marker}') }}}}",
        f"{{{{ lipsum.__globals__['os'].popen('touch {marker}').read() }}}}",
        f"{{{{ self.__init__.__globals__.__builtins__.open('{marker}', 'w') }}}}",
        f"{{{{ joiner.__init__.__globals__.os.system('touch {marker}') }}}}",
        f"{{{{ c.__class__.__mro__[1].__subclasses__() }}}}{{{{ namespace.__init__.__globals__.os.system"
        f"('touch {marker}') }}}}",
        f"{{{{ c | attr('__class__') }}}}{{{{ cycler.__init__.__globals__.os.system('touch {marker}') }}}}",
    ]


def _active(data: Any) -> Any:
    return next(v for v in data["versions"] if v["status"] == "active")


def _plant_expression(root: Path, payload: str, slug: str = SLUG) -> None:
    def change(data: Any) -> None:
        data["formula"]["expression"] = payload
    edit_yaml(root / "formulas" / f"{slug}.yaml", change)


def _plant_text(root: Path, payload: str, slug: str = SLUG) -> None:
    def change(data: Any) -> None:
        v = _active(data)
        v["text"] = block(str(v["text"]).rstrip("\n") + "\n" + payload + "\n")
    edit_yaml(root / "formulas" / f"{slug}.yaml", change)


def _line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


@pytest.mark.parametrize("n", range(6))
def test_an_escaping_expression_or_text_is_refused_and_runs_nothing(tmp_path: Path, n: int) -> None:
    from registry.texts import template_problems

    marker = tmp_path / "MARKER"
    payload = _escapes(marker)[n]
    assert template_problems(payload)
    calc = get_registry().calculators[SLUG]
    active = calc.active  # (the models are frozen: the edited entry is a copy, built field by field)
    evil = calc.model_copy(update={
        "formula": calc.formula.model_copy(update={"expression": payload}),
        "versions": [v.model_copy(update={"text": active.text + "\n" + payload}) if v is active else v
                     for v in calc.versions]})
    with pytest.raises(TextError, match="template line 1"):
        render_expression(evil)
    with pytest.raises(TextError, match="template line"):
        render(evil)
    assert not marker.exists(), "the template ran"


CARRIERS = ["body-mass-index", "body-surface-area", "anion-gap", "delta-gap", "fib-4", "qsofa"]


def test_validate_reports_each_planted_template_at_its_line_and_runs_none(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    marker = tmp_path / "MARKER"
    for slug, payload in zip(CARRIERS, _escapes(marker)):  # one escape per calculator's expression
        _plant_expression(root, payload, slug)
    for slug, n in (("ckd-epi-2021", 0), ("curb-65", 2), ("wells-pe", 4)):  # and some in active texts
        _plant_text(root, _escapes(marker)[n], slug)
    proc = formula(root, "validate", cwd=tmp_path)
    assert not marker.exists(), "a template ran"
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    for slug in CARRIERS:
        line = _line_of(root / "formulas" / f"{slug}.yaml", "expression:")
        assert f"formulas/{slug}.yaml:{line}: formula.expression: template line 1:" in proc.stdout, (slug, proc.stdout)
    for slug in ("ckd-epi-2021", "curb-65", "wells-pe"):
        line = _line_of(root / "formulas" / f"{slug}.yaml", str(marker))
        assert any(ln.startswith(f"formulas/{slug}.yaml:{line}: versions[") and ".text: template line" in ln
                   for ln in proc.stdout.splitlines()), (slug, line, proc.stdout)


COMMANDS = [("texts", "render"), ("show", SLUG)]


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_no_rendering_command_runs_a_planted_template(tmp_path: Path, command: tuple[str, ...]) -> None:
    root = hostile_copy(tmp_path)
    marker = tmp_path / "MARKER"
    _plant_expression(root, _escapes(marker)[0])
    _plant_text(root, _escapes(marker)[1])
    proc = formula(root, *command, cwd=tmp_path)
    assert not marker.exists(), (command, proc.stdout, proc.stderr)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr


def test_mcp_explain_of_a_planted_template_runs_nothing(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    marker = tmp_path / "MARKER"
    _plant_expression(root, _escapes(marker)[3])
    _plant_text(root, _escapes(marker)[0])
    reg = load(root)
    out = explain(reg, SLUG)
    assert not marker.exists()
    assert "cannot be rendered" in out["text"] and out["expression"] is None


SANDBOX_ONLY = [  # the static check lets these through; the sandbox stops them when rendered
    '{% set a = "__cla" ~ "ss__" %}{{ c[a] }}',
    '{% set m = "model_" ~ "dump" %}{{ i["weight"].spec[m]() }}',
    '{{ "x" * 100000000 }}',
    "{{ 10 ** 100000000 }}",
    '{% set f = "for" ~ "mat" %}{{ "{0.__class__}"[f](c) }}',
    # work bombs: each would run for minutes or fill memory without the render budget
    '{% set s = "x" * 1000 %}' + "{% set s = s ~ s %}" * 40 + "{{ s | length }}",
    '{% set s = "x" * 60000 %}{% set s = s + s %}{{ s | length }}',
    '{% set X = "x" * 90000 %}{% for a in X %}{% for b in X %}{% endfor %}{% endfor %}',
    '{% set X = ["x"] * 50000 %}{% for a in X %}{{ X | join("-") | length }}{% endfor %}',
    '{{ "%999999999s" % "x" }}',
]


@pytest.mark.parametrize("payload", SANDBOX_ONLY)
def test_the_sandbox_stands_behind_the_check(tmp_path: Path, payload: str) -> None:
    from registry.texts import template_problems

    assert template_problems(payload) == []
    root = hostile_copy(tmp_path)
    _plant_text(root, payload)
    reg = load(root)
    start = time.perf_counter()
    with pytest.raises(TextError):
        render(reg.calculators[SLUG], calcs=reg.calculators, units=reg.units)
    assert time.perf_counter() - start < 5
    found = problems(root)
    assert any(p == f"formulas/{SLUG}.yaml" and code == "R-TEXT" for p, code, _ in found), found


@pytest.mark.parametrize("payload,what", [
    ('{% import "os" as os %}', "import"),
    ('{% include "/etc/passwd" %}', "include"),
    ('{% extends "/etc/passwd" %}', "extends"),
    ("{% macro m() %}x{% endmacro %}{{ m() }}", "macro"),
    ("{{ range(10) | list }}", "'range'"),
    ('{{ c | map(attribute="__class__") | list }}', "'map'"),
    ('{{ c | sort(attribute="__class__") }}', "attribute='__class__'"),
    ('{{ i["weight"]["__class__"] }}', "'__class__'"),
])
def test_statements_names_and_filters_outside_the_allow_list_are_problems(payload: str, what: str) -> None:
    from registry.texts import template_problems

    found = template_problems(payload)
    assert found and any(what in p for _, p in found), found


def test_a_superseded_version_text_is_checked_too(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    marker = tmp_path / "MARKER"

    def change(data: Any) -> None:
        old = next(v for v in data["versions"] if v["status"] == "superseded")
        old["text"] = block(str(old["text"]).rstrip("\n") + "\n" + _escapes(marker)[0] + "\n")
    edit_yaml(root / "formulas" / f"{SLUG}.yaml", change)
    found = problems(root)
    assert not marker.exists()
    assert any(code == "R-TEXT" and ".text: template line" in msg for _, code, msg in found), found


def test_every_shipped_template_passes_the_check() -> None:
    from registry.texts import template_problems

    reg = load(SHIPPED_ROOT)
    for c in reg.calculators.values():
        for v in c.versions:
            assert template_problems(v.text) == [], (c.slug, v.version)
        assert template_problems(c.formula.expression or "") == [], c.slug
