"""A function that passes 60 lines usually holds two ideas: each one that does says why on its `def` line.

The reason is a comment starting `# long:` on the line that opens the function (its `def`, or the line
ending its signature), so a reader meets it before the body.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("registry", "solver", "audit", "formula_site", "cli")
LIMIT = 60


def long_functions(root: Path = ROOT) -> list[str]:
    """`path:line name (N lines)` for every function over LIMIT lines without a `# long:` reason."""
    found = []
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines()
            for node in ast.walk(ast.parse(text)):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                size = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                opening = lines[node.lineno - 1:node.body[0].lineno - 1]
                if size > LIMIT and not any("# long:" in line for line in opening):
                    found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({size} lines)")
    return found


def test_every_long_function_says_why() -> None:
    found = long_functions()
    assert not found, "functions over 60 lines without a `# long: reason` on their def line:\n" + "\n".join(found)


def test_the_check_finds_an_unexplained_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT + 1))
    (tmp_path / "registry").mkdir()
    (tmp_path / "registry" / "m.py").write_text(f"def big():\n{body}\n\n\ndef why():  # long: a table\n{body}\n")
    assert long_functions(tmp_path) == [f"registry{__import__('os').sep}m.py:1 big ({LIMIT + 2} lines)"]
