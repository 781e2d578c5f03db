"""Cross-file rules of the registry, beyond what each file's schema checks."""
from __future__ import annotations

import os
from typing import Any

from registry import codes, jsontext
from registry.counted_nouns import counted
from registry.model import Problem, Registry
from registry.plain_files import LINK, SPECIAL, is_plain, read_bytes
from registry.schema import Calculator, VersionStatus, semver_key
from registry.versions import (
    LOCK_FORMAT,
    active_hash,
    content_hash,
    dotted,
    lock_format,
    order_changes,
    read_lock,
    read_snapshot,
    released_content,
)
from registry.yamlio import MAX_BYTES, YamlError, line_of


def validate(reg: Registry, *, parallel: bool = False) -> list[Problem]:
    """Run every rule; problems are appended to `reg.problems` and returned. `parallel`: the text rules run in a
    forked child beside the lock rule (registry.validation_split); the problems and their order are the same either way."""
    for rule in (_unique_ids, _references, _cycles, _versions, _inputs):
        rule(reg)
    if parallel:
        _texts_beside_lock(reg)
    else:
        for rule in (_texts, _lock, _catalogue):
            rule(reg)
    from registry.integrity import check  # journal, catalogue, benchmark ids, drafts

    check(reg)
    from registry.hazard_rules import check as hazard_log  # formulas/safety/: names that exist, and coverage

    hazard_log(reg)
    _safety_sign_off(reg)
    reg.problems.sort(key=lambda p: _RANK.get(p.code, len(_RANK)))  # stable: the fix that helps first
    reg.validated = True
    return reg.problems


def _safety_sign_off(reg: Registry) -> None:
    """A recorded sign-off of the safety case must verify (signature, key, role, chain, date), as approvals must;
    a stale one is no problem here (the case and `formula verify` say what it no longer covers)."""
    from registry.hazards import SIGNOFFS_FILE
    from registry.trust.safety_signoff import state

    if not (reg.formulas_dir / SIGNOFFS_FILE).is_file():
        return
    s = state(reg)
    if s.state == "invalid":
        reg.problems.append(Problem(f"formulas/{SIGNOFFS_FILE.as_posix()}", 1, "sign-off",
                                    f"the clinical safety case's sign-off does not verify: {s.why}", codes.SAFETY))


def _text_rules(reg: Registry) -> tuple[list[Problem], list[Problem]]:
    """The problems `_texts` and `_catalogue` add, apart."""
    start = len(reg.problems)
    _texts(reg)
    mid = len(reg.problems)
    _catalogue(reg)
    return reg.problems[start:mid], reg.problems[mid:]


def _texts_beside_lock(reg: Registry) -> None:
    """`_texts`, `_lock`, `_catalogue` as in sequence, the text rules (jinja2) in a child beside the lock rule
    (YAML snapshots): on this 2-core machine, one core busy with other work, the rules took 0.70-0.83 s in
    sequence and 0.45-0.72 s so (they take 0.32 s and 0.25 s alone). The
    catalogue rule reads only the problems of the rules before the lock rule (the codes in codes.UNREADABLE,
    none of which the lock rule reports), so it may run before the lock rule's problems exist."""
    from registry.validation_split import beside

    start = len(reg.problems)
    got = beside(lambda: _text_rules(reg), lambda: _lock(reg))
    locked = reg.problems[start:]
    del reg.problems[start:]
    if got is None:  # no child ran them: here, as in sequence
        got = _text_rules(reg)
        del reg.problems[start:]
    texts, catalogue = got
    reg.problems.extend([*texts, *locked, *catalogue])


# the order problems are listed in: an interrupted change first (its half-written files explain much of the
# rest), then files that do not load (their dependants' problems follow from them), then the rest
_RANK = {codes.JOURNAL: 0, codes.YAML: 1, codes.SCHEMA: 1, codes.SLUG: 1, codes.UNITS_MISSING: 1}


