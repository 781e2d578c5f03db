"""The published site built from a hostile registry: no registry text becomes a script, a javascript: or
data: link, an event handler or a load from an outside host, on any page."""
from __future__ import annotations

import datetime as dt
import html
from pathlib import Path

import pytest

from registry.loader import load
from registry.schema import Calculator, Guideline
from registry.validate import validate
from tests.helpers import SHIPPED_ROOT
from tests.hostile.output_helpers import PAYLOADS, scan_html, scan_site

pytest.importorskip("mkdocs", reason="the site extra is not installed: pip install -e '.[site]'")

MDRD, CG = "mdrd-gfr", "creatinine-clearance-cockcroft-gault"


def _edit_calc(reg, slug: str, edit) -> None:
    data = reg.calculators[slug].model_dump(mode="json")
    edit(data)
    reg.calculators[slug] = Calculator.model_validate(data)


def hostile_registry():
    """The real registry with hostile text in every field the site shows (edited in memory, so the test
    holds whichever fields a version's hash covers: escaping never depends on a release being reviewed)."""
    reg = load(SHIPPED_ROOT)
    validate(reg)  # the released registry is valid; what follows is what the site then shows
    assert not reg.problems

    def mdrd(d: dict) -> None:
        d["name"] = PAYLOADS["name"]
        d["formula"]["publication"]["note"] = PAYLOADS["note"]
        d["literature_audit"]["summary"] = PAYLOADS["summary"]
        d["replacements"][0]["note"] = PAYLOADS["replacement"]
        d["replacements"][0]["name"] = PAYLOADS["replacement"]
        active = next(v for v in d["versions"] if v["status"] == "active")
        active["changelog"] = PAYLOADS["changelog"]
        active["signoffs"] = [{"who": PAYLOADS["signoff"], "role": PAYLOADS["signoff"], "date": "2026-01-01"}]
        for i in d["inputs"]:
            i["description"] = PAYLOADS["note"]

    def cg(d: dict) -> None:
        d["deviations"][0]["benchmark"] = PAYLOADS["deviation"]
        d["deviations"][0]["published"] = PAYLOADS["published"]
        d["deviations"][0]["citation"] = PAYLOADS["note"]

    _edit_calc(reg, MDRD, mdrd)
    _edit_calc(reg, CG, cg)
    gid = reg.calculators[MDRD].provenance[0].guideline
    g = reg.guidelines[gid].model_dump(mode="json")
    g["title"] = PAYLOADS["guideline"]
    reg.guidelines[gid] = Guideline.model_validate(g)
    return reg


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from formula_site.build import build

    out = tmp_path_factory.mktemp("hostile-site") / "site"
    build([], out, on=dt.date(2026, 12, 1), registry=hostile_registry())
    return out


def test_the_scanner_finds_each_kind_of_injection() -> None:
    """The scanner itself: raw payloads are caught (so a clean scan below means something)."""
    for key in ("name", "note", "guideline", "deviation", "published", "replacement", "signoff"):
        assert scan_html(f"<p>{PAYLOADS[key]}</p>"), key
    assert scan_html('<a href=" JaVaScRiPt:alert(1)">x</a>') and scan_html('<img src="//evil.example/x">')
    assert not scan_html("<p>&lt;script&gt;alert('x')&lt;/script&gt; [a](javascript:alert(1))</p>")


def test_no_page_carries_registry_markup(hostile_site: Path) -> None:
    assert scan_site(hostile_site) == {}


def test_registry_text_is_shown_as_text(hostile_site: Path) -> None:
    """Escaped, not dropped: a reader sees exactly what the registry says."""
    page = html.unescape((hostile_site / "calculators" / f"{MDRD}.html").read_text(encoding="utf-8"))
    assert PAYLOADS["name"] in page and "[click](javascript:alert('note'))" in page
    assert "<script>alert('name')</script>" in page.replace("\n", "")  # as text: unescape made it look raw
    raw = (hostile_site / "calculators" / f"{MDRD}.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(" in raw and "<script>alert(" not in raw


def test_links_are_relative_or_http(hostile_site: Path) -> None:
    from formula_site.markup import link, safe_href

    for bad in ("javascript:alert(1)", " JavaScript:alert(1)", "data:text/html,x", "vbscript:x", "//evil.example/",
                "java\tscript:alert(1)", "file:///etc/passwd"):
        assert safe_href(bad) == "#", bad
        assert "javascript" not in link(bad, "x").html.lower().replace("&gt;", "")
    for good in ("../calculators/mdrd-gfr.html", "index.html#top", "https://example.org/a"):
        assert safe_href(good) == good


def test_search_index_holds_registry_text_escaped(hostile_site: Path) -> None:
    """The theme's search shows titles and text from its index as HTML: they are stored escaped."""
    index = (hostile_site / "search" / "search_index.json").read_text(encoding="utf-8")
    for raw in ("<script>alert(", "<img src=x onerror", "<iframe src=", "<svg onload"):
        assert raw not in index
