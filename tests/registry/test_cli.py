"""The `formula` command line on the real registry: list, show, history, diff, schema, lock, release."""
from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from cli.main import main
from registry import versions as ver
from registry.loader import load
from tests.helpers import SHIPPED_ROOT, solo


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture()
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy whose signed maintainer may release at once ($FORMULA_SIGNING_KEY; tests.helpers.solo)."""
    for d in ("formulas", "guidelines"):
        shutil.copytree(SHIPPED_ROOT / d, tmp_path / d)
    solo(tmp_path, monkeypatch)
    return tmp_path


def test_list_json_fields_and_paper_counts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--format", "json")
    assert code == 0
    rows = json.loads(out)
    bench = [r for r in rows if r["medcalc_id"] is not None]
    assert len(bench) == 55
    for key in ("slug", "medcalc_id", "name", "category", "output", "intended_use", "concern", "audit_group",
                "completeness", "successors", "active_version"):
        assert all(key in r for r in rows), key
    concerns = Counter(r["concern"] for r in bench)
    # the paper's Table 11: 16 concerns by type, 39 with none
    assert concerns == {"none": 39, "replaced_by_guideline": 4, "jurisdiction_dependent": 1,
                        "use_specific_caveat": 4, "contested_coefficient": 4, "newer_version_exists": 3}
    assert Counter(r["audit_group"] for r in bench) == {"replaced": 4, "other": 12, "none": 39}
    # Tables 21 and 22: 10 wrong, 18 incomplete, 27 complete
    assert Counter(r["completeness"] for r in bench) == {"wrong": 10, "incomplete": 18, "complete": 27}
    replaced = {r["slug"] for r in bench if r["audit_group"] == "replaced"}
    assert replaced == {"framingham-hard-chd", "mdrd-gfr", "meld-na", "sirs-criteria"}
    # Table 11's no-issue group by intended use
    uses = Counter(r["intended_use"] for r in bench if r["concern"] == "none")
    assert uses == {"diagnosis": 15, "prognosis": 8, "screening": 4, "staging": 3, "dating": 3, "dosing": 2,
                    "arithmetic identity": 2, "conversion": 2}


def test_list_filters(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--format", "json", "--group", "replaced")
    assert code == 0 and len(json.loads(out)) == 4
    code, out, _ = run(capsys, "list", "--format", "json", "--concern", "contested_coefficient")
    assert {r["slug"] for r in json.loads(out)} == {"adjusted-body-weight", "free-water-deficit",
                                                    "ideal-body-weight", "sodium-correction-hyperglycemia"}
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert "calculators\nconcern: " in out and "audit group: " in out


def test_replacement_links(capsys: pytest.CaptureFixture[str]) -> None:
    rows = {r["slug"]: r for r in json.loads(run(capsys, "list", "--format", "json")[1])}
    assert "ckd-epi-2021" in rows["mdrd-gfr"]["successors"]
    assert "sofa" in rows["sirs-criteria"]["successors"]
    assert len(rows["framingham-hard-chd"]["successors"]) >= 2
    # the two successors held in the registry are linked by slug, and the links resolve to entries
    assert "meld-3-0" in rows["meld-na"]["successors"]
    assert "cha2ds2-va" in rows["cha2ds2-vasc"]["successors"]
    for slug in ("meld-3-0", "cha2ds2-va"):
        assert slug in rows and rows[slug]["medcalc_id"] is None and rows[slug]["concern"] == "none"


def test_show_is_readable(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "mdrd-gfr")
    assert code == 0
    assert "MDRD GFR Equation" in out and "replaced_by_guideline" in out and "ckd-epi-2021" in out
    code, out, _ = run(capsys, "show", "2")
    assert "female_factor = 0.85" in out
    active = load(SHIPPED_ROOT).get("2").active.version
    assert f"Current text (version {active};" in out and "Sex factor: 1 for a man, 0.85 for a woman." in out
    code, _, err = run(capsys, "show", "no-such")
    assert code == 1 and "unknown calculator 'no-such'" in err


def test_schema_is_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "schema")
    schema = json.loads(out)
    assert code == 0 and schema["title"] == "Calculator" and "versions" in schema["properties"]
    assert schema["additionalProperties"] is False


def test_history_and_release_and_diff(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    slug = "ideal-body-weight"
    old = load(root).calculators[slug].active.version
    new = ver.bump(old, "minor")
    path = root / "formulas" / f"{slug}.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("value: 2.3", "value: 2.5"), encoding="utf-8")
    code, out, _ = run(capsys, "validate", "--root", str(root))
    assert code == 1 and "changed without a new version" in out
    # its dependants name it (their answers move with it): released together, or not at all
    assert out.count("[R-LOCK-DEPENDENCY]") == 2, out
    code, out, err = run(capsys, "release", slug, "--reason", "test a new slope", "--root", str(root))
    assert code == 1 and "--with-dependants" in err
    code, out, err = run(capsys, "release", slug, "--reason", "test a new slope", "--root", str(root),
                         "--with-dependants")
    assert code == 0, err
    assert f"released {new} (was {old})" in out
    assert run(capsys, "validate", "--root", str(root))[0] == 0
    code, out, _ = run(capsys, "history", slug, "--root", str(root), "--format", "json")
    hist = json.loads(out)
    assert [(h["version"], h["status"]) for h in hist[-2:]] == [(old, "superseded"), (new, "active")]
    assert hist[-1]["changelog"] == "test a new slope"
    code, out, _ = run(capsys, "diff", slug, old, new, "--root", str(root))
    assert code == 0
    assert "constant kg_per_inch_over_base: 2.3 -> 2.5" in out
    # releasing again with no edit is refused
    code, _, err = run(capsys, "release", slug, "--reason", "again", "--root", str(root))
    assert code == 1 and "nothing to release" in err


def test_superseded_snapshot_is_immutable(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    slug = "ideal-body-weight"
    assert run(capsys, "fix", slug, "--set", "kg_per_inch_over_base=2.5", "--reason", "r", "--root", str(root),
               "--with-dependants")[0] == 0
    first = load(root).calculators[slug].versions[0].version  # superseded now
    snap = root / "formulas" / "history" / slug / f"{first}.yaml"
    snap.write_text(snap.read_text(encoding="utf-8").replace("value: 2.3", "value: 2.2"), encoding="utf-8")
    code, out, _ = run(capsys, "validate", "--root", str(root))
    assert code == 1 and f"snapshot formulas/history/{slug}/{first}.yaml does not match its hash" in out
    assert "[R-SNAPSHOT]" in out


def test_fix_refuses_unknown_constant(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "fix", "ideal-body-weight", "--set", "nope=1", "--reason", "r", "--root", str(root))
    assert code == 1 and "has no constant 'nope'" in err
    code, _, err = run(capsys, "fix", "ideal-body-weight", "--set", "base_height=tall", "--reason", "r",
                       "--root", str(root))
    assert code == 1 and "'tall' is not a number" in err


def test_lock_adds_only_new_versions(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lock = root / "formulas" / "REGISTRY.lock"
    before = lock.read_text(encoding="utf-8")
    code, out, _ = run(capsys, "lock", "--root", str(root))
    assert code == 0 and out.startswith(f"registry: {root} (given by --root)\nlocked 0 new versions")
    assert lock.read_text(encoding="utf-8") == before


def test_review_records_a_signoff_without_a_new_version(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    n_calcs = len(load(root).calculators)  # the registry size: benchmark calculators and successors
    assert n_calcs > 55
    code, out, _ = run(capsys, "due", "--root", str(root), "--on", "2026-12-01", "--format", "json")
    assert code == 0 and len(json.loads(out)) == n_calcs  # nothing reviewed yet: benchmark and successors
    code, out, err = run(capsys, "review", "mdrd-gfr", "--by", "author",
                         "--date", "2026-12-01", "--root", str(root))
    assert code == 0, err
    assert "next review due 2027-12-01" in out
    assert run(capsys, "validate", "--root", str(root))[0] == 0  # governance data is not content
    hist = json.loads(run(capsys, "history", "mdrd-gfr", "--root", str(root), "--format", "json")[1])
    active = [h for h in hist if h["status"] == "active"]  # the sign-off lands on the active version only
    assert len(active) == 1 and active[0]["next_review"] == "2027-12-01"
    assert all(h["next_review"] == "" for h in hist if h["status"] != "active")
    due = json.loads(run(capsys, "due", "--root", str(root), "--on", "2026-12-02", "--format", "json")[1])
    assert "mdrd-gfr" not in {r["slug"] for r in due} and len(due) == n_calcs - 1
    due = json.loads(run(capsys, "due", "--root", str(root), "--on", "2027-12-01", "--format", "json")[1])
    assert "mdrd-gfr" in {r["slug"] for r in due}
    code, _, err = run(capsys, "review", "mdrd-gfr", "--date", "2026-12-01",
                       "--next-due", "2026-11-01", "--root", str(root))
    assert code == 1 and "must come after" in err


def test_show_says_a_default_in_words_and_whose_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 50: Centor's `Cough Absent` defaults to true: `show` says "yes" and that the registry assumes it."""
    from tests.helpers import run

    code, out, _ = run(capsys, "show", "centor-mcisaac")
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("  - Cough Absent:"))
    assert "optional (when absent: yes, the registry's default)" in " ".join(out.split()), line
    assert "True" not in out