def first_fix(problems: list[Problem]) -> str | None:
    """The one repair to make before anything else, when one explains the others."""
    journal = [p for p in problems if p.code == codes.JOURNAL]
    if journal:
        others = len(problems) - len(journal)
        return ("first run `formula recover`: a change was interrupted" + (
            f", and the other {counted(others, 'problem')} may be its half-written files; validate again after it"
            if others else ""))
    broken = [p for p in problems if _RANK.get(p.code) == 1]
    if broken and len(problems) > len(broken):
        return (f"first fix {broken[0].path} (line {broken[0].line}): calculators that use a file that does not "
                "load are not checked until it does")
    return None


def broken_files(reg: Registry) -> set[str]:
    """Slugs of calculator files on disk that did not load (unreadable YAML or schema errors)."""
    on_disk = {p.stem for p in reg.formulas_dir.glob("*.yaml") if p.name != "units.yaml"}
    return on_disk - set(reg.calculators)


def _on_broken(reg: Registry) -> set[str]:
    """Calculators that use a broken file, directly or not: their dependency checks wait for its repair."""
    broken = broken_files(reg)
    out: set[str] = set()
    changed = True
    while changed:
        changed = False
        for slug, c in reg.calculators.items():
            if slug not in out and any(d in broken or d in out for d in c.depends_on):
                out.add(slug)
                changed = True
    return out


def _at(reg: Registry, slug: str, loc: tuple, fld: str, problem: str, code: str) -> Problem:
    p = Problem(reg.rel(reg.paths[slug]), line_of(reg.raw[slug], loc), fld, problem, code)
    reg.problems.append(p)
    return p


def _unique_ids(reg: Registry) -> None:
    seen: dict[int, str] = {}
    for slug, c in reg.calculators.items():
        if c.medcalc_id is None:
            continue
        if c.medcalc_id in seen:
            _at(reg, slug, ("medcalc_id",), "medcalc_id",
                f"duplicate benchmark id {c.medcalc_id} (also {seen[c.medcalc_id]})", codes.ID_DUPLICATE)
        else:
            seen[c.medcalc_id] = slug


def _references(reg: Registry) -> None:
    g, calcs = reg.guidelines, reg.calculators
    for slug, c in calcs.items():
        for i, ref in enumerate(c.provenance):
            if ref.guideline not in g:
                _at(reg, slug, ("provenance", i, "guideline"), f"provenance[{i}].guideline",
                    f"unknown guideline {ref.guideline!r}: add guidelines/{ref.guideline}.yaml or fix the slug", codes.REFERENCE)
        for i, gs in enumerate(c.literature_audit.guidelines):
            if gs not in g:
                _at(reg, slug, ("literature_audit", "guidelines", i), f"literature_audit.guidelines[{i}]",
                    f"unknown guideline {gs!r}", codes.REFERENCE)
        for i, r in enumerate(c.replacements):
            if r.successor is not None and r.successor not in calcs and r.successor not in broken_files(reg):
                _at(reg, slug, ("replacements", i, "successor"), f"replacements[{i}].successor",
                    f"unknown successor calculator {r.successor!r}", codes.REFERENCE)
            if r.successor == slug:
                _at(reg, slug, ("replacements", i, "successor"), f"replacements[{i}].successor",
                    "a calculator cannot succeed itself", codes.REFERENCE)
            if r.guideline is not None and r.guideline not in g:
                _at(reg, slug, ("replacements", i, "guideline"), f"replacements[{i}].guideline",
                    f"unknown guideline {r.guideline!r}", codes.REFERENCE)
        broken = broken_files(reg)
        for i, d in enumerate(c.depends_on):
            if d not in calcs and d not in broken:  # a broken file is reported itself: fix it, not this
                _at(reg, slug, ("depends_on", i), f"depends_on[{i}]", f"unknown calculator {d!r}", codes.REFERENCE)


