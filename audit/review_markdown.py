"""The pull-request review as a comment (markdown) or for tools (JSON): same review, same bytes.

The markdown is built for a pull-request comment: a summary table first, long parts folded in
`<details>`, at most `LIMIT` characters (what had to be cut is said, with how to see all of it).
Registry text is untrusted (it comes from the pull request), so every registry string is written as
inert text: HTML and the characters Markdown gives a meaning to become numeric character references,
an `@` cannot mention anyone, and the text diff sits in a code fence longer than any run of backticks
in it. The only HTML in the comment is this module's own `<details>` and `<summary>`.
"""
from __future__ import annotations

import json
import re
from typing import Any

from audit.completeness import AGREEMENT_RULE, agreement_words, completeness_words
from audit.decisions import Decision
from audit.review_pr import CalculatorReview, Effect, Review
from audit.review_safety import SafetyReview
from registry.diffing import fmt
from registry.terminal import printable

LIMIT = 65_536  # characters GitHub accepts in one comment
MAX_PROBLEMS = 100
MAX_CELL = 300

# HTML's own characters, and those Markdown (CommonMark + GitHub's tables, strikethrough, math, autolinks) acts on
# anywhere in a line; "-", "+", "=" and "1." act only where a line starts (`esc(..., lead=True)`)
_LIST_START = re.compile(r"^(\d+)([.)])")
_LEAD = re.compile(r"^([-+=])")
_WWW = re.compile(r"(www)\.", re.I)
_ACTIVE = str.maketrans({c: f"&#{ord(c)};" for c in "&<>\"'[]{}\\`*_|~#$:"} | {"@": "@\u2060"})


def esc(value: Any, limit: int = MAX_CELL, *, lead: bool = False) -> str:
    """One registry string as inert text on one line (whitespace collapsed, long text shortened); `lead`: it
    opens a list item, where a leading "-", "+", "=" or "1." would start a list or a heading of its own."""
    text = printable(" ".join(("none" if value is None else fmt(value) if not isinstance(value, str) else value)
                              .split()))  # a control character (an ANSI sequence, a bidi override) shows as \x1b
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = text.translate(_ACTIVE)
    if lead:
        text = _LIST_START.sub(lambda m: m.group(1) + f"&#{ord(m.group(2))};", text)
        text = _LEAD.sub(lambda m: f"&#{ord(m.group(1))};", text)
    return _WWW.sub(lambda m: m.group(1) + "&#46;", text)  # nor may "www." become a link


def _code(lines: list[str]) -> list[str]:
    """Lines for a code fence: literal text, control characters made visible, in a fence no line can close."""
    shown = [printable(line) for line in lines]
    fence, lang = _fence(shown)
    return [f"{fence}{lang}", *shown, fence]


def _fence(lines: list[str]) -> tuple[str, str]:
    longest = max((len(m) for line in lines for m in re.findall(r"`+|~+", line)), default=0)
    return "`" * max(3, longest + 1), "diff"


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.6g}"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.4g}%"


def plural(n: int, word: str, words: str | None = None) -> str:
    """'1 calculator', '2 calculators': a count with its noun in the right number."""
    return f"{n} {word if n == 1 else words or word + 's'}"


def _side(side: dict[str, Any]) -> str:
    """A revision as a reader knows it: its name, short hash and subject; the working tree only when it is one."""
    commit, subj = side.get("commit"), side.get("subject")
    named = f"{commit[:12]} {esc(chr(8220) + subj + chr(8221), 120)}" if commit and subj else (commit or "")[:12]
    if side.get("working_tree"):
        return "working tree" + (f" (uncommitted changes on {named})" if commit else "")
    return esc(side["revision"]) + (f" ({named})" if commit else "")


# ---------------------------------------------------------------------- pieces


def _answers(e: Effect | None) -> str:
    if e is None:
        return "–"
    if not e.computed:
        return "not computed"
    return f"{e.changed} of {e.cases}"


def _reclass(e: Effect | None) -> str:
    if e is None or e.reclassified is None:
        return "–"
    return f"{e.reclassified.moved} ({esc(e.reclassified.table)})"


def _version(r: CalculatorReview) -> str:
    if r.base_version == r.head_version:
        return esc(r.head_version or r.base_version)
    return f"{esc(r.base_version)} → {esc(r.head_version)}"


