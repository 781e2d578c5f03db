"""Cross-file rules of the registry, beyond what each file's schema checks."""
from __future__ import annotations

from registry.model import Problem, Registry
from registry.schema import VersionStatus, semver_key
from registry.versions import content, content_hash, read_lock, read_snapshot
from registry.yamlio import YamlError, line_of


def validate(reg: Registry) -> list[Problem]:
    """Run every rule; problems are appended to `reg.problems` and returned."""
    rules = (_unique_ids, _references, _cycles, _versions, _inputs, _texts, _lock)
    for rule in rules:
        rule(reg)
    return reg.problems


def _at(reg: Registry, slug: str, loc: tuple, fld: str, problem: str) -> Problem:
    p = Problem(reg.rel(reg.paths[slug]), line_of(reg.raw[slug], loc), fld, problem)
    reg.problems.append(p)
    return p


def _unique_ids(reg: Registry) -> None:
    seen: dict[int, str] = {}
    for slug, c in reg.calculators.items():
        if c.medcalc_id is None:
            continue
        if c.medcalc_id in seen:
            _at(reg, slug, ("medcalc_id",), "medcalc_id", f"duplicate benchmark id {c.medcalc_id} (also {seen[c.medcalc_id]})")
        else:
            seen[c.medcalc_id] = slug


def _references(reg: Registry) -> None:
    g, calcs = reg.guidelines, reg.calculators
    for slug, c in calcs.items():
        for i, ref in enumerate(c.provenance):
            if ref.guideline not in g:
                _at(reg, slug, ("provenance", i, "guideline"), f"provenance[{i}].guideline",
                    f"unknown guideline {ref.guideline!r}: add guidelines/{ref.guideline}.yaml or fix the slug")
        for i, gs in enumerate(c.literature_audit.guidelines):
            if gs not in g:
                _at(reg, slug, ("literature_audit", "guidelines", i), f"literature_audit.guidelines[{i}]",
                    f"unknown guideline {gs!r}")
        for i, r in enumerate(c.replacements):
            if r.successor is not None and r.successor not in calcs:
                _at(reg, slug, ("replacements", i, "successor"), f"replacements[{i}].successor",
                    f"unknown successor calculator {r.successor!r}")
            if r.successor == slug:
                _at(reg, slug, ("replacements", i, "successor"), f"replacements[{i}].successor",
                    "a calculator cannot succeed itself")
            if r.guideline is not None and r.guideline not in g:
                _at(reg, slug, ("replacements", i, "guideline"), f"replacements[{i}].guideline",
                    f"unknown guideline {r.guideline!r}")
        for i, d in enumerate(c.depends_on):
            if d not in calcs:
                _at(reg, slug, ("depends_on", i), f"depends_on[{i}]", f"unknown calculator {d!r}")


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
                _at(reg, s, ("depends_on", idx), f"depends_on[{idx}]", "dependency cycle: " + " -> ".join(cycle))
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
            _at(reg, slug, where, "versions", f"exactly one version must be active, found {len(active)}")
        for i in range(1, len(c.versions)):
            prev, cur = c.versions[i - 1], c.versions[i]
            if semver_key(cur.version) <= semver_key(prev.version):
                _at(reg, slug, ("versions", i, "version"), f"versions[{i}].version",
                    f"versions must ascend, newest last: {cur.version} follows {prev.version}")
            if cur.effective < prev.effective:
                _at(reg, slug, ("versions", i, "effective"), f"versions[{i}].effective",
                    f"effective date {cur.effective} is before the previous version's {prev.effective}")
        for i, v in enumerate(c.versions):
            if v.next_review and v.last_review and v.next_review < v.last_review:
                _at(reg, slug, ("versions", i, "next_review"), f"versions[{i}].next_review",
                    "next review is before the last review")


def _inputs(reg: Registry) -> None:
    units = reg.units
    for slug, c in reg.calculators.items():
        seen: set[str] = set()
        for i, inp in enumerate(c.inputs):
            if inp.name in seen:
                _at(reg, slug, ("inputs", i, "name"), f"inputs[{i}].name", f"duplicate input {inp.name!r}")
            seen.add(inp.name)
            if inp.analyte and units is not None and inp.analyte not in units.analytes:
                _at(reg, slug, ("inputs", i, "analyte"), f"inputs[{i}].analyte",
                    f"unknown analyte {inp.analyte!r}: add it to formulas/units.yaml")


def _texts(reg: Registry) -> None:
    """Every active text and formula expression renders: a broken template is caught before anyone reads it."""
    from registry.texts import TextError, render, render_expression

    for slug, c in reg.calculators.items():
        idx = next((i for i, v in enumerate(c.versions) if v.status == VersionStatus.active), None)
        if idx is None:
            continue
        try:
            render(c, calcs=reg.calculators, units=reg.units)
        except TextError as e:
            _at(reg, slug, ("versions", idx, "text"), f"versions[{idx}].text", str(e).split(": ", 1)[-1])
        try:
            render_expression(c, calcs=reg.calculators, units=reg.units)
        except TextError as e:
            _at(reg, slug, ("formula", "expression"), "formula.expression", str(e).split(": ", 1)[-1])


def _lock(reg: Registry) -> None:
    try:
        lock = read_lock(reg.lock_path)
    except (ValueError, OSError) as e:
        reg.problems.append(Problem(reg.rel(reg.lock_path), 1, "(file)", f"unreadable lock file: {e}"))
        return
    for slug, c in reg.calculators.items():
        recorded = lock.get(slug, {})
        for i, v in enumerate(c.versions):
            loc = ("versions", i, "version")
            fld = f"versions[{i}]"
            if v.status == VersionStatus.active:
                if v.version not in recorded:
                    _at(reg, slug, loc, fld, f"active version {v.version} is not in REGISTRY.lock: run `formula lock`")
                    continue
                if content_hash(content(c, v, reg.units)) != recorded[v.version]:
                    _at(reg, slug, loc, fld,
                        f"released version {v.version} changed without a new version: "
                        f"run `formula release {slug} --reason ...` (or undo the edit)")
            elif v.status == VersionStatus.superseded:
                if v.version not in recorded:
                    _at(reg, slug, loc, fld, f"superseded version {v.version} is not in REGISTRY.lock")
                    continue
                try:
                    snap = read_snapshot(reg.formulas_dir, slug, v.version)
                except YamlError as e:
                    _at(reg, slug, loc, fld, f"unreadable snapshot: {e}")
                    continue
                if snap is None:
                    _at(reg, slug, loc, fld, f"snapshot formulas/history/{slug}/{v.version}.yaml is missing")
                elif content_hash(snap) != recorded[v.version]:
                    _at(reg, slug, loc, fld, f"snapshot of released version {v.version} was edited")
                elif snap.get("text") != v.text:
                    _at(reg, slug, ("versions", i, "text"), f"versions[{i}].text",
                        f"text of released version {v.version} changed without a new version")
    on_disk = {p.stem for p in reg.formulas_dir.glob("*.yaml")}  # a file that failed to load is reported already
    for slug in sorted(set(lock) - on_disk):
        reg.problems.append(Problem(reg.rel(reg.lock_path), 1, "calculators",
                                    f"lock names {slug!r}, which has no file: slugs are never removed; retire it instead"))


def summary(reg: Registry) -> str:
    n = len(reg.calculators)
    bench = sum(1 for c in reg.calculators.values() if c.medcalc_id is not None)
    return (f"registry OK: {n} calculators ({bench} benchmark, {n - bench} successor), "
            f"{len(reg.guidelines)} guidelines, root {reg.root}")
