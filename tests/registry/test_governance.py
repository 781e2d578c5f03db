"""Governance commands on a copy of the registry: what they must refuse, and what they must keep."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from registry import clock
from registry.governance.changelog import ChangelogEntry, changelog
from registry.loader import load
from registry.versions import bump
from solver.library import OutOfRange, compute
from tests.helpers import Committee, keys_of, maintained, solo
from tests.registry.helpers import NEW, OLD, SODIUM, SODIUM_VERSIONS, copy_registry, fingerprint, formula, problems

TODAY = clock.today()


@pytest.fixture()
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy whose signed maintainer ($FORMULA_SIGNING_KEY) may release at once: these tests are not about approval."""
    root = copy_registry(tmp_path)
    solo(root, monkeypatch)
    return root


@pytest.fixture()
def people(root: Path) -> Committee:
    return keys_of(root)


def _yaml(root: Path, slug: str = SODIUM) -> str:
    return (root / "formulas" / f"{slug}.yaml").read_text(encoding="utf-8")


def test_fix_keeps_comments_order_and_writes_no_anchors(capsys, root: Path) -> None:
    path = root / "formulas" / f"{SODIUM}.yaml"
    path.write_text("# maintained by the renal pharmacy group\n" + _yaml(root).replace(
        "intended_use: diagnosis", "intended_use: diagnosis  # see Table 11"), encoding="utf-8")
    before = _yaml(root)
    code, _, err = formula(capsys, root, "fix", SODIUM, "--set", "correction_per_mg_dl_glucose=0.016",
                           "--label", "correction_per_mg_dl_glucose=Katz factor", "--reason", "Katz factor")
    assert code == 0, err
    code, _, err = formula(capsys, root, "review", SODIUM, "--by", "author")
    assert code == 0, err
    after = _yaml(root)
    assert "# maintained by the renal pharmacy group" in after and "# see Table 11" in after
    assert "# a guard on edits" in after
    assert "&id" not in after and "*id" not in after
    # every line of the old file is still there, in order, but the three the release changes
    old_lines = before.splitlines()
    kept = [ln for ln in old_lines if ln in after.splitlines()]
    assert len(old_lines) - len(kept) <= 2, set(old_lines) - set(kept)
    assert problems(root) == []


def test_repeated_set_applies_every_assignment(capsys, root: Path) -> None:
    code, _, err = formula(capsys, root, "fix", SODIUM, "--set", "correction_per_mg_dl_glucose=0.016",
                           "--set", "reference_glucose=90", "--label", "correction_per_mg_dl_glucose=Katz factor", "--reason", "both")
    assert code == 0, err
    c = load(root).calculators[SODIUM]
    assert c.constants["correction_per_mg_dl_glucose"].value == 0.016
    assert c.constants["reference_glucose"].value == 90
    assert [v.version for v in c.versions] == SODIUM_VERSIONS + [NEW]


@pytest.mark.parametrize("argv, message", [
    (["--set", "reference_glucose=90", "--reason", ""], "--reason"),
    (["--set", "reference_glucose=90", "--reason", "x", "--date", "2026-13-01"], "real date"),
    (["--set", "correction_per_mg_dl_glucose=nan", "--reason", "x"], "not a finite number"),
    (["--set", "correction_per_mg_dl_glucose=inf", "--reason", "x"], "not a finite number"),
    (["--set", "correction_per_mg_dl_glucose=-1", "--reason", "x"], "greater than 0"),
    (["--set", "correction_per_mg_dl_glucose=1e308", "--reason", "x"], "above the allowed maximum"),
    (["--set", "reference_glucose=ninety", "--reason", "x"], "not a number"),
    (["--set", "no_such_constant=1", "--reason", "x"], "no constant"),
    (["--set", "reference_glucose=90", "--set", "reference_glucose=95", "--reason", "x"], "twice"),
    (["--set", "reference_glucose=90", "--reason", "x", "--by", "someone-else"], "not who this key is"),
    (["--set", "reference_glucose=90", "--reason", "x", "--role", "chair"], "not one of author's roles"),
    (["--set", "reference_glucose=90", "--reason", "x", "--date", "2000-01-01"], "before"),
])
def test_bad_fix_arguments_are_refused_before_anything_is_written(capsys, root: Path, argv, message) -> None:
    before = fingerprint(root)
    code, _, err = formula(capsys, root, "fix", SODIUM, *argv)
    assert code == 1 and message in err and "Traceback" not in err
    assert fingerprint(root) == before


