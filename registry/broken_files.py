"""Reading a registry in which a hand edit broke one calculator file: the others stay usable.

A file that does not load (unreadable YAML, a schema error) is left out; one that loads but fails
validation (an unreleased hand edit) is flagged. When every problem of the registry belongs to such
calculators, read-only commands keep serving the others, with a warning naming the broken files. Computing with a broken calculator,
or with one that depends on it, stays refused, and nothing is ever written from such a registry.
"""
from __future__ import annotations

from registry import codes
from registry.counted_nouns import agree, counted
from registry.model import Problem, Registry
from registry.validate import broken_files


def _owner(reg: Registry, p: Problem, on_disk: set[str]) -> str | None:
    """The one calculator a problem belongs to (its file, its rendered text, its index entry), or None."""
    parts = p.path.split("/")
    if len(parts) == 2 and parts[0] == "formulas" and parts[1].endswith(".yaml") and parts[1][:-5] in on_disk:
        return parts[1][:-5]
    if p.code == codes.CATALOGUE and len(parts) == 3 and parts[:2] == ["formulas", "texts"]:
        if parts[2].endswith(".md") and parts[2][:-3] in on_disk:
            return parts[2][:-3]
        head = p.problem.split(":", 1)[0]
        if head in on_disk:
            return head
    return None


def broken(reg: Registry) -> dict[str, list[Problem]]:
    """slug -> its problems, for every calculator whose own files fail validation (a file that does not load,
    an unreleased hand edit, a dependency that moved); {} when a problem belongs to no single calculator."""
    on_disk = {q.stem for q in reg.formulas_dir.glob("*.yaml") if q.name != "units.yaml"}
    out: dict[str, list[Problem]] = {s: [] for s in sorted(broken_files(reg))}
    for p in reg.problems:
        slug = _owner(reg, p, on_disk)
        if slug is None:
            return {}  # the journal, the lock, the unit data...: no partial reading
        out.setdefault(slug, []).append(p)
    return out


def uses(reg: Registry, slug: str) -> set[str]:
    """Every calculator `slug` depends on, directly or not (names of broken files included)."""
    seen: set[str] = set()
    todo = [slug]
    while todo:
        c = reg.calculators.get(todo.pop())
        for d in c.depends_on if c is not None else []:
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def blocking_for(reg: Registry, ref: str | int) -> list[Problem]:
    """The problems that forbid computing `ref`: none when only files it does not use are broken."""
    bad = broken(reg)
    if not bad:
        return list(reg.problems)
    slug = ref if isinstance(ref, str) and not ref.isdigit() else None
    if slug is None:
        try:
            slug = reg.get(ref).slug
        except KeyError:
            return [p for ps in bad.values() for p in ps]  # perhaps the broken one: refuse, naming them
    hit = [s for s in sorted(bad) if s == slug or s in uses(reg, slug)]
    return [p for s in hit for p in bad[s]]


def warning(reg: Registry) -> str | None:
    """One line naming the broken files, for read-only commands that go on without them."""
    bad = broken(reg)
    if not bad:
        return None
    first = {s: ps[0] for s, ps in bad.items() if ps}
    files = "; ".join(f"{p.path}:{p.line}: {p.problem}" for p in first.values())
    return (f"warning: {counted(len(bad), 'calculator file')} {agree(len(bad), 'fails', 'fail')} validation "
            f"({files}); the other calculators are shown, computing with a broken one is refused. `formula validate` "
            "lists every problem")


def leave_out(reg: Registry) -> list[str]:
    """Drop the broken calculators, and those that use one, from a partially read registry; returns them.

    What remains can be shown faithfully: nothing left renders or reads a file that failed validation.
    """
    bad = set(broken(reg))
    gone = sorted(bad | {s for s in reg.calculators if uses(reg, s) & bad})
    for slug in gone:
        reg.calculators.pop(slug, None)
    return gone
