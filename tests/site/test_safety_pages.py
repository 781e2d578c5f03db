"""The site's Clinical safety page and the hazards on each calculator page (formula_site.safety_pages)."""
from __future__ import annotations

from audit.safety_case import build
from formula_site.safety_pages import calculator_hazards, safety_page
from registry.loader import get_registry
from tests.helpers import copy_registry, edit


def test_the_safety_page_shows_the_log_with_risk_levels_and_the_sign_off():
    case = build(get_registry(), sign_off={"state": "none"})
    page = safety_page(case)
    assert page.count("<tr>") - 1 >= len(case.hazards) >= 12
    assert "H-006" in page and "risk 4" in page and "not signed" in page
    assert 'href="calculators/meld-na.html"' in page


def test_a_calculator_page_lists_its_hazards_and_their_evidence():
    case = build(get_registry(), sign_off={"state": "none"})
    section = "\n".join(calculator_hazards(case, "meld-na"))
    assert "## Clinical safety" in section and "H-008" in section and "H-011" in section
    assert "### H-001" not in section  # registry-wide hazards are on the safety page, counted here
    assert "supplied text found incomplete" in section


def test_hazard_text_is_escaped(tmp_path):
    from registry.loader import clear_cache, load

    root = copy_registry(tmp_path)
    edit(root / "formulas" / "safety" / "hazards.yaml", "title: The wrong calculator or formula version is used",
         "title: <script>alert(1)</script>")
    clear_cache()
    page = safety_page(build(load(root), sign_off={"state": "none"}))
    assert "<script>" not in page and "&lt;script&gt;" in page
