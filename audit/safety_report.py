"""The safety case in words: the trace of one calculator (requirement -> hazards -> controls -> evidence) and the
case as markdown. Both read the one computed case (audit.safety_case); nothing here computes a clinical value."""
from __future__ import annotations

import textwrap
from typing import Any

from audit.safety_case import SafetyCase, residual, risk_summary, scope, to_json
from registry.hazards import ALL, Evidence, Hazard, hazard_json
from registry.texts import render


def evidence_words(case: SafetyCase, slug: str, ev: Evidence) -> str:
    """What one piece of a control's evidence shows for calculator `slug`, computed now."""
    e = case.evidence[slug]
    ref_slug, _, item = (ev.ref or "").partition("#")
    c = case.reg.calculators[slug]
    if ev.kind == "reference_cases":
        n = e.reference_cases
        return (f"{n.passed} of {n.total} reference answers agree (benchmark variant); published variant computed "
                f"{e.published.passed} of {e.published.total}" if n.total else "no reference cases ship for it")
    if ev.kind == "completeness":
        now = "complete" if not e.text_missing else "incomplete: " + "; ".join(e.text_missing)
        return f"supplied text found {e.completeness}" + (f" ({e.finding})" if e.finding else "") + f"; text now {now}"
    if ev.kind == "input_ranges":
        return f"{e.ranged_inputs} of {len(c.inputs)} inputs carry a plausible range"
    if ev.kind in ("plausibility", "deviation") and ref_slug != slug:
        own = e.plausibility if ev.kind == "plausibility" else e.deviations
        return f"{ev.ref} (another calculator's); this one's: {', '.join(own) or 'none'}"
    if ev.kind == "plausibility":
        rule = next((p for p in c.plausibility if p.id == item), None)
        return rule.description if rule else ev.ref or ""
    if ev.kind == "deviation":
        d = next(d for d in c.deviations if d.id == item)
        return f"benchmark: {d.benchmark}; published: {d.published}"
    return _fixed_words(ev)


def _fixed_words(ev: Evidence) -> str:
    words = {"rule": f"validation rule {ev.ref}: the registry passes it (`formula validate`)",
             "differential": f"{ev.ref}: published variant against clincalc (run by the test suite)",
             "router_abstention": "the router answers from the library first and abstains where nothing is trusted",
             "executor_policy": "model-written programs run in the restricted executor, clinical policy",
             "default_variant": "the published variant is the default for a patient's value",
             "signatures": "signed decisions checked by `formula verify`",
             "test": f"{ev.ref}, run by the project's test suite", "document": f"{ev.ref} (documentation)"}
    return words.get(ev.kind, ev.ref or ev.kind)


def trace(case: SafetyCase, slug: str) -> dict[str, Any]:
    """Requirement (the version and its text) -> hazards -> controls -> evidence, for one calculator."""
    reg, log = case.reg, case.log
    c = reg.calculators[slug]
    row = next(r for r in scope(reg) if r["slug"] == slug)
    out_h = []
    for h in case.of(slug):
        j = hazard_json(log, h) if log else {}
        for ctrl in j.get("controls", []):
            ctrl["evidence"] = [{**ev, "shows": evidence_words(case, slug, Evidence.model_validate(ev))}
                                for ev in ctrl["evidence"]]
        out_h.append({k: j[k] for k in ("id", "title", "status", "risk", "residual_risk", "calculators", "controls")})
    return {"requirement": {"slug": slug, "name": c.name, "version": row["version"], "content_hash": row["content_hash"],
                            "effective": c.active.effective.isoformat(),
                            "text": render(c, calcs=reg.calculators, units=reg.units)},
            "hazards": out_h, "evidence": case.evidence[slug].to_json()}


def trace_text(t: dict[str, Any]) -> str:
    r = t["requirement"]
    lines = [f"{r['slug']} {r['version']} ({r['name']}), effective {r['effective']}", f"content {r['content_hash']}", ""]
    for h in t["hazards"]:
        wide = " (registry-wide)" if h["calculators"] == ALL else ""
        lines.append(f"{h['id']} {h['title']}{wide}")
        lines.append(f"  risk {h['risk']} -> residual {h['residual_risk']}, {h['status']}")
        for ctrl in h["controls"]:
            lines += _wrap(f"{ctrl['id']} ({ctrl['kind']}): {ctrl['description']}", "  ", "    ")
            for ev in ctrl["evidence"]:
                lines += _wrap(f"{ev['kind']}: {ev['shows']}", "    - ", "      ")
    if not t["hazards"]:
        lines.append("no hazard names this calculator")
    return "\n".join(lines)


