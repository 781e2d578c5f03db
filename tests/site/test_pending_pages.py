"""The site shows what awaits approval, on the overview and on the calculator's page."""
from __future__ import annotations

from pathlib import Path

from formula_site.registry_pages import AuditInputs, calculator_page, changelog_page, overview
from registry import clock
from registry.governance.changelog import changelog
from registry.loader import load
from tests.helpers import committee
from tests.registry.helpers import NEW, SODIUM, copy_registry, formula


def test_awaiting_approval_on_the_overview_and_the_calculator_page(capsys, tmp_path: Path) -> None:
    root = copy_registry(tmp_path)
    people = committee(root)
    reg = load(root)
    page = overview(reg, on=clock.today(), package_version="t", runs=[], changes=changelog(reg))
    assert "## Awaiting approval" in page and "Nothing is waiting" in page
    code, _, err = formula(capsys, root, "fix", SODIUM, "--set", "correction_per_mg_dl_glucose=0.016",
                           "--label", "correction_per_mg_dl_glucose=Katz factor", "--reason",
                           "Katz factor", "--draft", *people.args("author"))
    assert code == 0, err
    reg = load(root)
    page = overview(reg, on=clock.today(), package_version="t", runs=[], changes=changelog(reg))
    section = page.split("## Awaiting approval", 1)[1].split("## Latest changes", 1)[0]
    assert SODIUM in section and NEW in section and "0.024 -&gt; 0.016" in section
    assert "R. Maintainer (clinical informatician; verified, key SHA256:" in section
    calc = calculator_page(reg, reg.calculators[SODIUM], audits=AuditInputs(), on=clock.today(), accuracy=[])
    assert "## Awaiting approval" in calc and f"Version {NEW} (awaiting approval (0 of 1))" in calc
    assert "not recorded" not in changelog_page(changelog(reg))
