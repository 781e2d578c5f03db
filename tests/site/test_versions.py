"""A calculator with two released versions: the page shows the rendered-text diff, FHIR links the versions."""
from __future__ import annotations

import datetime as dt
import shutil

import pytest

from registry.governance.release import ReleaseRequest, release
from registry.loader import clear_cache, load
from tests.helpers import SHIPPED_ROOT, committee

SODIUM = "sodium-correction-hyperglycemia"

pytest.importorskip("fhir.resources", reason="the site extra is not installed")


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory):
    root = tmp_path_factory.mktemp("registry")
    for sub in ("formulas", "guidelines"):
        shutil.copytree(SHIPPED_ROOT / sub, root / sub)
    before = load(root).calculators["sodium-correction-hyperglycemia"].active.version
    people = committee(root, four_eyes=False, approver_roles=[])  # a signed maintainer who may release at once
    release(root, ReleaseRequest(calculator="sodium-correction-hyperglycemia", reason="Katz 1973 factor, for comparison",
                                 sets=["correction_per_mg_dl_glucose=0.016"],
                                 labels=["correction_per_mg_dl_glucose=Katz factor"], key=str(people.keys["author"])))
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


@pytest.fixture(scope="module")
def approved(tmp_path_factory):
    """The Katz fix drafted by the author under four eyes, approved by the chair, then reviewed by the pharmacist:
    every decision signed."""
    from registry import clock
    from registry.governance.approving import approve
    from registry.governance.reviewing import review

    root = tmp_path_factory.mktemp("approved")
    for sub in ("formulas", "guidelines"):
        shutil.copytree(SHIPPED_ROOT / sub, root / sub)
    people = committee(root)
    release(root, ReleaseRequest(calculator=SODIUM, reason="Katz 1973 factor", sets=["correction_per_mg_dl_glucose=0.016"],
                                 labels=["correction_per_mg_dl_glucose=Katz factor"], draft=True,
                                 key=str(people.keys["author"])))
    from registry.versions import bump

    version = bump(load(root).calculators[SODIUM].active.version, "minor")
    approve(root, SODIUM, version, reason="agreed at the December meeting", key=people.keys["chair"])
    review(root, SODIUM, key=people.keys["pharmacist"])
    clear_cache()
    reg = load(root)
    assert not reg.problems, reg.problems[:3]
    assert reg.calculators[SODIUM].active.version == version
    return reg, version, clock.today().isoformat()


def test_version_history_names_the_signed_approval_and_review(approved):
    from formula_site.registry_pages import AuditInputs, calculator_page

    reg, version, today = approved
    text = calculator_page(reg, reg.calculators[SODIUM], audits=AuditInputs(), on=dt.date.fromisoformat(today),
                           accuracy=[])
    row = text[text.index(f"<strong>{version}</strong>"):].split("\n", 1)[0]
    assert f"approved {today} (Dr A. Chair, chair), verified" in row
    assert f"last review {today} (B. Pharmacist, renal pharmacist), verified" in row
    assert "approved –" not in row


def test_fhir_dates_come_from_the_signed_decisions(approved):
    from fhir.resources.R4B.library import Library

    from formula_site import fhir

    reg, version, today = approved
    res = fhir.libraries(reg)[f"Library-{SODIUM}-{version}.json"]
    Library.model_validate(res)
    assert (res["approvalDate"], res["lastReviewDate"]) == (today, today)
    before = fhir.libraries(reg)[f"Library-{SODIUM}-{reg.calculators[SODIUM].versions[-2].version}.json"]
    assert "approvalDate" not in before  # released before signing, never approved: no date is invented


def test_changelog_says_the_same(approved):
    from registry.governance.changelog import changelog, markdown

    reg, version, today = approved
    [e] = [e for e in changelog(reg) if (e.slug, e.version) == (SODIUM, version)]
    assert (e.approved_by, e.approved_role, str(e.approved), e.signing) == ("Dr A. Chair", "chair", today, "verified")
    assert f"Approved {today} (Dr A. Chair, chair), verified: agreed at the December meeting." in markdown([e])
