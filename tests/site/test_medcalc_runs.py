"""The site built with the five real MedCalc-Bench runs (issue 29): every per-run count on the results page is
that run's own, checked against the run's own rows, and no page shows a path of the building machine.

The runs are imported afresh from ../shared/medcalc/runs/ where this checkout has those files (checked against
the SHA-256 each embedded run's manifest recorded); otherwise the embedded imports of the same files are used.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from cli.main import main
from registry.loader import get_registry
from tests.site.helpers import header_after, raw_values, table_after

REPO = Path(__file__).resolve().parents[2]
EMBEDDED = REPO / "results" / "embedded" / "medcalc-bench-2024"
# first: a run of 7 calculators (the report showed the first run's counts for every run)
ORDER = ["gpt-3.5-turbo-direct-answer", "gpt-4o-mini-direct-answer", "gpt-4-one-shot", "gpt-4-direct-answer",
         "gpt-3.5-turbo-one-shot"]


def _source(folder: Path) -> Path | None:
    f = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["source"]["files"][0]
    for base in (REPO, REPO.parent):  # a checkout beside shared/, or a worktree one level further down
        path = (base / f["path"]).resolve()
        if path.is_file() and "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest() == f["sha256"]:
            return path
    return None


@pytest.fixture(scope="module")
def five(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    from formula_site.build import build

    work = tmp_path_factory.mktemp("medcalc")
    runs = []
    for name in ORDER:
        src = _source(EMBEDDED / name)
        if src is None:
            runs.append(EMBEDDED / name)
            continue
        out = work / "imported" / name
        assert main(["import", "medcalc-bench", str(src), "--out", str(out)]) == 0, name
        runs.append(out)
    site = work / "site"
    build(runs + [REPO / "results" / "embedded" / "gold-solve"], site, on=dt.date(2026, 12, 1))
    return site, runs


def _own_counts(folder: Path) -> tuple[dict[str, int], dict[str, float], int]:
    """Calculators per audit group (from the registry), accuracy per group and calculators in all, from the
    run's own results.jsonl."""
    groups = {c.medcalc_id: c.audit_group for c in get_registry().calculators.values() if c.medcalc_id}
    calcs: dict[str, set[int]] = defaultdict(set)
    right: dict[str, list[bool]] = defaultdict(list)
    for line in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        g = groups[row["calculator_id"]]
        calcs[g].add(row["calculator_id"])
        right[g].append(bool(row["correct"]))
    return ({g: len(calcs[g]) for g in ("replaced", "other", "none")},
            {g: 100.0 * sum(v) / len(v) for g, v in right.items()}, sum(len(v) for v in calcs.values()))


def _cell(text: str) -> tuple[str, int]:
    value, n = text.replace("\xa0", " ").rsplit(" ", 1)
    return value, int(n.strip("()"))


def test_each_runs_calculators_per_group_are_its_own(five):
    site, runs = five
    text = (site / "results" / "index.html").read_text(encoding="utf-8")
    head = header_after(text, "accuracy-by-audit-group")
    body = table_after(text, "accuracy-by-audit-group")
    acc_head = header_after(text, "accuracy")
    acc = {r[0]: r for r in table_after(text, "accuracy")}
    assert [r[0] for r in body] == ["Replaced by guideline", "Other concern", "No issue identified", "All"]
    seen = set()
    for folder in runs:
        m = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        title = f"{m['model']} · {m['arm']}"
        col = head.index(title)
        counts, accuracy, total = _own_counts(folder)
        for row, g in zip(body, ("replaced", "other", "none")):
            value, n = _cell(row[col])
            assert n == counts[g], f"{title}, {g}: the page says {n} calculators, the run's rows hold {counts[g]}"
            assert value == ("–" if g not in accuracy else f"{accuracy[g]:.2f}"), (title, g)
        assert _cell(body[3][col])[1] == total
        assert acc[title][acc_head.index("Calcs")] == str(total)
        assert _cell(acc[title][acc_head.index("all")])[1] == total
        seen.add(total)
    assert len(seen) > 1 and 7 in seen and 55 in seen  # runs of different sizes, so a shared count would show


def test_no_page_holds_an_absolute_path(five):
    site, runs = five
    where = {str(REPO), str(site.parent), str(Path.home())} | {str(p.resolve().parent) for p in runs}
    bad = []
    for f in site.rglob("*"):
        if f.suffix not in (".html", ".svg", ".md", ".json", ".js") or f.name.startswith("search_index"):
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        for w in where:
            if w in text:
                bad.append(f"{f.relative_to(site)}: {w}")
        if f.suffix == ".html":
            bad += [f"{f.relative_to(site)}: {m}" for m in re.findall(r"(?<![\w.:/])/(?:tmp|work|home|root|Users)/\S*",
                                                                        text)]
    assert not bad, bad[:10]


def test_no_page_shows_a_raw_value(five):
    """Real manifests (the runner's, the importer's: null fields, empty maps, every text's hash) and real paired
    gaps (an ICC that rounds to zero from below) reach no page as a raw value (issue 39)."""
    site, _ = five
    found = raw_values(site)
    assert not found, "\n".join(found[:20])


def test_two_runs_with_one_folder_name_are_told_apart_without_paths(tmp_path):
    """The issue's case: two run folders of the same name were labelled by their absolute paths."""
    import shutil

    from formula_site.build import build

    a, b = tmp_path / "site-a" / "gpt-4-one-shot", tmp_path / "site-b" / "gpt-4-one-shot"
    for d in (a, b):
        shutil.copytree(EMBEDDED / "gpt-4-one-shot", d)
    out = tmp_path / "out"
    build([a, b], out, on=dt.date(2026, 12, 1))
    text = (out / "results" / "index.html").read_text(encoding="utf-8")
    assert str(tmp_path) not in text and "site-a" not in text
    head = header_after(text, "accuracy-by-audit-group")
    assert head[1:] == ["gpt-4 · medcalc-bench-one-shot #1", "gpt-4 · medcalc-bench-one-shot #2"]
    assert 'id="run-gpt-4-one-shot-1"' in text and 'id="run-gpt-4-one-shot-2"' in text  # an anchor each
