"""One site build shared by the site tests (a build takes a few seconds)."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.site.helpers import current_text_versions, make_run

pytest.importorskip("mkdocs", reason="the site extra is not installed: pip install -e '.[site]'")


@dataclass
class Built:
    out: Path
    runs: list[Path]


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Built:
    from formula_site.build import build

    root = tmp_path_factory.mktemp("runs")
    from registry.loader import get_registry
    from registry.versions import lock_digest

    # gold-solve: every row right, with the current texts and registry; half-arm: right on k = 0 and 2, wrong
    # on k = 1, no answer on k = 3 (50% accuracy, 75% coverage), with an old text version for every calculator
    texts = current_text_versions()
    gold = make_run(root, "gold-solve", lambda cid, k: True, lock=lock_digest(get_registry().lock_path),
                    text_version=lambda cid: texts[cid])
    half = make_run(root, "half-arm", lambda cid, k: None if k == 3 else k % 2 == 0, model="test-model")
    out = tmp_path_factory.mktemp("site") / "site"
    build([gold, half], out, on=dt.date(2026, 12, 1))
    return Built(out, [gold, half])