def summary_table(rev: Review) -> list[str]:
    out = ["| calculator | kind | version | changed values | reference answers changed | reclassified | "
           "dependants | decisions |", "|---|---|---|---|---|---|---|---|"]
    for r in rev.calculators:
        states = ", ".join(sorted({"not signed" if d.state == "unsigned" else d.state.replace("_", " ")
                                   for d in r.decisions}))
        decided = f"{len(r.decisions)} ({states})" if states else "0"
        out.append(f"| {esc(r.slug)} | {r.kind} | {_version(r)} | {len(r.changes)} | {_answers(r.effect)} | "
                   f"{_reclass(r.effect)} | {len(r.dependants)} | {decided} |")
    return out


def _decision(d: Decision) -> str:
    """One decision: what, which version, who in which role, when, why, and whether its signature verifies."""
    who = (esc(d.name or d.principal) if (d.name or d.principal) else "an unverified signer") + \
        (f" ({esc(d.role)})" if d.role else "")
    if d.state == "verified":
        how = f"verified: key of {esc(d.principal)} ({esc(d.fingerprint)})"
    elif d.state == "unsigned":
        how = "not signed: a typed name, not verified by any key"
    elif d.state == "recorded_before_signing":
        how = "recorded before signing began, not verified"
    else:
        how = f"FAILS to verify: {esc(d.why)}"
    why = f"; reason: {esc(d.reason)}" if d.reason else "; no reason given"
    return f"{esc(d.decision, lead=True)} {esc(d.version)} by {who} on {esc(d.date)}{why} ({how})"


def _unit(e: Effect) -> str:
    return f" {esc(e.unit)}" if e.unit else ""


def _effect_lines(e: Effect) -> list[str]:
    if not e.computed:
        return [f"- **effect on answers:** not computed ({esc(e.why_not)})"]
    what_if = " (computed although the head does not validate: an unreleased edit as if released)" \
        if e.from_invalid_head else ""
    out = [f"- **effect on answers{what_if}:** {e.changed} of {plural(e.cases, 'reference answer')} change; "
           f"largest absolute change {_num(e.largest_abs)}{_unit(e) if e.largest_abs is not None else ''}, "
           f"largest relative {_pct(e.largest_rel)}",
           f"- **agreement with the benchmark:** {agreement_words(e.agree_after, e.cases)} "
           f"(before: {e.agree_before} of {e.cases})"]
    if e.refused_before or e.refused_after:
        out.append(f"  - refused by the library: {e.refused_before} before, {e.refused_after} after")
    if e.reclassified is not None:
        out.append(f"  - reclassified ({esc(e.reclassified.table)}): {plural(e.reclassified.moved, 'case')}"
                   + "".join(f"; {esc(x['case'])}: {esc(x['before'])} → {esc(x['after'])}"
                             for x in e.reclassified.examples))
    return out


def calculator_core(r: CalculatorReview) -> list[str]:
    gone = {"unreadable": " (its file in the head does not load: see the validation problems)",
            "removed": " (removed in the head)", "added": " (new in the head)"}.get(r.change, "")
    out = [f"### {esc(r.slug)}: {r.kind}{gone}", "",
           f"- **version:** {esc(r.base_version)} ({esc(r.base_state.words)}) → {esc(r.head_state.version or r.head_version)} "
           f"({esc(r.head_state.words)})"]
    if r.decisions:
        out.append("- **decisions recorded:**")
        out += [f"  - {_decision(d)}" for d in r.decisions]
    else:
        out.append("- **decisions recorded:** none")
    if r.changes:
        out.append("- **changed values:**")
        out += [f"  - {esc(c.line, 600, lead=True)}" + ("" if c.scoring else " (does not move an answer)") for c in r.changes]
    if r.text_diff:
        out.append(f"- **supplied text:** changed ({len(r.text_diff)} diff lines)")
    if r.effect is not None:
        out += _effect_lines(r.effect)
    if r.completeness is not None:
        out.append(f"- **completeness of the new text:** {esc(completeness_words(r.completeness.missing))}")
    if r.dependants:
        out.append("- **dependants whose content hash changes:** " + ", ".join(esc(d) for d in r.dependants))
    return out


def calculator_details(r: CalculatorReview) -> list[str]:
    parts: list[str] = []
    e = r.effect
    if e is not None and e.examples:
        unit = f" ({esc(e.unit)})" if e.unit else ""
        parts += [f"| reference case | inputs | base{unit} | head{unit} |", "|---|---|---|---|"]
        parts += [f"| {esc(x.case)} | {esc(x.inputs)} | {esc(x.before)} | {esc(x.after)} |" for x in e.examples]
        parts.append("")
    if r.text_diff:
        parts += _code(r.text_diff)
    if not parts:
        return []
    return ["", f"<details><summary>{esc(r.slug)}: examples and the supplied text's diff</summary>", "",
            *parts, "", "</details>"]