def _cycles(reg: Registry) -> None:
    calcs = reg.calculators
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(s: str, path: list[str]) -> None:
        state[s] = 1
        for d in calcs[s].depends_on:
            if d not in calcs:
                continue
            if state.get(d) == 1:
                cycle = path[path.index(d):] + [d] if d in path else [s, d]
                idx = calcs[s].depends_on.index(d)
                _at(reg, s, ("depends_on", idx), f"depends_on[{idx}]", "dependency cycle: " + " -> ".join(cycle), codes.CYCLE)
            elif d not in state:
                visit(d, path + [d])
        state[s] = 2

    for s in sorted(calcs):
        if s not in state:
            visit(s, [s])


def _versions(reg: Registry) -> None:
    for slug, c in reg.calculators.items():
        active = [i for i, v in enumerate(c.versions) if v.status == VersionStatus.active]
        if len(active) != 1:
            where = ("versions", active[1], "status") if len(active) > 1 else ("versions",)
            _at(reg, slug, where, "versions", f"exactly one version must be active, found {len(active)}", codes.VERSIONS)
        for i in range(1, len(c.versions)):
            prev, cur = c.versions[i - 1], c.versions[i]
            if semver_key(cur.version) <= semver_key(prev.version):
                _at(reg, slug, ("versions", i, "version"), f"versions[{i}].version",
                    f"versions must ascend, newest last: {cur.version} follows {prev.version}", codes.VERSIONS)
            if cur.effective < prev.effective:
                _at(reg, slug, ("versions", i, "effective"), f"versions[{i}].effective",
                    f"effective date {cur.effective} is before the previous version's {prev.effective}", codes.VERSIONS)
        for i, v in enumerate(c.versions):
            if v.next_review and v.last_review and v.next_review < v.last_review:
                _at(reg, slug, ("versions", i, "next_review"), f"versions[{i}].next_review",
                    "next review is before the last review", codes.VERSIONS)


def _inputs(reg: Registry) -> None:
    units = reg.units
    for slug, c in reg.calculators.items():
        seen: set[str] = set()
        for i, inp in enumerate(c.inputs):
            if inp.name in seen:
                _at(reg, slug, ("inputs", i, "name"), f"inputs[{i}].name", f"duplicate input {inp.name!r}", codes.INPUT)
            seen.add(inp.name)
            if inp.analyte and units is not None and inp.analyte not in units.analytes:
                _at(reg, slug, ("inputs", i, "analyte"), f"inputs[{i}].analyte",
                    f"unknown analyte {inp.analyte!r}: add it to formulas/units.yaml", codes.INPUT)
        for r, rule in enumerate(c.plausibility):
            for name in rule.inputs or []:
                if name not in seen:
                    _at(reg, slug, ("plausibility", r, "inputs"), f"plausibility[{r}].inputs",
                        f"rule {rule.id!r} names {name!r}, which is not an input of this calculator", codes.PLAUSIBILITY)
    _spellings(reg)


def _spellings(reg: Registry) -> None:
    """No alias or code that an input would read two ways (registry.spellings): never a guess at run time."""
    from registry.spellings import problems

    units = reg.units
    if units is None:
        return
    table = [p for p in problems(units, []) if p[0] == "(units.yaml)"]
    for _, message in table:
        reg.problems.append(Problem(reg.rel(reg.formulas_dir / "units.yaml"), 1, "spellings.units", message,
                                    codes.SPELLING))
    for slug, c in reg.calculators.items():
        index = {inp.name: i for i, inp in enumerate(c.inputs)}
        for name, message in problems(units, c.inputs):
            if name != "(units.yaml)":
                i = index[name]
                _at(reg, slug, ("inputs", i), f"inputs[{i}] ({name})", message, codes.SPELLING)


def _texts(reg: Registry) -> None:
    """Every template is safe (checked, never run, when not) and every active text and expression renders."""
    from registry.texts import texts_budget

    with texts_budget():  # one wall-clock budget for the whole set, beside each render's own
        for slug, c in reg.calculators.items():
            _text_of(reg, slug, c)