def test_fix_refuses_while_another_calculator_has_unreleased_edits(capsys, root: Path) -> None:
    bmi = root / "formulas" / "mean-arterial-pressure.yaml"
    text = bmi.read_text(encoding="utf-8")
    import re

    edited = re.sub(r"(value: )(\d+(\.\d+)?)", lambda m: m.group(1) + str(float(m.group(2)) + 1), text, count=1)
    assert edited != text
    bmi.write_text(edited, encoding="utf-8")
    before = fingerprint(root)
    code, _, err = formula(capsys, root, "fix", SODIUM, "--set", "reference_glucose=90", "--reason", "x")
    assert code == 1 and "mean-arterial-pressure" in err
    code, _, err = formula(capsys, root, "texts", "render")
    assert code == 1 and "mean-arterial-pressure" in err and "unreleased" in err
    assert fingerprint(root) == before


@pytest.mark.parametrize("content", ["", "# only a comment\n"])
def test_empty_calculator_file_is_an_error_naming_it(capsys, root: Path, content: str) -> None:
    (root / "formulas" / f"{SODIUM}.yaml").write_text(content, encoding="utf-8")
    found = problems(root)
    assert any(f"formulas/{SODIUM}.yaml" in p and "empty" in p for p in found), found
    for argv in (["validate"], ["texts", "render"], ["audit", "completeness"]):
        code, out, err = formula(capsys, root, *argv)
        assert code == 1 and f"{SODIUM}.yaml" in out + err, argv


def test_review_dates_are_checked(capsys, root: Path) -> None:
    future = (TODAY + dt.timedelta(days=30)).isoformat()
    code, _, err = formula(capsys, root, "review", SODIUM, "--date", future)
    assert code == 1 and "future" in err
    code, _, err = formula(capsys, root, "review", SODIUM, "--date", "2020-01-01")
    assert code == 1 and "took effect" in err
    code, _, err = formula(capsys, root, "review", SODIUM, "--date", TODAY.isoformat())
    assert code == 0, err
    effective = load(root).calculators[SODIUM].active.effective
    if effective < TODAY:
        code, _, err = formula(capsys, root, "review", SODIUM, "--date",
                               effective.isoformat())
        assert code == 1 and "last review" in err


@pytest.mark.parametrize("value, message", [("true", "valid integer"), ("'26'", "valid integer"),
                                            ("99", "after release")])
def test_benchmark_id_is_strict_and_fixed(root: Path, value: str, message: str) -> None:
    p = root / "formulas" / f"{SODIUM}.yaml"
    p.write_text(p.read_text(encoding="utf-8").replace("medcalc_id: 26", f"medcalc_id: {value}"), encoding="utf-8")
    found = problems(root)
    assert any("medcalc_id" in x and message in x for x in found), found


def test_solve_refuses_duplicate_entity_keys(capsys) -> None:
    from cli.main import main

    code = main(["solve", "--calculator", "26", "--entities",
                 '{"Sodium": [130, "mEq/L"], "Glucose": [400, "mg/dL"], "Sodium": [140, "mEq/L"]}'])
    err = capsys.readouterr().err
    assert code == 1 and "'Sodium' twice" in err


def test_implausible_bmi_is_refused_as_published_and_warned_as_benchmark() -> None:
    ents = {"weight": [0.3, "kg"], "height": [2.8, "m"]}  # each within its own range
    with pytest.raises(OutOfRange, match="bmi-range"):
        compute("body-mass-index", ents, variant="published")
    r = compute("body-mass-index", ents, variant="benchmark")
    assert r.value < 1 and r.warnings and "bmi-range" in r.warnings[0]
    assert compute("body-mass-index", {"weight": [70, "kg"], "height": [175, "cm"]}, variant="benchmark").warnings == []


def test_no_tracebacks_for_bad_paths(capsys, root: Path) -> None:
    readme = Path(__file__).resolve().parents[2] / "README.md"
    code, _, err = formula(capsys, root, "texts", "changed", "--since", str(readme))
    assert code == 1 and "not a catalogue index" in err
    code, _, err = formula(capsys, root, "texts", "render", "--out", str(readme))
    assert code == 1 and "is a file" in err


def test_due_overdue_and_json_nulls(capsys, root: Path) -> None:
    code, out, _ = formula(capsys, root, "due", "--format", "json")
    rows = json.loads(out)
    assert code == 0 and rows and all(r["last_review"] is None and r["next_review"] is None for r in rows)
    formula(capsys, root, "review", SODIUM, "--next-due",
            (TODAY + dt.timedelta(days=10)).isoformat())
    later = (TODAY + dt.timedelta(days=20)).isoformat()
    code, out, _ = formula(capsys, root, "due", "--overdue", "--on", later, "--format", "json")
    assert [r["slug"] for r in json.loads(out)] == [SODIUM]
    code, out, _ = formula(capsys, root, "due", "--overdue", "--format", "json")
    assert json.loads(out) == []