def _guidelines(rev: Review) -> list[str]:
    if not rev.guidelines:
        return []
    out = ["### Guidelines", "", "| guideline | change | fields |", "|---|---|---|"]
    for g in rev.guidelines:
        fields = "; ".join(f"{esc(f.field)}: {esc(f.old, 120)} → {esc(f.new, 120)}" for f in g.changes[:20])
        more = f"; and {len(g.changes) - 20} more" if len(g.changes) > 20 else ""
        out.append(f"| {esc(g.slug)} | {g.change} | {fields}{more} |")
    return out + [""]


def _policy(rev: Review, details: bool = True) -> list[str]:
    """Who decides changed: first of the report, since a change of keys, people, roles, policy or seal changes
    what every signature below it proves."""
    if not rev.policy and not rev.key_warnings:
        return []
    out = ["### Who decides changed (formulas/policy/)", ""]
    out += [f"- **Warning: {esc(w, 600, lead=True)}**" for w in rev.key_warnings] + ([""] if rev.key_warnings else [])
    if not rev.policy:
        return out
    out += ["| file | change | diff lines |", "|---|---|---|"]
    out += [f"| {esc(p.path)} | {p.change} | {len(p.diff) + p.cut} |" for p in rev.policy]
    for p in rev.policy if details else []:
        if p.diff:
            cut = [f"… {p.cut} more diff lines (`--format json` has the first {len(p.diff)})"] if p.cut else []
            out += ["", f"<details><summary>{esc(p.path)}</summary>", "", *_code(p.diff), *cut, "", "</details>"]
    return out + [""]


def _blocking(rev: Review) -> list[str]:
    """What the head cannot vouch for itself, judged by the base: first, since each one fails the review."""
    if not rev.blocking:
        return []
    out = [f"### Blocking: {plural(len(rev.blocking), 'finding')} judged by the base", ""]
    shown = rev.blocking[:MAX_PROBLEMS]
    out += [f"- **{esc(w, 600, lead=True)}**" for w in shown]
    if len(rev.blocking) > len(shown):
        out.append(f"- … and {len(rev.blocking) - len(shown)} more (`--format json` lists them all)")
    return out + [""]


def _paths(rev: Review) -> list[str]:
    """Every path the change touches, beside whether the review read it (folded: the list can be long)."""
    if not rev.paths:
        return []
    unread = sum(not p.read for p in rev.paths)
    rows = [f"| {p.status} | {esc(p.path)}{f' (from {esc(p.old)})' if p.old else ''} | "
            f"{'read' if p.read else '**not read**'} |" for p in rev.paths[:MAX_PROBLEMS]]
    more = [f"… and {len(rev.paths) - len(rows)} more (`--format json` lists them all)"] if len(rows) < len(rev.paths) \
        else []
    return [f"<details><summary>Paths the change touches: {len(rev.paths)}, {unread} not read by this review"
            "</summary>", "", "| status | path | review |", "|---|---|---|", *rows, *more, "", "</details>", ""]


def _stale(rev: Review) -> list[str]:
    if not rev.stale_runs:
        return ["Stored runs under results/: none becomes stale.", ""]
    out = ["### Stored runs that become stale", "", "| run | stale cases | calculators |", "|---|---|---|"]
    out += [f"| {esc(s.run)} | {s.stale} of {s.rows} | {', '.join(esc(c) for c in s.calculators)} |"
            for s in rev.stale_runs]
    return out + [""]


def _problems(rev: Review) -> list[str]:
    if not rev.problems:
        return ["### Validation of the head", "", "The head validates: no problem.", ""]
    shown = rev.problems[:MAX_PROBLEMS]
    out = [f"### Validation problems of the head ({len(rev.problems)})", ""]
    out += [f"- {esc(p, 600, lead=True)}" for p in shown]
    if len(rev.problems) > len(shown):
        out.append(f"- … and {len(rev.problems) - len(shown)} more (`formula validate` lists them all)")
    return out + [""]


