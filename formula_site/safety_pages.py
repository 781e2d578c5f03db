"""The site's Clinical safety page and each calculator page's hazards: the computed case (audit.safety_case),
presented. Every registry string is escaped here (formula_site.markup); nothing is computed."""
from __future__ import annotations

from typing import Any

from audit.safety_case import SafetyCase, residual, risk_summary, to_json
from audit.safety_report import trace
from formula_site.markup import Raw, badge, esc, front_matter_title, link, table, verified_badge
from formula_site.registry_pages import calc_href
from registry.hazards import ALL, hazard_json

RISK_KIND = {1: "ok", 2: "ok", 3: "warn", 4: "bad", 5: "bad"}


def risk_badge(rating: int | None) -> Raw:
    return Raw(badge(f"risk {rating}" if rating else "risk ?", RISK_KIND.get(rating or 0, "info")), str(rating or 0))


def _calcs(calculators: Any, depth: int) -> Any:
    if calculators == ALL:
        return "all calculators"
    return Raw(", ".join(link(calc_href(s, depth=depth), s).html for s in calculators))


def safety_page(case: SafetyCase) -> str:
    """The hazard log as a table with risk levels, the case's summary, and the sign-off's state."""
    j = to_json(case)
    d, purpose = j["document"], j["intended_purpose"] or {}
    out = [front_matter_title("Clinical safety"), "# Clinical safety", "",
           esc(purpose.get("intended_purpose", "")), "", "## Sign-off", "", *_signoff(j["sign_off"]), "",
           "## Hazard log", ""]
    s = risk_summary(case)
    out.append(esc(f"{len(case.hazards)} hazards; by residual risk: "
                   + ", ".join(f"{n} at {k}" for k, n in s["residual"].items()) + "."))
    out += ["", table(["Id", "Hazard", "Calculators", "Risk", "Residual", "Status"],
                      [[h["id"], h["title"], _calcs(h["calculators"], 0), risk_badge(h["risk"]),
                        risk_badge(h["residual_risk"]), h["status"]] for h in j["hazards"]]), ""]
    if j["not_applicable"]:
        out += ["### Assessed as not applicable", "",
                table(["Id", "Hazard", "Why"], [[n["id"], n["title"], n["why"]] for n in j["not_applicable"]],
                      sortable=False), ""]
    r = residual(case)
    out += ["## Residual risk", "", esc(r["statement"] or ""), "",
            esc(f"Hazards above the acceptable residual rating ({r['acceptable_residual']}): "
                + (", ".join(r["above_acceptable"]) or "none") + "."), ""]
    matrix = d["risk_matrix"] or {}
    out += ["## The case", "", esc(f"Registry lock {d['registry_lock']}; hazard log {d['hazard_log']}; "
                                    f"{len(j['scope'])} active versions in scope."), "",
            Raw(f"Risk matrix: {esc(matrix.get('source', 'none'))} {verified_badge(bool(matrix.get('verified')))}").html,
            "", "The full case: `formula safety case`; one calculator's trace: `formula safety trace SLUG`.", ""]
    return "\n".join(out) + "\n"


def _signoff(s: dict[str, Any]) -> list[str]:
    if s.get("state", "none") == "none":
        return [badge("not signed", "warn") + " A clinical safety officer signs with `formula safety sign-off`."]
    kind = {"signed": "ok", "stale": "warn"}.get(s["state"], "bad")
    line = f"{badge(s['state'], kind)} {esc(s.get('name') or s.get('by'))} ({esc(s.get('role'))}), {esc(s.get('date'))}"
    if s.get("stale_for"):
        line += esc(f"; stale for {', '.join(s['stale_for'])}")
    return [line]


def calculator_hazards(case: SafetyCase, slug: str) -> list[str]:
    """A calculator page's section: the hazards naming it, their controls and the evidence behind each."""
    if case.log is None:
        return []
    t = trace(case, slug)
    out = ["", "## Clinical safety", ""]
    mine = [h for h in t["hazards"] if h["calculators"] != ALL]
    wide = len(t["hazards"]) - len(mine)
    out.append(esc(f"{len(mine)} hazards name this calculator; {wide} registry-wide hazards apply to every "
                   "calculator (see the Clinical safety page)."))
    for h in mine:
        out += ["", f"### {esc(h['id'])} {esc(h['title'])}", "",
                f"{risk_badge(h['risk']).html} → {risk_badge(h['residual_risk']).html} {badge(h['status'], 'info')}", "",
                table(["Control", "Evidence", "Shows"],
                      [[f"{c['id']} ({c['kind']})", f"{e['kind']}" + (f": {e['ref']}" if e.get("ref") else ""),
                        e["shows"]] for c in h["controls"] for e in c["evidence"]], sortable=False)]
    return out


__all__ = ["calculator_hazards", "hazard_json", "safety_page"]
