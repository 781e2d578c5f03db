"""The lock is read capped and strict: an unknown key, a duplicate key, NaN or an oversized lock is one
problem naming formulas/REGISTRY.lock, and writing commands refuse such a registry without writing."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from registry import jsontext
from tests.hostile.helpers import formula, hostile_copy, problems

LOCK = "formulas/REGISTRY.lock"


def _edit(root: Path, change) -> Path:  # type: ignore[no-untyped-def]
    p = root / LOCK
    p.write_text(change(p.read_text(encoding="utf-8")), encoding="utf-8")
    return p


def _add(key: str, value: object):  # type: ignore[no-untyped-def]
    def change(text: str) -> str:
        data = json.loads(text)
        data[key] = value
        return json.dumps(data, indent=2)
    return change


EDITS = {
    **{f"unknown top-level key {k!r}": _add(k, v) for k, v in
       [("calculators_extra", {}), ("Format", 3), ("note", "x"), ("sealed", {}), ("", 1)]},
    "unknown seal key": lambda t: t.replace('"digest":', '"reopened": "2026-01-01", "digest":', 1),
    "duplicate format": lambda t: t.replace('"format": 3', '"format": 3, "format": 2', 1),
    "duplicate calculator": lambda t: t.replace('"calculators": {', '"calculators": {"body-mass-index": {}, ', 1),
    "duplicate version": lambda t: t.replace('"body-mass-index": {', '"body-mass-index": {"1.0.0": "x", ', 1),
    "NaN format": lambda t: t.replace('"format": 3', '"format": NaN', 1),
    "Infinity about": lambda t: t.replace('"about": ', '"about": Infinity, "x": ', 1),
    "deep nesting": lambda t: t.replace('"about": ', '"about": ' + "[" * 5000 + "]" * 5000 + ', "y": ', 1),
    "oversized": lambda t: t.replace('"about": "', '"about": "' + "x" * (jsontext.LOCK_MAX + 1), 1),
    "many values": lambda t: t.replace('"about": ', '"about": [' + "0," * 600_000 + '0], "z": ', 1),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_lock_edit_that_could_say_two_things_is_one_problem_naming_it(tmp_path: Path, edit: str) -> None:
    root = hostile_copy(tmp_path)
    _edit(root, EDITS[edit])
    found = [(f, code) for f, code, _ in problems(root)]
    assert (LOCK, "R-LOCK-UNREADABLE") in found, found


@pytest.mark.parametrize("command", [("lock",), ("lock", "--rehash"), ("release", "body-mass-index", "--part", "patch", "--reason", "x")],
                         ids=["lock", "rehash", "release"])
@pytest.mark.parametrize("edit", ["unknown top-level key 'note'", "duplicate format", "oversized"])
def test_a_writer_refuses_the_registry_and_writes_nothing(tmp_path: Path, edit: str, command: tuple[str, ...]) -> None:
    root = hostile_copy(tmp_path)
    lock = _edit(root, EDITS[edit])
    before = lock.read_bytes()
    run = formula(root, *command)
    assert run.returncode != 0 and "Traceback" not in run.stderr + run.stdout, run.stderr
    assert "REGISTRY.lock" in run.stdout + run.stderr
    assert lock.read_bytes() == before
