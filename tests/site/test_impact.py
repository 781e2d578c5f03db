"""The Impact section: a page per predecessor -> successor pair the registry links, presenting audit.impact.

Expectations come from the reference cases themselves (read here as plain JSON) and from the formulas'
definitions, not from the site's code.
"""
from __future__ import annotations

import json
import re
from collections import Counter

from registry.loader import get_registry
from solver.data import REFERENCE_CASES
from tests.site.helpers import page, rows, table_after

REQUIRED_PAIRS = [("mdrd-gfr", "ckd-epi-2021"), ("cha2ds2-vasc", "cha2ds2-va"),
                  ("framingham-hard-chd", "pooled-cohort-equations")]


def reference_cases(slug: str) -> list[dict]:
    cid = get_registry().calculators[slug].medcalc_id
    with open(REFERENCE_CASES, encoding="utf-8") as fh:
        return [c for c in map(json.loads, fh) if c["calculator_id"] == cid]


def cases_table(text: str) -> dict[str, int]:
    return {r[0]: int(r[1]) for r in table_after(text, "cases")}


def test_a_page_per_linked_pair(built_site):
    reg = get_registry()
    linked = {(c.slug, r.successor) for c in reg.calculators.values() for r in c.replacements
              if r.successor in reg.calculators}
    assert set(REQUIRED_PAIRS) <= linked
    index = page(built_site, "impact/index.html")
    listed = rows(index)
    assert len(listed) == len(linked)
    for pred, succ in linked:
        assert (built_site.out / "impact" / f"{pred}--{succ}.html").is_file(), (pred, succ)
        assert f'href="{pred}--{succ}.html"' in index
    # the generated pages are in the navigation, under Impact, and the overview counts the pairs
    assert "mdrd-gfr → ckd-epi-2021" in page(built_site, "impact/mdrd-gfr--ckd-epi-2021.html")
    overview = page(built_site, "index.html")
    assert re.search(r'href="impact/index.html"><span class="fr-card-number">(\d+)<', overview).group(1) == \
        str(len(linked))


def test_every_required_pair_accounts_for_each_reference_case(built_site):
    for pred, succ in REQUIRED_PAIRS:
        text = page(built_site, f"impact/{pred}--{succ}.html")
        n = len(reference_cases(pred))
        t = cases_table(text)
        assert n > 0 and t[f"reference cases of {pred}"] == n
        assert t["compared (both computed)"] + t["successor not computable"] + t["predecessor not computable"] == n
        assert f"{succ}.svg" in text


def test_cha2ds2_va_drops_the_female_point_and_moves_no_one(built_site):
    """CHA2DS2-VA is CHA2DS2-VASc without the sex category (1 point for female sex), and the ESC 2024 bands
    for VA equal the sex-specific VASc bands shifted by that point: every woman scores 1 lower, every man the
    same, and no case changes treatment category."""
    cases = reference_cases("cha2ds2-vasc")
    sex = Counter(c["entities"]["sex"] for c in cases)
    text = page(built_site, "impact/cha2ds2-vasc--cha2ds2-va.html")
    diff = table_after(text, "difference-cha2ds2-va-minus-cha2ds2-vasc")[0]
    assert diff[:4] == [str(len(cases)), "0", str(sex["Female"]), str(sex["Male"])]  # cases, higher, lower, same
    assert float(diff[4]) == round(-sex["Female"] / len(cases), 2)  # mean
    assert "0 of 40" in text.replace("<strong>", "").replace("</strong>", "")
    matrix = table_after(text, "reclassification")
    off_diagonal = [int(v) for i, r in enumerate(matrix) for j, v in enumerate(r[1:]) if i != j]
    assert sum(off_diagonal) == 0 and sum(int(v) for r in matrix for v in r[1:]) == len(cases)


def test_mdrd_reclassification_matrix_covers_the_compared_cases(built_site):
    text = page(built_site, "impact/mdrd-gfr--ckd-epi-2021.html")
    compared = cases_table(text)["compared (both computed)"]
    matrix = table_after(text, "reclassification")
    assert sum(int(v) for r in matrix for v in r[1:]) == compared
    # KDIGO's six GFR categories, G1 to G5, as the rows (from) and the columns (to)
    assert [r[0].split()[0] for r in matrix] == ["G1", "G2", "G3a", "G3b", "G4", "G5"]


def test_calculator_pages_link_their_impact_reports(built_site):
    assert 'href="../impact/mdrd-gfr--ckd-epi-2021.html"' in page(built_site, "calculators/mdrd-gfr.html")
    succ = page(built_site, "calculators/pooled-cohort-equations.html")
    assert 'href="../impact/framingham-hard-chd--pooled-cohort-equations.html"' in succ
