"""The user guide (docs/guide, built by docs/mkdocs.yml) stays true: every ```console block of every page runs
as written and prints what the page shows under it, and the guide builds with `mkdocs build --strict`.

Each page runs on its own, in nav order, in a fresh committee registry (tests.docs.console.page_registry: what
`formula init` makes, committed on main, plus the stored gold-solve run), its blocks in page order, so a step
sees what the steps above it on the same page did. Only ```console blocks run: ```bash holds commands that need
what a test cannot have (a download, a model server, a person's new key), ```text and ```python are shown only.
To see what a page's commands print now (to update it):

    PYTHONPATH=. python -m tests.docs.test_guide committee.md
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.docs.console import console_blocks, masked, matches, page_registry, run_step, same, steps
from tests.docs.pages import CONFIG, GUIDE
from tests.docs.pages import guide_pages as pages


def test_the_nav_names_every_page_once_and_each_has_a_title() -> None:
    named = pages()
    assert len(named) == len(set(named)) >= 8
    assert set(named) == {p.relative_to(GUIDE).as_posix() for p in GUIDE.rglob("*.md")}
    for page in named:
        first = (GUIDE / page).read_text(encoding="utf-8").lstrip().split("\n", 1)[0]
        assert first.startswith("# "), f"{page}: the first line is its level-1 title"


def test_the_committees_walkthrough_has_its_steps() -> None:
    """The governance walkthrough and the pull-request review (once the README's, issue 36) stay on the page."""
    found = steps(console_blocks((GUIDE / "committee.md").read_text(encoding="utf-8")))
    commands = [s.command.split()[0] for s in found]
    assert commands.count("formula") >= 8, commands
    assert any(s.command.startswith("formula review-pr") for s in found)
    assert any(s.command.startswith("formula approve") for s in found)


@pytest.mark.parametrize("page", [p for p in pages() if console_blocks((GUIDE / p).read_text(encoding="utf-8"))])
def test_every_console_block_prints_what_the_page_shows(page: str, tmp_path: Path) -> None:
    with page_registry(tmp_path) as (root, home):
        for step in steps(console_blocks((GUIDE / page).read_text(encoding="utf-8"))):
            got = run_step(step, root, home)
            assert same(step.expected, got, root), (
                f"{page}: `$ {step.command}` prints otherwise; run "
                f"`PYTHONPATH=. python -m tests.docs.test_guide {page}` to see what it prints:\n{masked(got, root)}")


def test_an_ellipsis_line_matches_any_lines_and_nothing_else_is_loose() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"]) and matches(["a", "...", "d"], ["a", "d"])
    assert matches(["...", "c", "..."], ["a", "b", "c", "d"]) and matches(["..."], [])
    assert not matches(["a", "...", "d"], ["a", "b"]) and not matches(["a", "b"], ["a", "b", "c"])
    assert not matches(["a", "...", "b", "...", "b"], ["a", "b"])
    assert same("commit 0123456789ab by SHA256:" + "A" * 43, "commit ba9876543210 by SHA256:" + "b" * 43)


def test_the_guide_builds_strictly(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or "mkdocs"
    done = subprocess.run([mkdocs, "build", "--strict", "-q", "-f", str(CONFIG), "-d", str(tmp_path / "guide")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    built = {p.relative_to(tmp_path / "guide").as_posix() for p in (tmp_path / "guide").rglob("*.html")}
    assert {p.removesuffix(".md") + ".html" for p in pages()} <= built
    assert not any((GUIDE / p).exists() for p in built), "the build wrote into the guide's sources"
    for html in (tmp_path / "guide").rglob("*.html"):  # no CDN, no web fonts: the guide reads offline
        outside = re.findall(r'(?:src|href)="(?:https?:)?//[^"]*"', html.read_text(encoding="utf-8"))
        assert not outside, f"{html.name} loads {outside[:3]} from outside"


if __name__ == "__main__":
    for name in sys.argv[1:] or pages():
        with tempfile.TemporaryDirectory() as d, page_registry(Path(d)) as (root, home):
            sys.stdout.write(f"--- {name}\n")
            for step in steps(console_blocks((GUIDE / name).read_text(encoding="utf-8"))):
                sys.stdout.write(f"$ {step.command}\n" + run_step(step, root, home).replace(str(root), "."))
