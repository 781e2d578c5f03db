"""FHIR R4 `Library` resources, one per released calculator version.

The resources follow the R4 Library structure (url, version, status, dates, relatedArtifact,
content). Tests validate them with fhir.resources' R4B models: fhir.resources 8 defaults to R5
and ships R4B and STU3 subpackages, no plain R4 one; R4B's Library has the same elements as R4's.
Canonical URLs are URNs under a base the caller may change (the registry has no web host of its
own, and identifiers are never invented).

Registry text is untrusted: every field FHIR types as markdown (`description`, each `relatedArtifact.citation`)
goes through the site's one escaping helper (`markup.esc`), so no HTML, link or `javascript:` target of an
author's reaches a FHIR consumer's renderer. Each version's resource is built from that version's recorded
content (its snapshot in formulas/history/): renaming a calculator today does not rename its older versions.

Superseded versions: R4's PublicationStatus has no `superseded` code; `retired` is defined as
"withdrawn or superseded, should no longer be used", so a superseded version is `retired`, and its
`effectivePeriod.end` says when it stopped being the one in use (the day before the next released
version took effect: FHIR periods include both ends), with a `successor` relatedArtifact naming that
version. A version retired without a successor keeps an open end (the registry records no end date).
"""
from __future__ import annotations

import base64
import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

from formula_site.markup import esc
from formula_site.registry_pages import fhir_name, ordered, predecessors, version_text
from registry.atomic import atomic_write
from registry.loader import Registry
from registry.report import cite
from registry.schema import Calculator, Version, VersionStatus
from registry.yamlio import YamlError

DEFAULT_BASE = "urn:formula-registry:calculator:"
STATUS = {VersionStatus.draft: "draft", VersionStatus.active: "active", VersionStatus.superseded: "retired",
          VersionStatus.retired: "retired"}


def canonical(slug: str, base: str = DEFAULT_BASE) -> str:
    return f"{base}{slug}"


def _decided(reg: Registry, c: Calculator, v: Version) -> dict[str, str]:
    """approvalDate and lastReviewDate as the decisions say: the last verified signed approval and review of the
    version, else the typed dates where the registry records no signed one (an invalid signature gives no date)."""
    from registry.governance.signatures import last_of, views

    decided = views(reg, c)
    mine = [d for d in decided if d.version == v.version]
    out: dict[str, str] = {}
    approval, review = last_of(decided, v.version, "approve"), last_of(decided, v.version, "review")
    if approval is not None:
        out["approvalDate"] = approval.date
    elif v.approved and not any(d.decision == "approve" for d in mine):
        out["approvalDate"] = v.approved.isoformat()
    if review is not None:
        out["lastReviewDate"] = review.date
    elif v.last_review and not any(d.decision == "review" for d in mine):
        out["lastReviewDate"] = v.last_review.isoformat()
    return out


def recorded(reg: Registry, c: Calculator, v: Version) -> Calculator:
    """The calculator as `v` recorded it (its snapshot's fields over today's file; its versions stay today's),
    or `c` itself where no readable snapshot is kept (a draft, a version released before snapshots)."""
    from registry.versions import BOOKKEEPING, read_snapshot

    try:
        snap = read_snapshot(reg.formulas_dir, c.slug, v.version)
    except (OSError, ValueError, YamlError):
        snap = None
    if not snap:
        return c
    data = c.model_dump(mode="json")
    data.update({k: snap[k] for k in Calculator.model_fields if k in snap and k not in BOOKKEEPING})
    try:
        return Calculator.model_validate(data)
    except ValueError:
        return c


