"""The project's documentation as one text, for the tests that check its stated figures against the code:
the front page (README.md), every page of the user guide (docs/guide, in nav order) and the benchmarks' page
(bench/README.md). A figure may move between them without its check being lost."""
from __future__ import annotations

from functools import cache

import yaml

from registry.loader import PROJECT_ROOT

README = PROJECT_ROOT / "README.md"
BENCH = PROJECT_ROOT / "bench" / "README.md"
GUIDE = PROJECT_ROOT / "docs" / "guide"
CONFIG = PROJECT_ROOT / "docs" / "mkdocs.yml"


def _nav(items: list) -> list[str]:
    out: list[str] = []
    for item in items:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += _nav(value) if isinstance(value, list) else [value]
    return out


def guide_pages() -> list[str]:
    """The guide's page files, in nav order."""
    return _nav(yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["nav"])


@cache
def documentation() -> str:
    """README.md, the guide's pages and bench/README.md, joined by blank lines (each keeps its paragraphs)."""
    files = [README, *(GUIDE / p for p in guide_pages()), BENCH]
    return "\n\n".join(f.read_text(encoding="utf-8").strip("\n") for f in files) + "\n"
