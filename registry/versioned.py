"""Reading the registry for governance: a version's content and rendered text, what changed
between two versions, and which stored results were produced by a text that has since changed."""
from __future__ import annotations

from typing import Any, Iterable

from pydantic import ValidationError

from registry import versions as ver
from registry.model import Registry
from registry.schema import Calculator, Version, VersionStatus

DRAFTS_DIR = "drafts"


def draft_calculator(reg: Registry, slug: str) -> Calculator | None:
    """The calculator as its waiting draft file has it (formulas/drafts/<slug>.yaml), if any."""
    from registry.yamlio import load_file

    p = reg.formulas_dir / DRAFTS_DIR / f"{slug}.yaml"
    if not p.exists():
        return None
    return Calculator.model_validate(load_file(p))


def draft_version(reg: Registry, slug: str) -> tuple[Calculator, Version] | None:
    """The waiting draft of a calculator (its file and last version), or None; an unreadable draft is None
    (validation reports it)."""
    from registry.yamlio import YamlError, load_file

    p = reg.formulas_dir / DRAFTS_DIR / f"{slug}.yaml"
    if not p.exists():
        return None
    try:
        d = Calculator.model_validate(load_file(p))
    except (YamlError, ValidationError, TypeError):
        return None
    return d, d.versions[-1]


def version_content(reg: Registry, c: Calculator, version: str) -> dict[str, Any] | None:
    """The content of a version: the live file for the active one, its snapshot when superseded, the draft file."""
    for v in c.versions:
        if v.version == version:
            if v.status == VersionStatus.active:
                return ver.released_content(reg, c, v)
            return ver.read_snapshot(reg.formulas_dir, c.slug, version)
    d = draft_calculator(reg, c.slug)
    if d is not None and d.versions[-1].version == version:
        return ver.released_content(reg, d, d.versions[-1])
    return None


def version_calculator(reg: Registry, c: Calculator, version: str) -> Calculator | None:
    """The calculator as it stood at `version` (that version active), to render its text."""
    data = version_content(reg, c, version)
    if data is None:
        return None
    d = c.model_dump(mode="json")
    for f in ver.CONTENT_FIELDS:
        d[f] = data[f]
    v = next((x for x in c.versions if x.version == version), None)
    entry = v.model_dump(mode="json") if v is not None else {"version": version, "effective": "2000-01-01",
                                                             "changelog": "draft"}
    entry.update(status=VersionStatus.active.value, text=data["text"])
    d["versions"] = [entry]
    return Calculator.model_validate(d)


def rendered(reg: Registry, c: Calculator, version: str) -> str | None:
    from registry.texts import render  # jinja2 (15 ms): only a command that shows a text pays for it

    vc = version_calculator(reg, c, version)
    if vc is None:
        return None
    calcs = dict(reg.calculators, **{c.slug: vc})
    return render(vc, calcs=calcs, units=reg.units)


def content_changes(a: dict[str, Any] | None, b: dict[str, Any]) -> list[str]:
    """What a clinician needs to know changed, one line each (registry.diffing has the values)."""
    from registry.diffing import diff

    return [c.line() for c in diff(a, b)]


def unreleased(reg: Registry) -> dict[str, str]:
    """slug -> why, for every calculator whose active content is not what REGISTRY.lock records."""
    lock = ver.read_lock(reg.lock_path)
    out: dict[str, str] = {}
    for slug, c in sorted(reg.calculators.items()):
        v = next((v for v in c.versions if v.status == VersionStatus.active), None)
        if v is None:
            continue
        recorded = lock.get(slug, {}).get(v.version)
        if recorded is None:
            out[slug] = f"active version {v.version} is not locked"
        elif ver.content_hash(ver.released_content(reg, c, v)) != recorded:
            out[slug] = f"unreleased edits to {v.version}"
    return out



# ---------------------------------------------------------------------- stale results


def stale(reg: Registry, rows: Iterable[tuple[int, dict[str, Any]]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Cases whose recorded text version or text SHA-256 differs from the registry's now.

    Each row names its calculator by `slug` / `text_slug` or by `calculator_id` (benchmark id), and
    carries `text_version` and/or `text_sha256`. A row with `text_shown: false` (an imported run: the model
    saw no text of this registry) is never stale after a text change, but is when the audit group it was
    imported under (`audit_group`) is no longer the calculator's. Returns (stale rows, problems with the file).
    """
    current: dict[str, tuple[str, str]] = {}
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    for line, row in rows:
        ref = row.get("slug") or row.get("text_slug") or row.get("calculator_id")
        if ref is None or isinstance(ref, bool):
            problems.append(f"line {line}: names no calculator (slug, text_slug or calculator_id)")
            continue
        try:
            c = reg.get(ref if isinstance(ref, int) else str(ref))
        except KeyError:
            problems.append(f"line {line}: unknown calculator {ref!r}")
            continue
        if row.get("text_shown") is False:  # an imported run: no text was shown, so no text can go stale
            group = row.get("audit_group")
            if isinstance(group, str) and group != c.audit_group:
                out.append({"line": line, "row_number": row.get("row_number"), "seed": row.get("seed"),
                            "arm": row.get("arm"), "slug": c.slug, "recorded_version": None,
                            "current_version": c.active.version, "recorded_sha256": None, "current_sha256": None,
                            "why": f"audit group {group} -> {c.audit_group}"})
            continue
        version, sha = row.get("text_version"), row.get("text_sha256")
        if version is None and sha is None:
            problems.append(f"line {line}: carries neither text_version nor text_sha256")
            continue
        if c.slug not in current:
            from registry.texts import render, text_hash

            current[c.slug] = (c.active.version, text_hash(render(c, calcs=reg.calculators, units=reg.units)))
        now_v, now_sha = current[c.slug]
        why = []
        if version is not None and version != now_v:
            why.append(f"version {version} -> {now_v}")
        if sha is not None and sha != now_sha:
            why.append("text changed")
        if why:
            out.append({"line": line, "row_number": row.get("row_number"), "seed": row.get("seed"),
                        "arm": row.get("arm"), "slug": c.slug, "recorded_version": version,
                        "current_version": now_v, "recorded_sha256": sha, "current_sha256": now_sha,
                        "why": "; ".join(why)})
    return out, problems
