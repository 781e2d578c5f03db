"""Order is part of what a version fixes: a clinician reads a points table's rows, a lookup's options and a
text's loops in the order the file holds them. Lists are hashed in order; mappings are hashed with sorted
keys (lock format 3, kept so every shipped hash stays valid) and their order is checked against the
snapshot written at release. So every permutation of a calculator file either leaves what it renders
unchanged or fails `formula validate`."""
from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

import pytest

from registry.loader import get_registry
from registry.schema import Calculator
from registry.texts import TextError, render, render_expression
from registry.versions import active_hash, order_changes, read_lock, read_snapshot
from registry.yamlio import load_file
from tests.hostile.helpers import edit_yaml, formula, hostile_copy


def _containers(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every list and mapping with two or more items whose reversal changes it."""
    if isinstance(data, dict):
        if len(data) > 1:
            yield path
        for k, v in data.items():
            yield from _containers(v, (*path, k))
    elif isinstance(data, list):
        if len(data) > 1 and data != data[::-1]:
            yield path
        for i, v in enumerate(data):
            yield from _containers(v, (*path, i))


def _flip(node: Any) -> Any:
    return dict(reversed(list(node.items()))) if isinstance(node, dict) else node[::-1]


def _reversed_at(data: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return _flip(data)
    out = copy.deepcopy(data)
    parent = out
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = _flip(parent[path[-1]])
    return out


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


def _shown(reg: Any, slugs: list[str]) -> list[str]:
    out = []
    for s in slugs:
        c = reg.calculators[s]
        try:
            out.append(render(c, calcs=reg.calculators, units=reg.units) + render_expression(
                c, calcs=reg.calculators, units=reg.units))
        except TextError as e:
            out.append(f"fails: {e}")
    return out


SLUGS = sorted(get_registry().calculators)


@pytest.mark.parametrize("slug", SLUGS)
def test_every_permutation_of_a_calculator_file_renders_the_same_or_fails_validate(slug: str) -> None:
    reg = get_registry()
    raw = _plain(load_file(reg.paths[slug]))
    lock = read_lock(reg.lock_path)
    snap = read_snapshot(reg.formulas_dir, slug, reg.calculators[slug].active.version)
    readers = [slug] + [s for s, c in reg.calculators.items() if slug in c.depends_on]
    before = _shown(reg, readers)
    tried = 0
    for path in _containers(raw):
        tried += 1
        try:
            calc = Calculator.model_validate(_reversed_at(raw, path))
        except ValueError:
            continue  # the schema refuses this order: validate fails
        view = replace(reg, calculators={**reg.calculators, slug: calc}, hashes={}, problems=[])
        caught = (active_hash(view, slug) != lock[slug].get(calc.active.version)
                  or (snap is not None and bool(order_changes(calc, snap))))
        if not caught:
            assert _shown(view, readers) == before, (slug, path)
    assert tried > 0


def test_validate_reports_a_reordered_points_table_at_its_line(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    path = root / "formulas" / "wells-pe.yaml"

    def flip(data: Any) -> None:
        pts = data["tables"]["points"]["points"]
        items = list(pts.items())
        for k, _ in items:
            del pts[k]
        for k, v in reversed(items):
            pts[k] = v
    edit_yaml(path, flip)
    assert formula(root, "texts", "render", cwd=tmp_path).returncode in (0, 1)
    proc = formula(root, "validate", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    line = next(n for n, ln in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if ln == "    points:")
    hits = [ln for ln in proc.stdout.splitlines() if "[R-LOCK-ORDER]" in ln]
    assert len(hits) == 1 and "tables.points.points" in hits[0] and "another order" in hits[0], proc.stdout
    assert hits[0].startswith("formulas/wells-pe.yaml:"), hits
    assert int(hits[0].split(":")[1]) == line, (hits, line)


def test_the_shipped_registry_is_in_its_released_order() -> None:
    reg = get_registry()
    for c in reg.calculators.values():
        snap = read_snapshot(reg.formulas_dir, c.slug, c.active.version)
        assert snap is not None and order_changes(c, snap) == [], c.slug
