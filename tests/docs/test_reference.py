"""The guide's reference page is what docs/reference.py generates from the code now: a command, option, rule
code or JSON field added or changed without regenerating the page fails here."""
from __future__ import annotations

import importlib.util

from registry.loader import PROJECT_ROOT


def _generator():
    spec = importlib.util.spec_from_file_location("guide_reference", PROJECT_ROOT / "docs" / "reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_page_is_generated_from_the_code(monkeypatch) -> None:
    gen = _generator()
    monkeypatch.setenv("COLUMNS", "80")
    assert gen.PAGE.read_text(encoding="utf-8") == gen.page(), (
        "docs/guide/reference.md is out of date: run `PYTHONPATH=. python docs/reference.py`")


def test_the_reference_names_every_command_and_rule_code() -> None:
    from cli.main import COMMANDS
    from registry import codes

    text = (PROJECT_ROOT / "docs" / "guide" / "reference.md").read_text(encoding="utf-8")
    assert all(f"### `formula {n}`" in text for n in COMMANDS)
    every = {v for k, v in vars(codes).items() if k.isupper() and isinstance(v, str) and v.startswith("R-")}
    assert every and all(f"| `{c}` |" in text for c in every)