def _header(rev: Review) -> list[str]:
    verdict = (f"**The head does not validate: {plural(len(rev.problems), 'problem')}.**" if rev.problems
               else "**The head validates.**")
    kind = f"Kind: **{rev.kind}**." if rev.kind else "No calculator changed."
    stale = sum(s.stale for s in rev.stale_runs)
    return [f"## Registry review: {_side(rev.base)} → {_side(rev.head)}", "",
            f"{verdict} {kind} Changed: {plural(len(rev.calculators), 'calculator')}, "
            f"{plural(len(rev.guidelines), 'guideline')}"
            + (", the shared unit data" if rev.units_changed else "")
            + (f"; who decides changed: {plural(len(rev.policy), 'file')} under formulas/policy/" if rev.policy else "")
            + (f"; {plural(len(rev.key_warnings), 'decision')} signed with a key the change adds" if rev.key_warnings
               else "")
            + (f"; **{plural(len(rev.blocking), 'blocking finding')}**" if rev.blocking else "")
            + f"; {plural(stale, 'stored case')} in {plural(len(rev.stale_runs), 'run')} become stale.", ""]


def _legend(rev: Review) -> list[str]:
    """What the report's words mean, said once."""
    if not any(r.effect is not None and r.effect.computed for r in rev.calculators):
        return []
    return [f"Reference answers are the benchmark's shipped reference cases computed with the library on each side; "
            f"{AGREEMENT_RULE}. Completeness is the text's (it carries every input, constant, table and branch), "
            "agreement is the answers'.", ""]


# ---------------------------------------------------------------------- the comment


def _cut_note(rev: Review, what: str) -> list[str]:
    label = str(rev.base["revision"])
    base = "" if label.startswith("merge-base with") else f" --base {esc(label)}"
    return ["", f"**This comment was cut to fit {LIMIT:,} characters: {what}.** The whole report: "
            f"`formula review-pr{base} --format json`, or `--out FILE` for the full markdown.", ""]


def safety_markdown(s: SafetyReview | None) -> list[str]:
    """The section in words (nothing when the change touches neither the log nor the sign-off)."""
    if s is None or s.empty:
        return []
    out = ["### Clinical safety", ""]
    for label, ids in (("added", s.hazards_added), ("changed", s.hazards_changed), ("closed", s.hazards_closed),
                       ("removed", s.hazards_removed)):
        if ids:
            out.append(f"- Hazards {label}: {esc(', '.join(ids))}")
    inv = s.invalidated
    if inv is not None:
        newly = ", ".join(inv.by_this_change) or "none newly"
        out.append(f"- This change makes the safety case's sign-off by {esc(inv.by)} ({esc(inv.role)}, {inv.date}) "
                   f"stale for {esc(', '.join(inv.stale_for), 2000)} (made stale here: {esc(newly, 2000)}); the "
                   "clinical safety officer signs again with `formula safety sign-off`.")
    elif s.sign_off_head != s.sign_off_base:
        out.append(f"- Sign-off: {s.sign_off_base} on the base, {s.sign_off_head} on the head.")
    return out + [""]


def markdown(rev: Review, limit: int | None = LIMIT) -> str:
    """The comment; with `limit`, folded details and then whole calculator sections are cut to fit."""
    table = summary_table(rev) + [""] + _legend(rev) if rev.calculators else []
    top = _header(rev) + _blocking(rev) + _policy(rev) + table + _problems(rev) + safety_markdown(rev.safety) \
        + _stale(rev) + _guidelines(rev) + _paths(rev)
    cores = [calculator_core(r) for r in rev.calculators]
    details = [calculator_details(r) for r in rev.calculators]
    full = "\n".join(top + [line for c, d in zip(cores, details) for line in (*c, *d, "")]) + "\n"
    if limit is None or len(full) <= limit:
        return full
    top = _header(rev) + _blocking(rev) + _policy(rev, details=False) + table + _problems(rev) \
        + safety_markdown(rev.safety) + _stale(rev) + _guidelines(rev) + _paths(rev)
    lean = top + [line for c in cores for line in (*c, "")]
    note = _cut_note(rev, "the policy diffs, and the examples and text diffs of every calculator")
    if len("\n".join(lean + note)) + 1 <= limit:
        return "\n".join(lean + note) + "\n"
    kept = list(top)
    for i, core in enumerate(cores):
        note = _cut_note(rev, f"the sections of {plural(len(cores) - i, 'calculator')} from {esc(rev.calculators[i].slug)} "
                         "on, the policy diffs, and every calculator's examples and text diff")
        if len("\n".join(kept + core + [""] + note)) + 1 > limit:
            return "\n".join(kept + note)[: limit - 1] + "\n"
        kept += [*core, ""]
    return "\n".join(kept) + "\n"


def as_json(rev: Review) -> str:
    return json.dumps({**rev.model_dump(mode="json"), "exit": rev.exit_code}, indent=2, ensure_ascii=False) + "\n"
