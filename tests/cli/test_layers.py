"""The one-way layer order, read from the source: registry -> solver -> audit -> formula_site -> cli -> bench.

Every import is found with `ast` (module level and inside functions, `import x` and `from x import
y`, relative imports resolved), so a lazy back-arrow is caught as surely as a top-level one. A
package may import itself and any package below it. `bench/` (the benchmarks) sits on top: it may
import any package of the product, and nothing in the product imports it.

Inside a package the same holds between its parts (`INNER`): the registry's core (schema, loader,
YAML I/O, lock, validation, texts, and `registry.trust`, which checks who decided what) sits below
`registry.governance` (which makes decisions), and the registry's command-line face sits above both;
the solver's subpackages run from the calculator library and the executor up to its commands. Parts
on the same tier do not import each other. No two modules may import each other, even through a
chain and even lazily.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAYERS = ("registry", "solver", "audit", "formula_site", "cli", "bench")
RANK = {name: i for i, name in enumerate(LAYERS)}

# the order inside a package, lowest tier first; a part is a module or a subpackage (the longest matching
# name wins); the package's own name stands for every module of it that no other part names
INNER: dict[str, tuple[tuple[str, ...], ...]] = {
    "registry": (
        ("registry",),  # the core, `registry.trust` included
        ("registry.governance",),
        ("registry.report",),  # what `formula show` prints: a calculator with its pending and signed decisions
        ("registry.commands",),  # the registry's commands (validate, show, lock, ...)
    ),
    "solver": (
        ("solver", "solver.library", "solver.executor", "solver.plugins", "solver.csv_guard", "solver.data"),
        ("solver.replies", "solver.records"),
        ("solver.scoring",),
        ("solver.arms", "solver.router", "solver.tools"),
        ("solver.engines",),
        ("solver.runner",),
        ("solver.importers",),
        ("solver.batch_output", "solver.cohort_table"),
        ("solver.batch_stream",),
        ("solver.batch_cli", "solver.convert_cli", "solver.exec_cli", "solver.import_cli", "solver.replay_cli",
         "solver.run_cli", "solver.solve_cli", "solver.tools_cli"),
    ),
}


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


def back_arrows(edges: Iterable[Edge], inner: dict[str, tuple[tuple[str, ...], ...]] | None = None) -> list[str]:
    """Imports of a package above the importer's own, or of a part above (or beside) the importer's part
    inside one package: `path:line: a imports b (why)`."""
    inner = INNER if inner is None else inner
    bad = []
    for e in edges:
        own, other = e.source.split(".")[0], e.target.split(".")[0]
        if own in RANK and other in RANK and RANK[other] > RANK[own]:
            bad.append(f"{e.path}:{e.line}: {e.source} imports {e.target} ({other} is above {own})")
        elif own == other and own in inner:
            why = _inner_why(e, inner[own])
            if why:
                bad.append(f"{e.path}:{e.line}: {e.source} imports {e.target} ({why})")
    return bad


def part_of(module: str, tiers: tuple[tuple[str, ...], ...]) -> tuple[int, str] | None:
    """(tier, part) of a module: the longest part name that is the module or a package holding it."""
    best: tuple[int, str] | None = None
    for i, parts in enumerate(tiers):
        for part in parts:
            if (module == part or module.startswith(part + ".")) and (best is None or len(part) > len(best[1])):
                best = (i, part)
    return best


def _inner_why(e: Edge, tiers: tuple[tuple[str, ...], ...]) -> str | None:
    src, dst = part_of(e.source, tiers), part_of(e.target, tiers)
    if src is None or dst is None or src[1] == dst[1]:
        return None
    if dst[0] > src[0]:
        return f"{dst[1]} is above {src[1]}"
    if dst[0] == src[0]:
        return f"{dst[1]} and {src[1]} are on the same tier"
    return None


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
    assert {m.split(".")[0] for m in MODULES} == set(LAYERS)
    # every package named holds Python (the site's sources, `site/`, hold none: its code is formula_site)
    assert all(any(m.split(".")[0] == pkg for m in MODULES) for pkg in LAYERS)
    # cli.main composes the packages below it; the scan must see those imports
    assert any(e.source == "cli.main" and e.target.startswith("audit") for e in EDGES)
    # a lazy import inside a function counts (solver.records imports the library inside a function)
    assert any(e.source == "solver.records" and e.target.startswith("solver.library") for e in EDGES)


def test_no_package_imports_one_above_it() -> None:
    bad = back_arrows(EDGES)
    assert not bad, ("imports against the layer order registry -> solver -> audit -> formula_site -> cli -> bench "
                     "(or the order inside a package, INNER):\n" + "\n".join(bad))


def test_every_solver_module_has_a_tier() -> None:
    """A new part of the solver is placed in INNER on purpose (the registry's core takes the rest)."""
    loose = [m for m in MODULES if m.startswith("solver.") and part_of(m, INNER["solver"]) == (0, "solver")]
    assert not loose, f"solver modules not placed in INNER['solver']: {loose}"


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
        "solver/rel.py": "from ..formula_site import pages\n",  # a relative import that climbs out
        "solver/fine.py": "from .rel import x\nfrom registry.ok import y\n",
        "audit/__init__.py": "", "audit/cli.py": "", "cli/__init__.py": "", "cli/main.py": "",
    })
    bad = back_arrows(all_edges(mods))
    assert len(bad) == 3, bad
    assert any("registry/bad.py:2: registry.bad imports audit.cli" in b for b in bad), bad
    assert any("registry.worse imports cli.main" in b for b in bad), bad
    assert any("solver.rel imports formula_site" in b for b in bad), bad