def _text_of(reg: Registry, slug: str, c: Calculator) -> None:
    from registry.texts import TextError, render, render_expression

    idx = next((i for i, v in enumerate(c.versions) if v.status == VersionStatus.active), None)
    safe = {i: _safe_template(reg, slug, ("versions", i, "text"), f"versions[{i}].text", v.text)
            for i, v in enumerate(c.versions)}
    expr_safe = _safe_template(reg, slug, ("formula", "expression"), "formula.expression", c.formula.expression)
    if idx is None:
        return
    if safe[idx]:
        try:
            render(c, calcs=reg.calculators, units=reg.units)
        except TextError as e:
            _at(reg, slug, ("versions", idx, "text"), f"versions[{idx}].text", str(e).split(": ", 1)[-1],
                codes.TEXT)
    if expr_safe:
        try:
            render_expression(c, calcs=reg.calculators, units=reg.units)
        except TextError as e:
            _at(reg, slug, ("formula", "expression"), "formula.expression", str(e).split(": ", 1)[-1], codes.TEXT)


def _safe_template(reg: Registry, slug: str, loc: tuple, fld: str, source: str | None) -> bool:
    """Report what a template may not do, at its line in the file; True when it may be rendered."""
    from registry.texts import template_problems

    found = template_problems(source) if source else []
    for tline, problem in found:
        key_line = line_of(reg.raw[slug], loc)
        line = key_line + tline if "\n" in (source or "") else key_line  # a block text starts below its key
        reg.problems.append(Problem(reg.rel(reg.paths[slug]), line, fld, f"template line {tline}: {problem}; "
                                    "nothing of this template was run", codes.TEXT))
    return not found


def _lock(reg: Registry) -> None:
    """Every released version matches its lock hash: its live content (active) and its snapshot (all)."""
    lock_rel = reg.rel(reg.lock_path)
    try:
        lock = read_lock(reg.lock_path)
        fmt = lock_format(reg.lock_path)
    except (ValueError, OSError) as e:
        reg.problems.append(Problem(lock_rel, 1, "(file)", f"unreadable lock file: {e}", codes.LOCK_UNREADABLE))
        return
    if fmt != LOCK_FORMAT:
        reg.problems.append(Problem(lock_rel, 1, "format", f"lock format {fmt} leaves out fields a version "
                                    f"covers now; this tool writes format {LOCK_FORMAT}: run `formula lock --rehash`",
                                    codes.LOCK_FORMAT))
        return
    waiting = _on_broken(reg)
    for slug, c in reg.calculators.items():
        recorded = lock.get(slug, {})
        for i, v in enumerate(c.versions):
            if v.status not in (VersionStatus.active, VersionStatus.superseded):
                continue
            loc, fld = ("versions", i, "version"), f"versions[{i}]"
            if v.version not in recorded:
                hint = ": run `formula lock`" if v.status == VersionStatus.active else ""
                _at(reg, slug, loc, fld, f"{v.status.value} version {v.version} is not in REGISTRY.lock{hint}",
                    codes.LOCK_MISSING)
                continue
            snap = _snapshot(reg, slug, v.version, recorded[v.version], loc, fld)
            if v.status == VersionStatus.active and slug in waiting:
                continue  # its dependency's file does not load: nothing to release until that is fixed
            if v.status == VersionStatus.active:
                _live(reg, c, v.version, recorded[v.version], snap, loc, fld)
            elif snap is not None and snap.get("text") != v.text:
                _at(reg, slug, ("versions", i, "text"), f"versions[{i}].text",
                    f"text of released version {v.version} changed without a new version", codes.LOCK_TEXT)
    on_disk = {p.stem for p in reg.formulas_dir.glob("*.yaml")}  # a file that failed to load is reported already
    for slug in sorted(set(lock) - on_disk):
        reg.problems.append(Problem(lock_rel, 1, "calculators", f"lock names {slug!r}, which has no file: slugs are "
                                    "never removed; retire it instead", codes.LOCK_ORPHAN))


