"""The one-way layer order, read from the source: registry -> solver -> audit -> site -> cli.

Every import is found with `ast` (module level and inside functions, `import x` and `from x import
y`, relative imports resolved), so a lazy back-arrow is caught as surely as a top-level one. A
package may import itself and any package below it. No two modules may import each other, even
through a chain and even lazily.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAYERS = ("registry", "solver", "audit", "site", "cli")
RANK = {name: i for i, name in enumerate(LAYERS)}


@dataclass(frozen=True)
class Edge:
    """`source` (a module) imports `target` (a dotted name) at `path:line`."""

    source: str
    target: str
    path: str
    line: int


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def imports(source: str, module: str, path: Path, known: set[str] | None = None) -> Iterator[Edge]:
    """Every import in a module's source, wherever it sits, as fully qualified targets.

    `from a.b import c` names the module `a.b.c` when that is a module of the project (`known`),
    otherwise `a.b` itself.
    """
    known = known or set()
    tree = ast.parse(source, filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Edge(module, alias.name, str(path), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(module, path).split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield Edge(module, sub if sub in known else target, str(path), node.lineno)


def project_modules(root: Path = REPO, packages: Iterable[str] = LAYERS) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")) if (root / pkg).is_dir() else []:
            out[module_name(path, root)] = path
    return out


def all_edges(modules: dict[str, Path]) -> list[Edge]:
    known = set(modules)
    return [e for name, path in modules.items() for e in imports(path.read_text(encoding="utf-8"), name, path, known)]


def back_arrows(edges: Iterable[Edge]) -> list[str]:
    """Imports of a package above the importer's own: `path:line: a imports b`."""
    bad = []
    for e in edges:
        own, other = e.source.split(".")[0], e.target.split(".")[0]
        if own in RANK and other in RANK and RANK[other] > RANK[own]:
            bad.append(f"{e.path}:{e.line}: {e.source} imports {e.target} ({other} is above {own})")
    return bad


def cycles(edges: Iterable[Edge], modules: Iterable[str]) -> list[list[str]]:
    """Import cycles between project modules (each reported once, from its smallest member)."""
    names = set(modules)
    graph: dict[str, set[str]] = {m: set() for m in names}
    for e in edges:
        if e.target in names and e.target != e.source:
            graph[e.source].add(e.target)
    found: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    state: dict[str, int] = {}

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cyc = stack[stack.index(d):]
                key = tuple(sorted(cyc))
                if key not in seen:
                    seen.add(key)
                    found.append(cyc + [d])
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(names):
        if m not in state:
            visit(m, [m])
    return found


# ---------------------------------------------------------------------- the project


MODULES = project_modules()
EDGES = all_edges(MODULES)


def test_the_scan_sees_every_package_and_lazy_imports() -> None:
    assert {m.split(".")[0] for m in MODULES} >= {"registry", "solver", "audit", "cli"}
    # cli.main composes the packages below it; the scan must see those imports
    assert any(e.source == "cli.main" and e.target.startswith("audit") for e in EDGES)
    # a lazy import inside a function counts (solver.records imports the library inside a function)
    assert any(e.source == "solver.records" and e.target.startswith("solver.library") for e in EDGES)


def test_no_package_imports_one_above_it() -> None:
    bad = back_arrows(EDGES)
    assert not bad, "imports against the layer order registry -> solver -> audit -> site -> cli:\n" + "\n".join(bad)


def test_no_import_cycles_between_modules() -> None:
    found = cycles(EDGES, MODULES)
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


# ---------------------------------------------------------------------- the checker itself


def _fake_project(tmp: Path, files: dict[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        p = tmp / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return project_modules(tmp)


def test_a_synthetic_back_arrow_is_reported(tmp_path: Path) -> None:
    mods = _fake_project(tmp_path, {
        "registry/__init__.py": "",
        "registry/ok.py": "import json\nfrom registry import ok\n",
        "registry/bad.py": "def f():\n    from audit.cli import register  # lazy, inside a function\n    return register\n",
        "registry/worse.py": "import cli.main\n",
        "solver/__init__.py": "",
        "solver/rel.py": "from ..site import pages\n",  # a relative import that climbs out
        "solver/fine.py": "from .rel import x\nfrom registry.ok import y\n",
        "audit/__init__.py": "", "audit/cli.py": "", "cli/__init__.py": "", "cli/main.py": "",
    })
    bad = back_arrows(all_edges(mods))
    assert len(bad) == 3, bad
    assert any("registry/bad.py:2: registry.bad imports audit.cli" in b for b in bad), bad
    assert any("registry.worse imports cli.main" in b for b in bad), bad
    assert any("solver.rel imports site" in b for b in bad), bad


def test_a_synthetic_lazy_cycle_is_reported(tmp_path: Path) -> None:
    mods = _fake_project(tmp_path, {
        "registry/__init__.py": "",
        "registry/a.py": "from registry.b import thing\n",
        "registry/b.py": "def f():\n    from registry import a\n",
        "registry/c.py": "from . import a\n",
    })
    found = cycles(all_edges(mods), mods)
    assert found == [["registry.a", "registry.b", "registry.a"]], found