def test_wide_tables_fit_columns(capsys, root: Path, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = formula(capsys, root, "list")
    table = out.split("\n\n")[0].splitlines()
    assert code == 0 and all(len(line) <= 80 for line in table)
    code, out, _ = formula(capsys, root, "list", "--format", "json")
    files = [f for f in (root / "formulas").glob("*.yaml") if f.name != "units.yaml"]
    assert len(json.loads(out)) == len(files)  # JSON is never cut to the terminal


def test_stale_results_name_changed_texts(capsys, root: Path, tmp_path: Path) -> None:
    index = json.loads((root / "formulas" / "texts" / "index.json").read_text(encoding="utf-8"))
    entry = {e["slug"]: e for e in index["texts"]}
    results = tmp_path / "results.jsonl"
    rows = [{"row_number": 1, "calculator_id": 26, "seed": 0, "arm": "program-solve",
             "text_version": entry[SODIUM]["version"], "text_sha256": entry[SODIUM]["sha256"]},
            {"row_number": 2, "calculator_id": 2, "seed": 0, "arm": "program-solve",
             "text_version": entry["creatinine-clearance-cockcroft-gault"]["version"],
             "text_sha256": entry["creatinine-clearance-cockcroft-gault"]["sha256"]},
            {"row_number": 3, "slug": SODIUM, "text_version": OLD}]
    results.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    code, out, _ = formula(capsys, root, "stale", str(results), "--format", "json")
    assert code == 0 and json.loads(out) == []
    formula(capsys, root, "fix", SODIUM, "--set", "reference_glucose=90", "--reason", "x")
    code, out, _ = formula(capsys, root, "stale", str(results), "--format", "json")
    stale = json.loads(out)
    assert [r["line"] for r in stale] == [1, 3]
    assert "text changed" in stale[0]["why"] and f"{OLD} -> {NEW}" in stale[0]["why"]
    results.write_text("not json\n", encoding="utf-8")
    code, _, err = formula(capsys, root, "stale", str(results))
    assert code == 1 and "is not a JSON-lines results file" in err and len(err.splitlines()) == 1


def test_future_effective_date_keeps_the_old_version_active(capsys, tmp_path: Path, monkeypatch) -> None:
    root = copy_registry(tmp_path / "four-eyes")
    people = maintained(root, monkeypatch)  # four eyes: the author's fix waits for someone else's approval
    tomorrow = (TODAY + dt.timedelta(days=1)).isoformat()
    code, out, err = formula(capsys, root, "fix", SODIUM, "--set", "reference_glucose=90", "--reason", "x",
                             "--date", tomorrow)
    assert code == 0 and f"{OLD} stays active" in out and "by someone other than R. Maintainer (author)" in out, err
    assert f"effective {tomorrow} once approved" in out
    assert load(root).calculators[SODIUM].active.version == OLD
    assert compute(SODIUM, {"Sodium": [130, "mEq/L"], "Glucose": [400, "mg/dL"]},
                   registry=load(root), variant="benchmark").version == OLD
    assert problems(root) == []
    code, out, _ = formula(capsys, root, "activate")
    assert code == 0 and "no approved version" in out
    code, out, err = formula(capsys, root, "approve", SODIUM, NEW, *people.args("chair"), "--reason", "ok")
    assert code == 0 and f"stays active until {tomorrow}" in out, err
    code, out, _ = formula(capsys, root, "activate")
    assert code == 0 and "no approved version" in out  # approved, but its day has not come
    code, _, err = formula(capsys, root, "activate", "--on", tomorrow)
    assert code == 1 and "future" in err
    # the day comes (the registry's clock, registry.clock, reads its day from the environment)
    draft = root / "formulas" / "drafts" / f"{SODIUM}.yaml"
    monkeypatch.setenv(clock.ENV, tomorrow)
    code, out, err = formula(capsys, root, "activate")
    assert code == 0 and f"{SODIUM} {NEW}" in out, err
    assert load(root).calculators[SODIUM].active.version == NEW and not draft.exists()
    assert problems(root) == []


def test_release_with_dependants(capsys, root: Path) -> None:
    reg = load(root)
    users = sorted(s for s, c in reg.calculators.items() if "ideal-body-weight" in c.depends_on)
    assert users  # Cockcroft-Gault and adjusted body weight read it
    p = root / "formulas" / "ideal-body-weight.yaml"
    import re

    text = p.read_text(encoding="utf-8")
    m = re.search(r"male_base_weight:\n(?:.*\n)*?\s+value: ([\d.]+)", text)
    assert m
    p.write_text(text[:m.start(1)] + "50.1" + text[m.end(1):], encoding="utf-8")
    code, out, err = formula(capsys, root, "release", "ideal-body-weight", "--reason", "test", "--with-dependants")
    assert code == 0, err
    after = load(root)
    assert after.calculators["ideal-body-weight"].active.version == bump(
        load(copy_registry(root.parent / "fresh")).calculators["ideal-body-weight"].active.version, "minor")
    for s in users:
        assert after.calculators[s].active.version != reg.calculators[s].active.version, s
        assert "ideal-body-weight" in after.calculators[s].active.changelog
    assert problems(root) == []


def test_changelog_function_and_command(capsys, root: Path) -> None:
    before = len(changelog(load(root)))
    formula(capsys, root, "fix", SODIUM, "--set", "reference_glucose=90", "--reason", "why not")
    entries = changelog(load(root), since=TODAY)
    assert entries and isinstance(entries[0], ChangelogEntry)
    e = next(x for x in entries if x.slug == SODIUM)
    assert (e.version, e.status, e.released_by, e.role, e.reason) == (NEW, "active", "R. Maintainer",
                                                                      "clinical informatician", "why not")
    assert e.changes == ["constant reference_glucose: 100 -> 90 mg/dL"]
    assert len(changelog(load(root))) == before + 1
    code, out, _ = formula(capsys, root, "changelog", "--since", TODAY.isoformat(), "--format", "json")
    assert code == 0 and SODIUM in [x["slug"] for x in json.loads(out)]
    code, _, err = formula(capsys, root, "changelog", "--since", "no-such-ref")
    assert code == 1 and "neither a date" in err


def test_validate_names_a_damaged_catalogue_and_render_repairs_it(capsys, root: Path) -> None:
    texts = root / "formulas" / "texts"
    (texts / "body-mass-index.md").write_text("", encoding="utf-8")
    index = json.loads((texts / "index.json").read_text(encoding="utf-8"))
    index["texts"][0]["version"] = "0.9.0"
    (texts / "index.json").write_text(json.dumps(index), encoding="utf-8")
    found = problems(root)
    assert any("body-mass-index.md" in p and "empty" in p for p in found), found
    assert any(index["texts"][0]["slug"] in p and "0.9.0" in p for p in found), found
    code, _, err = formula(capsys, root, "texts", "render")
    assert code == 0, err
    assert problems(root) == []


def test_changelog_since_a_git_ref(capsys, root: Path) -> None:
    import subprocess

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "registry"], cwd=root, check=True)
    formula(capsys, root, "fix", SODIUM, "--set", "reference_glucose=90", "--reason", "after the tag")
    code, out, err = formula(capsys, root, "changelog", "--since", "HEAD", "--format", "json")
    assert code == 0, err
    assert [(e["slug"], e["version"]) for e in json.loads(out)] == [(SODIUM, NEW)]


