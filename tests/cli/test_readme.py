"""The README's first steps stay true: the install command, the venv the tour runs in, the counts the
documentation states (README, user guide, bench/README.md)."""
from __future__ import annotations

import ast
import re
import sys
import tomllib

from registry.loader import PROJECT_ROOT
from tests.docs.pages import documentation
from tests.helpers import SHIPPED_ROOT

README = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
FIRST_PARTY = {"registry", "solver", "audit", "formula_site", "cli"}
# import name of each distribution the README's first command installs (core dependencies and the site extra)
IMPORT_NAMES = {"pydantic": "pydantic", "pyyaml": "yaml", "jinja2": "jinja2", "numpy": "numpy", "pandas": "pandas",
                "tqdm": "tqdm", "scipy": "scipy", "ruamel.yaml": "ruamel", "httpx": "httpx", "filelock": "filelock",
                "markdown-it-py": "markdown_it", "rich": "rich", "mkdocs-material": "mkdocs",
                "matplotlib": "matplotlib", "fhir.resources": "fhir", "zstandard": "zstandard"}


def _installed_by_first_command() -> set[str]:
    meta = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = meta["dependencies"] + meta["optional-dependencies"]["site"]
    names = {re.split(r"[<>=!\[ ;]", r, maxsplit=1)[0].lower() for r in reqs}
    assert names <= set(IMPORT_NAMES), f"add the import name of {names - set(IMPORT_NAMES)} here"
    return {IMPORT_NAMES[n] for n in names}


def test_first_command_builds_and_says_open_once() -> None:
    first = re.search(r"```bash\n(.*?)\n```", README, re.S).group(1)
    assert "formula site build" in first and "open" not in first  # `formula site build` prints "open ..." itself
    src = (PROJECT_ROOT / "formula_site" / "site_cli.py").read_text(encoding="utf-8")
    build = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "cmd_build")
    assert ast.get_source_segment(src, build).count('print(f"open ') == 1


def test_tour_runs_in_the_readmes_venv() -> None:
    tour = README.split("## A tour of the command line", 1)[1].split("\n## ", 1)[0]
    assert ". .venv/bin/activate" in tour and ".venv/bin/formula" in tour and "python bench/" in tour


def _optional(tree: ast.AST) -> set[int]:
    """ids of import nodes inside `try: ... except ImportError` (a script that runs without them)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
                for h in node.handlers):
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return out


def test_bench_scripts_import_only_what_the_readmes_venv_installs() -> None:
    scripts = sorted((PROJECT_ROOT / "bench").glob("*.py"))
    siblings = {s.stem for s in scripts}  # (bench/columnar.py imports bench/benchmark_frames.py beside it)
    allowed = _installed_by_first_command() | FIRST_PARTY | siblings | set(sys.stdlib_module_names)
    for script in scripts:
        tree = ast.parse(script.read_text(encoding="utf-8"))
        optional = _optional(tree)
        for node in ast.walk(tree):
            if id(node) in optional:
                continue
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])
            for name in names:
                assert name.split(".")[0] in allowed, f"{script.name} imports {name}, which `pip install -e '.[site]'` lacks"


def test_stated_text_counts_are_the_catalogues() -> None:
    import json

    index = json.loads((SHIPPED_ROOT / "formulas" / "texts" / "index.json").read_text(encoding="utf-8"))
    counts = {int(n) for n in re.findall(r"\b(\d+) texts\b", documentation())}
    assert counts == {len(index["texts"])}, counts


def test_tour_shows_what_a_person_sees_at_80_columns(capsys, monkeypatch) -> None:
    """Each `$ formula ...` of the tour's sample, run at 80 columns, prints exactly the lines shown under it."""
    import shlex

    from cli.main import main

    tour = README.split("## A tour of the command line", 1)[1].split("\n## ", 1)[0]
    sample = re.search(r"```text\n(.*?)\n```", tour, re.S).group(1)
    monkeypatch.setenv("COLUMNS", "80")
    shown = re.split(r"^\$ ", sample, flags=re.M)[1:]
    assert len(shown) >= 3
    for block in shown:
        command, _, expected = block.partition("\n")
        argv = shlex.split(command)
        assert argv[0] == "formula"
        main(argv[1:])
        got = capsys.readouterr()
        assert (got.out + got.err).rstrip("\n") == expected.rstrip("\n"), command
