"""Validation rules that find what an interrupted or careless write left behind.

An unfinished change (a journal), a text catalogue that no longer matches the released texts
(stale, emptied or hand-edited files), a benchmark id changed after release, a broken draft.
Each problem says what to run to repair it.
"""
from __future__ import annotations

import json

from registry.atomic import JOURNAL_NAME, read_journal
from registry.loader import Problem, Registry
from registry.texts import INDEX_FILE, TEXTS_DIR, TextError, render, text_hash
from registry.yamlio import YamlError, line_of

CATALOGUE_FIELD = "catalogue"


def check(reg: Registry) -> None:
    _journal(reg)
    _catalogue(reg)
    _drafts(reg)


def _journal(reg: Registry) -> None:
    try:
        journal = read_journal(reg.formulas_dir)
    except (ValueError, OSError) as e:
        journal = {"files": {"(unreadable journal)": str(e)}}
    if journal is not None:
        files = sorted(journal.get("files", {}))
        reg.problems.append(Problem(reg.rel(reg.formulas_dir / JOURNAL_NAME), 1, "(journal)",
                                    f"a change to {len(files)} file(s) was interrupted ({', '.join(files)}): "
                                    "run `formula recover` to roll them back to the previous state"))


def _dirty(reg: Registry) -> set[str]:
    """Calculators with unreleased edits, and every calculator whose text reads one of them."""
    from registry.governance import unreleased

    dirty = set(unreleased(reg))
    grew = True
    while grew:
        grew = False
        for slug, c in reg.calculators.items():
            if slug not in dirty and any(d in dirty for d in c.depends_on):
                dirty.add(slug)
                grew = True
    return dirty


def _catalogue(reg: Registry) -> None:
    folder = reg.formulas_dir / TEXTS_DIR
    index_path = folder / INDEX_FILE
    if not folder.is_dir():
        return
    rel = reg.rel(index_path)

    def problem(path: str, msg: str) -> None:
        reg.problems.append(Problem(path, 1, CATALOGUE_FIELD, msg))

    try:
        index = json.loads(index_path.read_text(encoding="utf-8"))
        entries = {e["slug"]: e for e in index["texts"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        problem(rel, f"unreadable catalogue index ({e}): run `formula texts render`")
        return
    try:
        dirty = _dirty(reg)
    except (ValueError, OSError):
        return  # an unreadable lock file is reported by the lock rule
    for slug, c in sorted(reg.calculators.items()):
        e = entries.get(slug)
        if e is not None and e.get("medcalc_id") != c.medcalc_id:
            reg.problems.append(Problem(reg.rel(reg.paths[slug]), line_of(reg.raw[slug], ("medcalc_id",)),
                                        "medcalc_id", f"benchmark id changed from {e.get('medcalc_id')!r} to "
                                        f"{c.medcalc_id!r} after release: identifiers are fixed, restore it"))
        if slug in dirty or not any(v.status.value == "active" for v in c.versions):
            continue
        try:
            text = render(c, calcs=reg.calculators, units=reg.units)
        except TextError:
            continue  # reported by the text rule
        md = folder / f"{slug}.md"
        if e is None:
            problem(rel, f"{slug} is missing from the catalogue: run `formula texts render`")
            continue
        if e.get("version") != c.active.version or e.get("sha256") != text_hash(text):
            problem(rel, f"{slug}: the catalogue holds {e.get('version')} {str(e.get('sha256'))[:19]}, the released "
                         f"text is {c.active.version} {text_hash(text)[:19]}: run `formula texts render`")
        try:
            on_disk = md.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            on_disk = None
        if on_disk != text:
            what = "missing" if on_disk is None else "empty" if not on_disk else "differs from the released text"
            problem(reg.rel(md), f"catalogue file {what}: run `formula texts render`")


def _drafts(reg: Registry) -> None:
    from pydantic import ValidationError

    from registry.governance import DRAFTS_DIR
    from registry.schema import Calculator, VersionStatus
    from registry.yamlio import load_file

    for p in sorted((reg.formulas_dir / DRAFTS_DIR).glob("*.yaml")):
        rel = reg.rel(p)
        try:
            d = Calculator.model_validate(load_file(p))
        except (YamlError, ValidationError, TypeError) as e:
            reg.problems.append(Problem(rel, 1, "(draft)", f"unreadable draft ({str(e).splitlines()[0]}): "
                                        "remove it and make the draft again"))
            continue
        main = reg.calculators.get(p.stem)
        if main is None or d.versions[-1].status != VersionStatus.draft:
            reg.problems.append(Problem(rel, 1, "(draft)", "a draft file must be named after a calculator and end "
                                        "with a draft version"))
            continue
        base = next((v.version for v in d.versions if v.status == VersionStatus.active), None)
        if base != main.active.version:
            reg.problems.append(Problem(rel, 1, "(draft)", f"the draft was made from {base}, but {main.active.version} "
                                        "is active now: remove it and make the draft again"))