def _snapshot(reg: Registry, slug: str, version: str, recorded: str, loc: tuple, fld: str) -> dict[str, Any] | None:
    """The snapshot of a released version, or None (reported) when it is missing, unreadable or tampered with."""
    rel = f"formulas/history/{slug}/{version}.yaml"
    try:
        snap = read_snapshot(reg.formulas_dir, slug, version)
    except YamlError as e:
        _at(reg, slug, loc, fld, f"snapshot {rel} is unreadable: {e}", codes.SNAPSHOT)
        return None
    if snap is None:
        _at(reg, slug, loc, fld, f"snapshot {rel} is missing: restore it from version control", codes.SNAPSHOT)
        return None
    if content_hash(snap) != recorded:
        _at(reg, slug, loc, fld, f"snapshot {rel} does not match its hash in REGISTRY.lock (edited by hand?): "
            "restore it from version control", codes.SNAPSHOT)
        return None
    return snap


def _live(reg: Registry, c: Calculator, version: str, recorded: str, snap: dict[str, Any] | None,
          loc: tuple, fld: str) -> None:
    """The active version's live content still hashes to its lock entry (and shows its mappings in the order it was
    released with); if not, say whether a dependency moved."""
    if active_hash(reg, c.slug) == recorded:
        reordered = order_changes(c, snap) if snap is not None else []
        if reordered:
            _at(reg, c.slug, reordered[0], dotted(reordered[0]),
                f"released version {version} shows {', '.join(map(dotted, reordered))} in another order than it was "
                f"released with (formulas/history/{c.slug}/{version}.yaml); a text or page shows that order: undo "
                f"the reordering, or release it with `formula release {c.slug} --reason ...`", codes.LOCK_ORDER)
        return
    live = released_content(reg, c, c.active)
    linked = ("dependencies", "guidelines")
    own = {k: v for k, v in live.items() if k not in linked}
    if snap is not None and own == {k: v for k, v in snap.items() if k not in linked}:
        before = snap.get("dependencies") or {}
        moved = sorted(d for d, h in live["dependencies"].items() if before.get(d) != h)
        cited = snap.get("guidelines") or {}
        edited = sorted(g for g, h in live["guidelines"].items() if cited.get(g) != h)
        edited += sorted(g for g in cited if g not in live["guidelines"])
        if moved or not edited:
            _at(reg, c.slug, loc, fld,
                f"released version {version} depends on {', '.join(moved) or 'a calculator'} whose content changed: "
                f"release it too with `formula release {c.slug} --reason ...`", codes.LOCK_DEPENDENCY)
            return
        _at(reg, c.slug, loc, fld,
            f"released version {version} cites guideline(s) {', '.join(edited)} whose file changed (or is no longer "
            f"cited) without a new version: undo the guideline edit, or release with `formula release {c.slug} "
            "--reason ...`", codes.LOCK_DEPENDENCY)
        return
    _at(reg, c.slug, loc, fld, f"released version {version} changed without a new version: "
        f"run `formula release {c.slug} --reason ...` (or undo the edit)", codes.LOCK_CHANGED)


