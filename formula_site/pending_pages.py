"""The site's "Awaiting approval" sections: drafts and approved versions not yet in force.

Read from `registry.governance.pending`, the same queue `formula pending` prints, so the committee sees on
the site exactly what the command line shows.
"""
from __future__ import annotations

from formula_site.markup import Raw, esc, link, table
from registry.governance.pending import Pending, pending, pending_one
from registry.loader import Registry
from registry.schema import Calculator


def _who(p: Pending) -> str:
    if p.drafted_by is None:
        return "not recorded" if p.signing == "not signed" else f"not verified ({p.signing})"
    key = p.keys.get(p.drafted_by.who)
    proof = f"; verified, key {key}" if p.signing == "verified" and key else "; typed, not signed" \
        if p.signing == "not signed" else ""
    return f"{p.drafted_by.who} ({p.drafted_by.role}{proof})"


def _changes(p: Pending) -> Raw:
    lines = [esc(x) for x in p.changes] or ["–"]
    if not p.scoring_changed:
        lines.append("<em>no change to scoring</em>")
    return Raw("<br>".join(lines))


def overview_section(reg: Registry) -> str:
    """The overview's queue: every version waiting, oldest first."""
    items = pending(reg)
    out = ["## Awaiting approval", ""]
    if not items:
        return "\n".join(out + ["Nothing is waiting: no draft awaits approval and no approved version awaits its "
                                "effective date (`formula pending`).", ""])
    rows = [[link(f"calculators/{p.slug}.html", p.name), f"{p.base} → {p.version}", p.state, p.effective.isoformat(),
             _who(p), p.since.isoformat() if p.since else "not recorded", p.reason, _changes(p)] for p in items]
    out.append(table(["Calculator", "Version", "State", "Effective", "Drafted by", "Since", "Why", "What changes"],
                     rows, sortable=False))
    return "\n".join(out + [""])


def calculator_section(reg: Registry, c: Calculator) -> list[str]:
    """A calculator page's note of its waiting version, or nothing."""
    p = pending_one(reg, c)
    if p is None:
        return []
    approved = ("; approved by " + ", ".join(
        f"{a.who} ({a.role}) on {a.date}" + (f", verified, key {p.keys[a.who]}" if a.who in p.keys else "")
        for a in p.approvals) if p.approvals else "")
    return ["", "## Awaiting approval", "",
            f"Version {esc(p.version)} ({esc(p.state)}), drafted from {esc(p.base)} by {esc(_who(p))} on "
            f"{p.since.isoformat() if p.since else 'a date not recorded'}, effective {p.effective.isoformat()}"
            f"{esc(approved)}. Why: {esc(p.reason)}. Version {esc(p.base)} stays in use until it is approved and "
            "its date has come.", "",
            table(["What changes"], [[_changes(p)]], sortable=False)]
