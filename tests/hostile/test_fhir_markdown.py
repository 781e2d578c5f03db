"""FHIR Library resources carry registry text in markdown fields inertly, and each version's resource is
built from that version's recorded content (formula_site.fhir).

Generated variants: every payload (raw HTML, `javascript:` in inline, reference and angle-bracket links,
entities, backslash tricks, images) in every markdown field a registry author controls (the formula's name,
its publication, a version's changelog, a guideline's citation), rendered by a CommonMark renderer with raw
HTML on; and renames of several calculators, each leaving its earlier versions' resources as recorded."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from registry.loader import clear_cache, load
from registry.yamlio import rt_dump, rt_load
from tests.hostile.helpers import hostile_copy

markdown_it = pytest.importorskip("markdown_it")

PAYLOADS = [
    "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "[click](javascript:alert(1))",
    "[click]( javascript:alert(1) )", "<javascript:alert(1)>", "[ref]\n\n[ref]: javascript:alert(1)",
    "![x](javascript:alert(1))", "[x](&#106;avascript:alert(1))", "\\[x\\](javascript:alert(1))",
    "<a href='javascript:alert(1)'>x</a>", "<iframe src=//evil>", "`code` <b onmouseover=alert(1)>b</b>",
    "[x](data:text/html;base64,PHNjcmlwdD4=)", "<svg/onload=alert(1)>", "[x](vbscript:msgbox(1))",
]
SLUG, VERSION = "body-mass-index", "1.0.1"


def _set(path: Path, change: Callable[[Any], None]) -> None:
    data = rt_load(path)
    change(data)
    path.write_text(rt_dump(data) if not path.name[0].isdigit() else
                    "# Snapshot\n" + rt_dump(data), encoding="utf-8")


FIELDS: dict[str, Callable[[Path, str], None]] = {
    "formula name (snapshot)": lambda root, p: _set(root / f"formulas/history/{SLUG}/{VERSION}.yaml",
                                                    lambda d: d["formula"].__setitem__("name", p)),
    "publication title (snapshot)": lambda root, p: _set(
        root / f"formulas/history/{SLUG}/{VERSION}.yaml", lambda d: d["formula"]["publication"].__setitem__("title", p)),
    "version changelog": lambda root, p: _set(root / f"formulas/{SLUG}.yaml",
                                              lambda d: d["versions"][-1].__setitem__("changelog", p)),
}


def _library(root: Path, slug: str = SLUG, version: str = VERSION) -> dict[str, Any]:
    from formula_site.fhir import library

    clear_cache()
    reg = load(root)
    c = reg.calculators[slug]
    return library(reg, c, next(v for v in c.versions if v.version == version))


def _tags(res: dict[str, Any]) -> set[tuple[str, tuple[tuple[str, str | None], ...]]]:
    """Every (tag, attributes) the resource's markdown fields render to, with raw HTML allowed."""
    from html.parser import HTMLParser

    md = markdown_it.MarkdownIt("commonmark", {"html": True})
    found: set[tuple[str, tuple[tuple[str, str | None], ...]]] = set()

    class Tags(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.add((tag, tuple(attrs)))

    for text in [res["description"]] + [a["citation"] for a in res["relatedArtifact"] if "citation" in a]:
        Tags().feed(md.render(text))
    return found


INERT = {("p", ())}  # a paragraph of text, and nothing else: no element, attribute or link of an author's


@pytest.mark.parametrize("field", list(FIELDS))
@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_fields_render_inert(tmp_path: Path, field: str, payload: str) -> None:
    root = hostile_copy(tmp_path)
    FIELDS[field](root, payload)
    assert _tags(_library(root)) <= INERT


@pytest.mark.parametrize("guideline", ["ncep-atp-iii-2002", "nkf-asn-2021-race-free-egfr"])
@pytest.mark.parametrize("payload", PAYLOADS[:6])
def test_guideline_citations_render_inert(tmp_path: Path, guideline: str, payload: str) -> None:
    root = hostile_copy(tmp_path)
    path = root / "guidelines" / f"{guideline}.yaml"
    data = rt_load(path)
    if data.get("publication") is None:
        pytest.skip("this guideline records no publication")
    data["publication"]["title"] = payload
    path.write_text(rt_dump(data), encoding="utf-8")
    clear_cache()
    reg = load(root)
    from formula_site.fhir import libraries

    for res in libraries(reg).values():
        assert _tags(res) <= INERT


RENAMES = ["body-mass-index", "mean-arterial-pressure", "anion-gap", "qtc-bazett"]


@pytest.mark.parametrize("new_name", ["Renamed calculator", "<b>x</b>"])
@pytest.mark.parametrize("slug", RENAMES)
def test_a_rename_leaves_recorded_versions_as_recorded(tmp_path: Path, slug: str, new_name: str) -> None:
    """Each version whose snapshot records a name keeps it; editing today's file renames only today's."""
    from registry.versions import read_snapshot

    root = hostile_copy(tmp_path)
    clear_cache()
    before = load(root)
    recorded = {v.version: read_snapshot(before.formulas_dir, slug, v.version) or {}
                for v in before.calculators[slug].versions}
    _set(root / f"formulas/{slug}.yaml", lambda d: d.__setitem__("name", new_name))
    for version, snap in recorded.items():
        res = _library(root, slug, version)
        if "name" in snap:
            assert res["title"] == snap["name"], (version, res["title"])
        else:
            assert res["title"] == new_name  # a version released before names were recorded: today's
