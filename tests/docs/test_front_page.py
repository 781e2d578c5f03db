"""The front door stays short and its doors open (issue 50): README.md at most 200 lines, every relative link of
it (and of bench/README.md) names a file that exists, and CHANGELOG.md keeps Keep a Changelog's shape with
dates that are commit dates, never invented ones."""
from __future__ import annotations

import re
import subprocess

from registry.loader import PROJECT_ROOT
from tests.docs.pages import BENCH, README

CHANGELOG = PROJECT_ROOT / "CHANGELOG.md"
SECTIONS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def test_the_readme_is_at_most_200_lines() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_every_relative_link_names_a_file() -> None:
    for page in (README, BENCH):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if not re.match(r"[a-z]+:", target):
                assert (page.parent / target).exists(), f"{page.name} links to {target}, which does not exist"


def test_the_changelog_keeps_its_format_and_commit_dates() -> None:
    text = CHANGELOG.read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n") and "\n## [Unreleased]\n" in text
    assert set(re.findall(r"^### (.+)$", text, re.M)) <= SECTIONS
    dates = set(re.findall(r"\b20\d\d-\d\d-\d\d\b", text))
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=PROJECT_ROOT, capture_output=True,
                             text=True, timeout=60)
    done = subprocess.run(["git", "log", "--format=%ad", "--date=short"], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=60)
    if shallow.stdout.strip() == "false" and done.returncode == 0:  # a checkout with its whole history
        assert dates <= set(done.stdout.split()), f"dates no commit has: {sorted(dates - set(done.stdout.split()))}"
