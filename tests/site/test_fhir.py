"""FHIR R4 Library resources: one per released version, valid, carrying the rendered text and the lineage."""
from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from registry.loader import get_registry
from registry.versions import released

Library = pytest.importorskip("fhir.resources.R4B.library", reason="the site extra is not installed").Library


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    from cli.main import main

    out = tmp_path_factory.mktemp("fhir")
    assert main(["export", "fhir", "--out", str(out)]) == 0
    return out


def load(out: Path, slug: str, version: str = "1.0.0") -> dict:
    return json.loads((out / f"Library-{slug}-{version}.json").read_text(encoding="utf-8"))


def test_one_valid_library_per_released_version(exported):
    reg = get_registry()
    expected = {f"Library-{c.slug}-{v.version}.json" for c in reg.calculators.values() for v in released(c)}
    assert {p.name for p in exported.glob("*.json")} == expected
    for p in exported.glob("*.json"):
        res = Library.model_validate(json.loads(p.read_text(encoding="utf-8")))
        assert res.status in ("active", "retired") and res.version and res.url and res.date
        assert re.fullmatch(r"[A-Z][A-Za-z0-9_]{0,254}", res.name), res.name  # FHIR's computable-name rule


def test_content_is_the_committed_rendered_text(exported):
    # formulas/texts/ is the catalogue `formula texts render` writes (and a test keeps fresh)
    texts = Path(get_registry().root) / "formulas" / "texts"
    for slug in ("meld-na", "creatinine-clearance-cockcroft-gault", "cha2ds2-va"):
        content = load(exported, slug, get_registry().calculators[slug].active.version)["content"][0]
        assert content["contentType"] == "text/markdown"
        assert base64.b64decode(content["data"]).decode("utf-8") == (texts / f"{slug}.md").read_text(encoding="utf-8")


def test_related_artifacts_carry_citation_dependencies_and_lineage(exported):
    cg = load(exported, "creatinine-clearance-cockcroft-gault")
    kinds = [a["type"] for a in cg["relatedArtifact"]]
    assert kinds[0] == "citation" and "Cockcroft" in cg["relatedArtifact"][0]["citation"]
    deps = {a["resource"] for a in cg["relatedArtifact"] if a["type"] == "depends-on"}
    assert deps == {f"urn:formula-registry:calculator:{s}" for s in get_registry().calculators[
        "creatinine-clearance-cockcroft-gault"].depends_on} and deps
    reg = get_registry()
    meld = load(exported, "meld-na", reg.calculators["meld-na"].active.version)
    assert any(a["type"] == "successor" and a.get("resource") == "urn:formula-registry:calculator:meld-3-0"
               for a in meld["relatedArtifact"])
    meld3 = load(exported, "meld-3-0", reg.calculators["meld-3-0"].active.version)
    assert any(a["type"] == "predecessor" and a["resource"].endswith(":meld-na") for a in meld3["relatedArtifact"])


def test_export_refuses_a_file_as_folder(tmp_path, capsys):
    from cli.main import main

    f = tmp_path / "file"
    f.write_text("x")
    assert main(["export", "fhir", "--out", str(f)]) == 1
    assert capsys.readouterr().err.startswith("error:")


def test_superseded_versions_are_retired_with_an_end_date(exported):
    """R4 has no `superseded` status: `retired` (withdrawn or superseded), and the period ends the day
    before the next released version took effect; the active version's period stays open."""
    import datetime as dt

    from registry.schema import VersionStatus

    reg = get_registry()
    checked = 0
    for c in reg.calculators.values():
        rel = sorted(released(c), key=lambda v: v.key)
        for v, nxt in zip(rel, rel[1:] + [None]):
            res = load(exported, c.slug, v.version)
            period = res["effectivePeriod"]
            assert period["start"] == v.effective.isoformat()
            if v.status == VersionStatus.superseded:
                assert res["status"] == "retired" and nxt is not None
                end = dt.date.fromisoformat(period["end"])
                assert end == max(v.effective, nxt.effective - dt.timedelta(days=1)) and end >= v.effective
                assert any(a["type"] == "successor" and a.get("resource", "").endswith(f"|{nxt.version}")
                           for a in res["relatedArtifact"])
                checked += 1
            else:
                assert res["status"] == "active" and "end" not in period
    assert checked  # the registry holds superseded versions (e.g. meld-na 1.0.0)