def library(reg: Registry, now: Calculator, v: Version, *, base: str = DEFAULT_BASE) -> dict[str, Any]:
    # long: one FHIR Library resource, field by field as the specification lists them
    """The Library resource of one calculator version, as plain JSON data."""
    text = version_text(reg, now, v) or ""
    c = recorded(reg, now, v)
    res: dict[str, Any] = {
        "resourceType": "Library",
        "id": f"{c.slug}-{v.version}",
        "url": canonical(c.slug, base),
        "version": v.version,
        "name": re.sub(r"[^A-Za-z0-9]", "", c.name.title())[:255] or "Calculator",
        "title": c.name,
        "status": STATUS[v.status],
        "experimental": False,
        "type": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/library-type",
                             "code": "logic-library", "display": "Logic Library"}]},
        "date": v.effective.isoformat(),
        "description": esc(f"{c.formula.name}. Intended use: {c.intended_use.value}. Output: {c.output.kind.value}"
                           + (f" in {c.output.unit}" if c.output.unit else "") + f". Version note: {v.changelog}"),
        "effectivePeriod": _period(c, v),
        "relatedArtifact": [],
        "content": [{"contentType": "text/markdown", "language": "en",
                     "title": f"Supplied formula text, version {v.version}",
                     "data": base64.b64encode(text.encode("utf-8")).decode("ascii")}],
    }
    if c.medcalc_id is not None:
        res["identifier"] = [{"system": "urn:formula-registry:medcalc-bench-calculator-id", "value": str(c.medcalc_id)}]
    res.update(_decided(reg, c, v))
    ra = res["relatedArtifact"]
    ra.append({"type": "citation", "label": "original publication", "display": c.formula.publication.title,
               "citation": esc(cite(c.formula.publication))})
    for p in c.provenance:
        g = reg.guidelines.get(p.guideline)
        if g is None:
            continue
        item = {"type": "documentation", "label": p.relation.value,
                "display": f"{g.title} ({g.body} {g.year}; {p.jurisdiction})"}
        if g.publication is not None:
            item["citation"] = esc(cite(g.publication))
        ra.append(item)
    for d in c.depends_on:
        ra.append({"type": "depends-on", "display": reg.calculators[d].name if d in reg.calculators else d,
                   "resource": canonical(d, base)})
    earlier = [x for x in c.versions if x.key < v.key and x.status in (VersionStatus.active, VersionStatus.superseded)]
    if earlier:
        prev = max(earlier, key=lambda x: x.key)
        ra.append({"type": "predecessor", "label": "previous version", "display": f"{c.name} {prev.version}",
                   "resource": f"{canonical(c.slug, base)}|{prev.version}"})
    for pc in predecessors(reg, c.slug):
        ra.append({"type": "predecessor", "display": pc.name, "resource": canonical(pc.slug, base)})
    later = [x for x in c.versions if x.key > v.key and x.status in (VersionStatus.active, VersionStatus.superseded)]
    if later:
        nxt = min(later, key=lambda x: x.key)
        ra.append({"type": "successor", "label": "next version", "display": f"{c.name} {nxt.version}",
                   "resource": f"{canonical(c.slug, base)}|{nxt.version}"})
    for r in c.replacements:
        item = {"type": "successor", "label": r.kind.replace("_", " "),
                "display": f"{r.name} ({r.jurisdiction}, since {r.since})"}
        if r.successor:
            item["resource"] = canonical(r.successor, base)
        if r.citation is not None:
            item["citation"] = esc(cite(r.citation))
        ra.append(item)
    return res


def _period(c: Calculator, v: Version) -> dict[str, str]:
    """When this version was the one in use: from its effective date to the day before the next released one."""
    period = {"start": v.effective.isoformat()}
    if v.status != VersionStatus.superseded:
        return period
    later = [x for x in c.versions if x.key > v.key and x.status in (VersionStatus.active, VersionStatus.superseded)]
    if later:
        nxt = min(later, key=lambda x: x.key)
        period["end"] = max(v.effective, nxt.effective - dt.timedelta(days=1)).isoformat()
    return period


def libraries(reg: Registry, *, base: str = DEFAULT_BASE) -> dict[str, dict[str, Any]]:
    """File name -> Library, for every released (active or superseded) version of every calculator."""
    out = {}
    for c in ordered(reg):
        for v in c.versions:
            if v.status in (VersionStatus.active, VersionStatus.superseded):
                out[fhir_name(c.slug, v.version)] = library(reg, c, v, base=base)
    return out


def export(reg: Registry, out_dir: Path, *, base: str = DEFAULT_BASE) -> list[Path]:
    written = []
    for name, res in libraries(reg, base=base).items():
        p = out_dir / name
        atomic_write(p, json.dumps(res, indent=2, ensure_ascii=False) + "\n")
        written.append(p)
    return written
