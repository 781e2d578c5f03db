"""The site presents; it never computes a clinical result and never reaches above its layer."""
from __future__ import annotations

import ast
from pathlib import Path

import formula_site

PACKAGE = Path(formula_site.__file__).parent
FORBIDDEN = ("solver.library", "solver.executor", "cli")  # computing results; the command line above us


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def test_formula_site_imports_no_calculator_code_and_nothing_above_it():
    files = sorted(PACKAGE.glob("*.py"))
    assert len(files) >= 8
    bad = [f"{f.name}: {name}" for f in files for name in imports(f)
           if any(name == x or name.startswith(x + ".") for x in FORBIDDEN)]
    assert not bad, bad
