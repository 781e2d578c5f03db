"""Validation rules that find what an interrupted or careless write left behind.

An unfinished change (a journal), a benchmark id changed after release, a broken draft. (A
catalogue that no longer matches a fresh render is the catalogue rule's, in `registry.validate`.)
Each problem says what to run to repair it.
"""
from __future__ import annotations

from registry import codes, jsontext
from registry.atomic import JOURNAL_NAME, JournalRefused, read_journal
from registry.counted_nouns import counted
from registry.model import Problem, Registry
from registry.texts import INDEX_FILE, TEXTS_DIR
from registry.yamlio import YamlError, line_of


def check(reg: Registry) -> None:
    _journal(reg)
    _benchmark_ids(reg)
    _drafts(reg)
    _policy(reg)
    from registry.trust.decisionlog import check as signatures
    from registry.trust.rejections import check as rejections

    signatures(reg)
    rejections(reg)


def _policy(reg: Registry) -> None:
    from registry.trust.policy import PolicyError, policy_path, read_policy

    try:
        read_policy(reg.formulas_dir)
    except PolicyError as e:  # one problem, at its line: what depends on the policy is not checked (the signature rule)
        reg.problems.append(Problem(reg.rel(policy_path(reg.formulas_dir)), e.line, e.field,
                                    f"{e.problem}; decisions are refused, and signatures, roles and approvals are "
                                    "not checked until it is fixed", codes.POLICY))


def _journal(reg: Registry) -> None:
    try:
        journal = read_journal(reg.formulas_dir)
    except JournalRefused as e:
        reg.problems.append(Problem(reg.rel(reg.formulas_dir / JOURNAL_NAME), 1, "(journal)", str(e), codes.JOURNAL))
        return
    if journal is not None:
        files = sorted(journal.get("files", {}))
        reg.problems.append(Problem(reg.rel(reg.formulas_dir / JOURNAL_NAME), 1, "(journal)",
                                    f"a change to {counted(len(files), 'file')} was interrupted ({', '.join(files)}): "
                                    "run `formula recover` to roll them back to the previous state", codes.JOURNAL))


def _benchmark_ids(reg: Registry) -> None:
    """A benchmark id is fixed once released: the catalogue index records the released one."""
    try:
        index = jsontext.read_file(reg.formulas_dir / TEXTS_DIR / INDEX_FILE, jsontext.LOCK_MAX, "catalogue index")
        released = {e["slug"]: e.get("medcalc_id") for e in index["texts"]}
    except (OSError, ValueError, KeyError, TypeError):
        return  # a missing or unreadable catalogue is reported by the catalogue rule
    for slug, c in sorted(reg.calculators.items()):
        if slug in released and released[slug] != c.medcalc_id:
            reg.problems.append(Problem(reg.rel(reg.paths[slug]), line_of(reg.raw[slug], ("medcalc_id",)),
                                        "medcalc_id", f"benchmark id changed from {released[slug]!r} to "
                                        f"{c.medcalc_id!r} after release: identifiers are fixed, restore it",
                                        codes.ID_CHANGED))


def _drafts(reg: Registry) -> None:
    from pydantic import ValidationError

    from registry.schema import Calculator, VersionStatus
    from registry.versioned import DRAFTS_DIR
    from registry.yamlio import load_file

    for p in sorted((reg.formulas_dir / DRAFTS_DIR).glob("*.yaml")):
        rel = reg.rel(p)
        try:
            d = Calculator.model_validate(load_file(p))
        except (YamlError, ValidationError, TypeError) as e:
            reg.problems.append(Problem(rel, 1, "(draft)", f"unreadable draft ({str(e).splitlines()[0]}): "
                                        "remove it and make the draft again", codes.DRAFT))
            continue
        main = reg.calculators.get(p.stem)
        if main is None or d.versions[-1].status != VersionStatus.draft:
            reg.problems.append(Problem(rel, 1, "(draft)", "a draft file must be named after a calculator and end "
                                        "with a draft version", codes.DRAFT))
            continue
        base = next((v.version for v in d.versions if v.status == VersionStatus.active), None)
        if base != main.active.version:
            reg.problems.append(Problem(rel, 1, "(draft)", f"the draft was made from {base}, but {main.active.version} "
                                        "is active now: remove it and make the draft again", codes.DRAFT))
