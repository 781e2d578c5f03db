"""A calculator with two released versions: the page shows the rendered-text diff, FHIR links the versions."""
from __future__ import annotations

import datetime as dt
import shutil

import pytest

from registry.governance.release import release
from registry.loader import clear_cache, load
from tests.helpers import SHIPPED_ROOT, committee

pytest.importorskip("fhir.resources", reason="the site extra is not installed")


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory):
    root = tmp_path_factory.mktemp("registry")
    for sub in ("formulas", "guidelines"):
        shutil.copytree(SHIPPED_ROOT / sub, root / sub)
    before = load(root).calculators["sodium-correction-hyperglycemia"].active.version
    people = committee(root, four_eyes=False, approver_roles=[])  # a signed maintainer who may release at once
    release(root, "sodium-correction-hyperglycemia", "Katz 1973 factor, for comparison",
            sets=["correction_per_mg_dl_glucose=0.016"], labels=["correction_per_mg_dl_glucose=Katz factor"],
            key=people.keys["author"])
    reg = load(root)
    clear_cache()
    assert not reg.problems, reg.problems[:3]
    after = reg.calculators["sodium-correction-hyperglycemia"].active.version
    assert after != before
    return reg, before, after


def test_page_shows_text_diff_and_both_versions(two_versions):
    from formula_site.registry_pages import AuditInputs, calculator_page

    two_versions, before, after = two_versions
    c = two_versions.calculators["sodium-correction-hyperglycemia"]
    text = calculator_page(two_versions, c, audits=AuditInputs(), on=dt.date(2026, 12, 1), accuracy=[])
    assert f"Text changes {before} → {after}" in text
    assert '<span class="fr-add">' in text and "0.016" in text
    assert f"Library-sodium-correction-hyperglycemia-{before}.json" in text
    assert f"Library-sodium-correction-hyperglycemia-{after}.json" in text


def test_fhir_links_the_versions(two_versions):
    from fhir.resources.R4B.library import Library

    from formula_site import fhir

    two_versions, before, after = two_versions
    libs = fhir.libraries(two_versions)
    old = libs[f"Library-sodium-correction-hyperglycemia-{before}.json"]
    new = libs[f"Library-sodium-correction-hyperglycemia-{after}.json"]
    for res in (old, new):
        Library.model_validate(res)
    assert old["status"] == "retired" and new["status"] == "active"
    assert any(a["type"] == "successor" and a["resource"].endswith(f"|{after}") for a in old["relatedArtifact"])
    assert any(a["type"] == "predecessor" and a["resource"].endswith(f"|{before}") for a in new["relatedArtifact"])
    import base64
    assert b"0.016" in base64.b64decode(new["content"][0]["data"])
    assert b"0.016" not in base64.b64decode(old["content"][0]["data"])