def test_hand_edits_released_as_a_draft_leave_the_live_file_as_released(capsys, root: Path, people) -> None:
    path = root / "formulas" / f"{SODIUM}.yaml"
    released = path.read_text(encoding="utf-8")
    head, tail = released.replace("range: [10, 3000]", "range: [10, 2500]").rsplit("lowers the sodium.", 1)
    path.write_text(head + "lowers the sodium (a negative correction)." + tail, encoding="utf-8")  # the active text
    code, out, err = formula(capsys, root, "release", SODIUM, "--reason", "narrower glucose range", "--draft")
    assert code == 0 and f"drafted {NEW}" in out, err
    assert path.read_text(encoding="utf-8") == released  # users keep the released version, byte for byte
    assert problems(root) == []
    code, out, _ = formula(capsys, root, "diff", SODIUM, OLD, NEW)
    assert "+The correction applies" in out and "input Glucose range: [10, 3000] -> [10, 2500]" in out
    code, _, err = formula(capsys, root, "approve", SODIUM, NEW, *people.args("chair"), "--reason", "ok")
    assert code == 0, err
    c = load(root).calculators[SODIUM]
    assert c.input("Glucose").range == (10, 2500) and "negative correction" in c.active.text
    assert "negative correction" not in c.versions[0].text
    assert problems(root) == []