def _catalogue(reg: Registry) -> None:
    """The rendered catalogue in formulas/texts/ equals a fresh render: none missing, stale, truncated or extra."""
    from registry.texts import INDEX_FILE, TEXTS_DIR, TextError, catalogue_files

    if any(p.code in codes.UNREADABLE for p in reg.problems):
        return  # a render of a registry that does not load is no reference
    out = reg.formulas_dir / TEXTS_DIR
    fix = "run `formula texts render` and commit the result"
    try:
        fresh = catalogue_files(reg.calculators, reg.units)
    except TextError:
        return  # the broken text is reported by _texts
    if not out.is_dir():
        reg.problems.append(Problem(reg.rel(out), 0, "(catalogue)", f"the rendered catalogue is missing: {fix}",
                                    codes.CATALOGUE))
        return
    for name, text in fresh.items():
        path = out / name
        if not is_plain(path):
            why = f"missing: {fix}" if not os.path.lexists(path) else f"{LINK if path.is_symlink() else SPECIAL}"
            reg.problems.append(Problem(reg.rel(path), 0, "(catalogue)", why, codes.CATALOGUE))
            continue
        have = read_bytes(path, MAX_BYTES).decode("utf-8", "replace")
        if have == text:
            continue
        if name == INDEX_FILE:
            for what in _index_differences(have, text):
                reg.problems.append(Problem(reg.rel(path), 1, "(catalogue)", f"{what}: {fix}", codes.CATALOGUE))
            continue
        why = ("empty" if not have.strip() else "truncated" if text.startswith(have)
               else "differs from a fresh render of the registry (stale or edited)")
        reg.problems.append(Problem(reg.rel(path), _first_difference(have, text), "(catalogue)", f"{why}: {fix}",
                                    codes.CATALOGUE))
    for path in sorted(out.iterdir()):
        if path.name not in fresh:
            reg.problems.append(Problem(reg.rel(path), 0, "(catalogue)", "no calculator renders this file: remove it, "
                                        f"then {fix}", codes.CATALOGUE))


def _index_differences(have: str, fresh: str) -> list[str]:
    """What differs between a catalogue index on disk and a fresh one, entry by entry."""
    import json

    try:
        old = {e["slug"]: e for e in jsontext.loads(have)["texts"]}
    except (ValueError, KeyError, TypeError):
        return ["the catalogue index is unreadable"]
    new = {e["slug"]: e for e in json.loads(fresh)["texts"]}
    out = []
    for slug in sorted(set(old) | set(new)):
        a, b = old.get(slug), new.get(slug)
        if a is None:
            out.append(f"{slug} is missing from the catalogue index")
        elif b is None:
            out.append(f"{slug} is in the catalogue index but renders no text")
        elif a != b:
            out.append(f"{slug}: the index holds {a.get('version')} {str(a.get('sha256'))[:19]}, a fresh render "
                       f"gives {b['version']} {b['sha256'][:19]}")
    return out or ["the catalogue index differs from a fresh render"]


def _first_difference(a: str, b: str) -> int:
    la, lb = a.splitlines(), b.splitlines()
    for n, (x, y) in enumerate(zip(la, lb), start=1):
        if x != y:
            return n
    return min(len(la), len(lb)) + 1


def summary(reg: Registry) -> str:
    n = len(reg.calculators)
    bench = sum(1 for c in reg.calculators.values() if c.medcalc_id is not None)
    return (f"registry OK: {n} calculators ({bench} benchmark, {n - bench} successor), "
            f"{len(reg.guidelines)} guidelines")  # which registry: the line before it (cliutil.registry_line)


def warnings(reg: Registry) -> list[Problem]:
    """Findings that leave the registry valid (codes.WARNINGS), which `formula validate` prints after its verdict:
    a name or text that keeps a label one of its constants had in an earlier released version (registry.labels)."""
    from registry.labels import label_changes, leftovers

    out: list[Problem] = []
    for slug, c in sorted(reg.calculators.items()):
        if not any(k.label for k in c.constants.values()) or slug not in reg.paths:
            continue  # only labelled constants can leave a label behind: no snapshot is read for the rest
        changed: dict[str, tuple[str, str]] = {}
        for v in sorted((v for v in c.versions if v.status == VersionStatus.superseded), key=lambda v: v.key):
            try:
                snap = read_snapshot(reg.formulas_dir, slug, v.version)
            except (OSError, ValueError, YamlError):
                continue  # the lock rule reports an unreadable snapshot
            changed.update(label_changes(snap, c))
        for loc, fld, what in leftovers(c, changed):
            fix = "cite the new source (`formula fix ... --publication FILE`)" if fld == "formula.publication" else \
                "rename it (`formula fix ... --name`, or edit and release)"
            out.append(Problem(reg.rel(reg.paths[slug]), line_of(reg.raw[slug], loc), fld, f"{what}: {fix}",
                               codes.LABEL_NAME))
    return out
