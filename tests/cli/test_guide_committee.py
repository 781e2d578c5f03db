"""docs/guide/committee-first-day.md runs as written: every ```console block, in page order, in a registry made
by `formula init` (tests.helpers.committee_registry) on $FORMULA_TODAY 2026-12-02, with HOME holding the
people's keys. What each command prints must be the lines under it; commit ids and key fingerprints are masked,
and a line `...` alone matches any lines. To see what the commands print now:

    PYTHONPATH=. .venv/bin/python -m tests.cli.test_guide_committee
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from registry.loader import PROJECT_ROOT
from tests.cli.test_readme_walkthroughs import DAY, Step, _masked, blocks, run_step
from tests.helpers import committee_registry

PAGE = PROJECT_ROOT / "docs" / "guide" / "committee-first-day.md"


def steps(text: str | None = None) -> list[Step]:
    text = PAGE.read_text(encoding="utf-8") if text is None else text
    out: list[Step] = []
    for _, info, body in blocks(text):
        if info != "console":
            continue
        for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
            lines = chunk.split("\n")
            command = lines.pop(0)
            out.append(Step(command, "\n".join(lines).rstrip("\n")))
    return out


def matches(got: str, expected: str) -> bool:
    """`got` is `expected`, where a line `...` alone stands for any lines (none too)."""
    pattern = "\n".join(".*" if line == "..." else re.escape(line) for line in expected.split("\n"))
    return re.fullmatch(pattern.replace("\n.*\n", "(?:\n.*)*\n").replace("\n.*", "(?:\n.*)*")
                        if expected else "", got, re.S if "..." in expected.split("\n") else 0) is not None


@contextlib.contextmanager
def first_day(tmp: Path) -> Iterator[tuple[Path, Path]]:
    root = committee_registry(tmp)
    home = tmp / "home"
    saved = {k: os.environ.get(k) for k in ("HOME", "FORMULA_TODAY", "FORMULA_REGISTRY_ROOT", "COLUMNS")}
    cwd = os.getcwd()
    os.environ.update(HOME=str(home), FORMULA_TODAY=DAY, COLUMNS="80")
    os.environ.pop("FORMULA_REGISTRY_ROOT", None)  # found from the current folder, as a person's shell finds it
    os.chdir(root)
    try:
        yield root, home
    finally:
        os.chdir(cwd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_the_page_has_people_and_site_steps() -> None:
    commands = [s.command for s in steps()]
    for needle in ("formula people add", "formula people rotate", "formula people retire", "formula site build",
                   "ssh-keygen"):
        assert any(c.startswith(needle) for c in commands), needle


def test_the_matcher_takes_three_dots_for_any_lines() -> None:
    assert matches("a\nb\nc", "a\n...") and matches("a\nb\nc", "...\nc") and matches("a", "a\n...")
    assert matches("x\ny\nz", "x\n...\nz") and not matches("a\nb", "a\nc") and not matches("a\nb", "a")


def test_the_committee_first_day_page_prints_what_it_shows(tmp_path: Path) -> None:
    with first_day(tmp_path) as (root, home):
        for step in steps():
            got = _masked(run_step(step, root, home), root)
            assert matches(got, _masked(step.expected)), (
                f"step `$ {step.command}` prints otherwise; run `PYTHONPATH=. python -m "
                f"tests.cli.test_guide_committee` to see what it prints:\n{got}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d, first_day(Path(d)) as (root, home):
        for step in steps():
            sys.stdout.write(f"$ {step.command}\n" + run_step(step, root, home).replace(str(root), "."))