def test_a_synthetic_lazy_cycle_is_reported(tmp_path: Path) -> None:
    mods = _fake_project(tmp_path, {
        "registry/__init__.py": "",
        "registry/a.py": "from registry.b import thing\n",
        "registry/b.py": "def f():\n    from registry import a\n",
        "registry/c.py": "from . import a\n",
    })
    found = cycles(all_edges(mods), mods)
    assert found == [["registry.a", "registry.b", "registry.a"]], found


def test_a_lazy_import_of_the_site_from_audit_is_reported(tmp_path: Path) -> None:
    mods = _fake_project(tmp_path, {
        "audit/__init__.py": "", "formula_site/__init__.py": "", "formula_site/pages.py": "",
        "audit/tables.py": "def page():\n    import formula_site.pages\n    return formula_site.pages\n",
        "bench/__init__.py": "", "bench/run.py": "from formula_site import pages\nfrom audit import tables\n",
    })
    bad = back_arrows(all_edges(mods))
    assert bad == [f"{tmp_path}/audit/tables.py:2: audit.tables imports formula_site.pages "
                   "(formula_site is above audit)"], bad


def test_a_lazy_import_of_governance_from_the_registry_core_is_reported(tmp_path: Path) -> None:
    mods = _fake_project(tmp_path, {
        "registry/__init__.py": "", "registry/governance/__init__.py": "",
        "registry/governance/release.py": "from registry.trust.log import check\nfrom registry import loader\n",
        "registry/trust/__init__.py": "", "registry/trust/log.py": "",
        "registry/loader.py": "def load():\n    from registry.governance.release import release\n",
        "registry/snapshot_extras.py": "def f():\n    from .governance import release\n",
        "registry/commands.py": "from registry.governance import release\n",  # the command face sits above
    })
    bad = back_arrows(all_edges(mods))
    assert len(bad) == 2, bad
    assert any("registry.loader imports registry.governance.release (registry.governance is above registry)" in b
               for b in bad), bad
    assert any("registry/snapshot_extras.py:2: registry.snapshot_extras imports registry.governance.release" in b for b in bad), bad


def test_an_arrow_back_up_inside_the_solver_is_reported(tmp_path: Path) -> None:
    mods = _fake_project(tmp_path, {
        "solver/__init__.py": "", "solver/library/__init__.py": "", "solver/runner/__init__.py": "",
        "solver/library/core.py": "def f():\n    from solver.runner import run\n",
        "solver/runner/core.py": "from solver.library import core\n",
        "solver/arms/__init__.py": "from solver.router import x\n", "solver/router/__init__.py": "",
    })
    bad = sorted(back_arrows(all_edges(mods)))
    assert len(bad) == 2, bad
    assert "solver.arms imports solver.router (solver.router and solver.arms are on the same tier)" in bad[0], bad
    assert "solver.library.core imports solver.runner (solver.runner is above solver.library)" in bad[1], bad