def _wrap(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, 79, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False) or [first]


def markdown(case: SafetyCase, stale_note: str = "") -> str:
    """The case as a markdown document (the same facts as `to_json`)."""
    j = to_json(case)
    d, p = j["document"], j["intended_purpose"] or {}
    out = [f"# {d['title']}", "", "## Document control", "",
           f"- Date: {d['date']}", f"- Registry lock: `{d['registry_lock']}`", f"- Hazard log: `{d['hazard_log']}`"]
    if d["risk_matrix"]:
        verified = "verified" if d["risk_matrix"]["verified"] else "NOT verified against its source"
        out.append(f"- Risk matrix: {d['risk_matrix']['source']} ({verified})")
    out += ["", "## Intended purpose", "", p.get("intended_purpose", "not stated"), "",
            f"Intended users: {p.get('intended_users', 'not stated')}", "",
            f"Not intended: {p.get('not_intended', 'not stated')}", ""]
    out += _scope_md(j) + _risk_md(case) + _evidence_md(j) + _residual_md(case) + _signoff_md(j["sign_off"], stale_note)
    return "\n".join(out).rstrip() + "\n"


def _scope_md(j: dict[str, Any]) -> list[str]:
    out = ["## Scope", "", f"{len(j['scope'])} active versions:", "", "| calculator | version | content hash |",
           "|---|---|---|"]
    out += [f"| {r['slug']} | {r['version']} | `{r['content_hash'][:19]}` |" for r in j["scope"]]
    return out + [""]


def _risk_md(case: SafetyCase) -> list[str]:
    s = risk_summary(case)
    out = ["## Hazard log", "", "Hazards by initial risk: " + _counts(s["initial"]) + "; by residual risk: "
           + _counts(s["residual"]) + "; by status: " + ", ".join(f"{k} {v}" for k, v in s["status"].items()) + ".", "",
           "| id | hazard | calculators | risk | residual | status |", "|---|---|---|---|---|---|"]
    for h in case.hazards:
        hj = hazard_json(case.log, h) if case.log else {}
        out.append(f"| {h.id} | {h.title} | {_calcs(h)} | {hj.get('risk')} | {hj.get('residual_risk')} | {h.status} |")
    return out + [""]


def _calcs(h: Hazard) -> str:
    return "all" if h.calculators == ALL else ", ".join(h.calculators)


def _counts(c: dict[str, int]) -> str:
    return ", ".join(f"{v} at {k}" for k, v in c.items()) or "none"


def _evidence_md(j: dict[str, Any]) -> list[str]:
    out = ["## Evidence per calculator", "", "| calculator | reference cases | published computed | text | "
           "deviations |", "|---|---|---|---|---|"]
    for e in j["evidence"]:
        rc, pub = e["reference_cases"], e["published"]
        cases = f"{rc['passed']} of {rc['total']}" if rc["total"] else "none ship"
        out.append(f"| {e['slug']} | {cases} | {pub['passed']} of {pub['total']} | "
                   f"{e['completeness']['status']} | {len(e['open_deviations'])} |")
    return out + ["", "Agreement with an independent engine (clincalc) is checked by "
                  "`tests/solver/test_clincalc_differential.py`.", ""]


def _residual_md(case: SafetyCase) -> list[str]:
    r = residual(case)
    above = ", ".join(r["above_acceptable"]) or "none"
    return ["## Residual risk", "", r["statement"] or "", "",
            f"Hazards whose residual risk exceeds {r['acceptable_residual']}: {above}. "
            f"Open hazards: {', '.join(r['open']) or 'none'}.", ""]


def _signoff_md(s: dict[str, Any], stale_note: str) -> list[str]:
    out = ["## Sign-off", ""]
    if s.get("state") == "none":
        return out + ["Not signed: a clinical safety officer signs with `formula safety sign-off`.", ""]
    out.append(f"State: **{s['state']}**. Signed by {s.get('name') or s.get('by')} ({s.get('role')}) on {s.get('date')}"
               + (", verified." if s.get("verified") else f"; does not verify: {s.get('why')}."))
    if s.get("stale_for"):
        out.append(f"Stale for: {', '.join(s['stale_for'])}.")
    if s.get("hazards_changed"):
        out.append(f"Hazards changed since: {', '.join(s['hazards_changed'])}.")
    return out + ([stale_note] if stale_note else []) + [""]
