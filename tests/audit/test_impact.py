"""`formula impact`: predecessor against successor on the shipped reference cases, bands from the registry."""
from __future__ import annotations

import json

import pytest

from audit.impact import ImpactError, impact
from cli.main import main
from registry.loader import get_registry
from solver.data import REFERENCE_CASES, Case, read_cases
from solver.library import compute


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return read_cases(REFERENCE_CASES)


def g_stage(egfr: float) -> int:
    """KDIGO G-category by hand: 1 = G1 ... 6 = G5."""
    for n, edge in enumerate((90, 60, 45, 30, 15), 1):
        if egfr >= edge:
            return n
    return 6


def test_mdrd_to_ckd_epi_2021_stages(cases):
    reg = get_registry()
    rep = impact(reg, "mdrd-gfr", "ckd-epi-2021", cases)
    mdrd = [c for c in cases if c.calculator_id == reg.get("mdrd-gfr").medcalc_id]
    assert rep.cases == len(mdrd) == 40 and rep.compared + sum(rep.unavailable.values()) == 40
    expected = {}
    for c in mdrd:
        a = compute("mdrd-gfr", c.entities, variant="published").value
        b = compute("ckd-epi-2021", {k: c.entities[k] for k in ("age", "sex", "creatinine")}, variant="published").value
        expected[(g_stage(a), g_stage(b))] = expected.get((g_stage(a), g_stage(b)), 0) + 1
    assert dict(rep.transitions) == expected
    moved = sum(n for (a, b), n in expected.items() if a != b)
    assert rep.reclassified()["moved"] == moved > 0
    assert rep.summary()["n"] == 40 and rep.relation == "replaced_by"


def test_cha2ds2_vasc_to_va_moves_nobody_across_treatment_categories(cases):
    rep = impact(get_registry(), "cha2ds2-vasc", "cha2ds2-va", cases)
    assert rep.compared == rep.cases == 40
    women = sum(1 for c in cases if c.calculator_id == 4 and c.entities.get("sex") == "Female")
    s = rep.summary()
    assert s["lower"] == women and s["same"] == 40 - women and s["min"] == -1 and s["max"] == 0  # the sex point
    assert rep.reclassified() == {"moved": 0, "up": 0, "down": 0, "same": 40}


def test_framingham_to_pce_reports_what_cannot_be_compared(cases):
    rep = impact(get_registry(), "framingham-hard-chd", "pooled-cohort-equations", cases)
    fram = [c for c in cases if c.calculator_id == 46]
    ages = [v / 12 if unit == "months" else v for v, unit in (c.entities["age"] for c in fram)]
    assert len(ages) == 40 and {unit for _, unit in (c.entities["age"] for c in fram)} <= {"years", "months"}
    outside = sum(1 for a in ages if not 40 <= a <= 79)
    assert rep.cases == len(fram) and dict(rep.unavailable) == {"OutOfRange (age)": outside}
    assert rep.compared == len(fram) - outside
    assert rep.defaults_used["Race"] == rep.compared  # no race in the benchmark: white equations, and said so
    assert sum(rep.transitions.values()) == rep.compared


def test_impact_refuses_what_it_cannot_compare():
    reg = get_registry()
    with pytest.raises(ImpactError, match="unknown calculator"):
        impact(reg, "mdrd-gfr", "no-such-thing", [])
    with pytest.raises(ImpactError, match="numeric"):
        impact(reg, "estimated-due-date", "ckd-epi-2021", [])
    with pytest.raises(ImpactError, match="no benchmark id"):
        impact(reg, "meld-3-0", "meld-na", [])


def test_cli_markdown_and_json(capsys):
    assert main(["impact", "mdrd-gfr", "ckd-epi-2021"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Impact: mdrd-gfr") and "| from \\ to |" in out and "G3a (45-59)" in out
    assert main(["impact", "framingham-hard-chd", "pooled-cohort-equations", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["band_tables"] == ["pooled-cohort-equations:risk_categories"] * 2 and data["data_hash"].startswith("sha256:")
    assert main(["impact", "mdrd-gfr", "ckd-epi-2021", "--data", "/no/such.jsonl"]) == 1
    assert "no such file" in capsys.readouterr().err
