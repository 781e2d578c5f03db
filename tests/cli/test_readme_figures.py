"""The documentation's figures stay true (issue 39): every count the README, the user guide (docs/guide) or the
benchmarks' page (bench/README.md) states that the code can give is derived here from the code and compared; every
measured figure (a timing, a ratio) names the command it came from and the date, and that command exists and
accepts the flags given. A count of tests is not stated at all. (Below, README is all of that text, tests.docs.pages.)"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from registry.loader import PROJECT_ROOT, get_registry
from tests.docs.pages import documentation

README = documentation()
WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


def _int(text: str) -> int:
    return WORDS[text.lower()] if text.lower() in WORDS else int(text.replace(",", ""))


def _stated(pattern: str) -> list[int]:
    """Every number the README states in this context (the pattern's first group); at least one."""
    found = [_int(m.group(1)) for m in re.finditer(pattern, README)]
    assert found, f"the README no longer says {pattern!r}: drop it here, or say where the figure went"
    return found


def _benchmark() -> list:
    return [c for c in get_registry().calculators.values() if c.medcalc_id is not None]


def test_calculator_counts_are_the_registrys() -> None:
    reg = get_registry()
    total, bench = len(reg.calculators), len(_benchmark())
    for pattern in (r"list its (\d+) calculators", r"registry now holds (\d+) calculators",
                    r"All (\d+) calculators are columnar", r"lists all (\d+) calculators", r"for \d+ of (\d+) calculators"):
        assert set(_stated(pattern)) == {total}, pattern
    for pattern in (r"benchmark's (\d+) calculators", r"the benchmark's\s+(\d+) and \d+ successor",
                    r"covers all (\d+) calculators", r"(\d+) shipped one-shot rows", r"the (\d+) one-shot rows"):
        assert set(_stated(pattern)) == {bench}, pattern
    for pattern in (r"\b(\d+|two|three|four|five|six|seven|eight|nine) successor and alternative (?:formulas|entries)",):
        assert set(_stated(pattern)) == {total - bench}, pattern


def test_the_papers_audit_counts_are_the_registrys() -> None:
    """The registry carries the paper's audit (Table 11's concerns, Tables 21-22's completeness); the README's
    summary of it must be what the registry holds."""
    concerns = Counter(c.literature_audit.concern.value for c in _benchmark())
    status = Counter(c.completeness.status.value for c in _benchmark())
    m = re.search(r"Table 11's (\d+)\s+literature concerns \((\d+) replaced by a guideline, (\d+) jurisdiction "
                  r"dependent, (\d+) use-specific\s+caveats, (\d+) contested coefficients, (\d+) with a newer version\)",
                  README)
    assert m, "the README's summary of Table 11 moved: update this test"
    assert [int(x) for x in m.groups()] == [
        sum(n for k, n in concerns.items() if k != "none"), concerns["replaced_by_guideline"],
        concerns["jurisdiction_dependent"], concerns["use_specific_caveat"], concerns["contested_coefficient"],
        concerns["newer_version_exists"]]
    m = re.search(r"\((\d+) wrong, (\d+) incomplete, (\d+) complete\)\. The paper counts the (\d+)\s+no-concern", README)
    assert m
    assert [int(x) for x in m.groups()] == [status["wrong"], status["incomplete"], status["complete"], concerns["none"]]


def test_reference_case_counts_are_the_shipped_files() -> None:
    from solver.data import ONE_SHOT, REFERENCE_CASES, read_cases

    n = len(read_cases(REFERENCE_CASES))
    for pattern in (r"all ([\d,]+) cases of\s+`solver/embedded/reference_cases\.jsonl`", r"the ([\d,]+) reference cases:",
                    r"over the ([\d,]+) shipped reference cases"):
        assert set(_stated(pattern)) == {n}, pattern
    import csv

    with open(ONE_SHOT, encoding="utf-8", newline="") as fh:
        assert sum(1 for _ in csv.DictReader(fh)) == len(_benchmark())  # "the 55 one-shot rows" (above)


def test_the_deviations_line_is_what_the_command_prints_today(capsys) -> None:
    """The guide quotes `formula audit deviations`'s summary line; the command, run now, prints that line."""
    from cli.main import main

    block = re.search(r"\$ formula audit deviations[^\n]*\n(?:.*\n)*?\s*(\d+ deviations in .*)\n", README)
    assert block, "the README no longer quotes `formula audit deviations`: update this test"
    assert main(["audit", "deviations"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if " deviations in " in x)
    assert block.group(1).strip() == line.strip()


def test_the_embedded_runs_tallies_are_the_stored_runs_and_current() -> None:
    """`gold-solve` 2200/2200 and the others: the stored runs' own rows, and runs of today's registry (a stale run
    would make the README state yesterday's figure)."""
    from registry.versions import lock_digest

    current = lock_digest(get_registry().lock_path)
    for arm, right, total in re.findall(r"`(gold-solve[-a-z]*)` (\d+)/(\d+)", README):
        d = PROJECT_ROOT / "results" / "embedded" / arm
        rows = [json.loads(x) for x in (d / "results.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
        assert (sum(bool(r["correct"]) for r in rows), len(rows)) == (int(right), int(total)), arm
        manifest = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["registry_lock_digest"] == current, f"{arm} is stale: regenerate it (README, Embedded results)"


def test_no_test_count_is_stated() -> None:
    """A count of tests ("3,248 passed") goes stale with every commit and no test can hold it: the README says
    how to run the suite, not how many tests it has."""
    assert not re.search(r"\b\d[\d,]* (?:tests? )?(?:passed|failed|skipped)\b|\b\d[\d,]{2,} tests\b", README)


# Measured figures: a command and a date each, and the command takes the flags given


BENCH = re.compile(r"`python3? (bench/[a-z_]+\.py)((?:\s+--?[a-z][-a-z0-9]*(?: [0-9]+)?)*)`")
FLAG = re.compile(r"`(--[a-z][-a-z0-9]*)(?: [0-9]+)?((?: --[a-z][-a-z0-9]*(?: [0-9]+)?)*)`")
MEASURE = re.compile(r"\d(?:\.\d+)? ?(?:s|ms|min)\b|\d(?:\.\d+)?x\b|\b(?:rows|cases)/s\b")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def _blocks() -> list[str]:
    """The README's paragraphs and list items (a code block goes with the paragraph that introduces it)."""
    out: list[str] = []
    for part in re.split(r"\n\s*\n(?!\s*```|\s{4,}\S)", README):
        out += re.split(r"\n(?=- )", part)
    return out


@cache
def _options(script: str) -> frozenset[str]:
    """The options a bench script's --help lists."""
    res = subprocess.run([sys.executable, str(PROJECT_ROOT / script), "--help"], capture_output=True, text=True,
                         timeout=120, cwd=PROJECT_ROOT)
    assert res.returncode == 0, f"{script} --help: {res.stderr[-500:]}"
    return frozenset(re.findall(r"(?<![\w-])(--?[a-z][-a-z0-9]*)", res.stdout))


def _measured_blocks() -> list[tuple[str, list[str]]]:
    out = []
    for block in _blocks():
        scripts = [m.group(1) for m in BENCH.finditer(block)]
        if scripts and MEASURE.search(block):
            out.append((block, scripts))
    return out


def test_measured_figures_name_their_command_and_date() -> None:
    blocks = _measured_blocks()
    assert len(blocks) >= 6  # bench/cli.py, library.py, compute.py, columnar.py, stream.py, stats.py, runner.py
    undated = [b[:120] for b, _ in blocks if not DATE.search(b)]
    assert not undated, "each measured figure says when it was measured (YYYY-MM-DD):\n" + "\n".join(undated)


@pytest.mark.parametrize("script", sorted({m.group(1) for m in BENCH.finditer(README)}))
def test_each_cited_bench_command_exists_and_takes_its_flags(script: str) -> None:
    assert (PROJECT_ROOT / script).is_file(), script
    options = _options(script)
    for block, scripts in ((b, [m.group(1) for m in BENCH.finditer(b)]) for b in _blocks()):
        if script not in scripts:
            continue
        cited = [m.group(2) for m in BENCH.finditer(block) if m.group(1) == script]
        if scripts == [script] and "`formula " not in block:  # a flag on its own (`--repeat 9`): the block's script
            cited += [m.group(1) + m.group(2) for m in FLAG.finditer(block)]
        for flags in cited:
            for flag in re.findall(r"--?[a-z][-a-z0-9]*", flags):
                assert flag in options, f"the README runs `{script} {flags.strip()}`, but {script} has no {flag}"


def test_site_builds_final_line_reports_its_wall_time(capsys, monkeypatch, tmp_path: Path) -> None:
    """`formula site build` ends with how long it took; the README's first command is that build."""
    from formula_site import site_cli
    from formula_site.build import BuildResult

    monkeypatch.setattr(site_cli, "_build", lambda args: BuildResult(tmp_path, 86, 8, 151, 12.34))
    import argparse

    assert site_cli.cmd_build(argparse.Namespace(root=None)) == 0
    last = capsys.readouterr().out.rstrip("\n").splitlines()[-1]
    assert last == "built 86 pages (8 runs, 151 FHIR resources) in 12.3 s"


def test_the_embedded_public_runs_figures_are_the_report_tables() -> None:
    """The five MedCalc-Bench runs: rows, verdict differences, accuracy per audit group and the paired gaps the
    README quotes are what `formula report tables --draws 10000 --seed 0` computes from the embedded runs."""
    from audit.tables import build_report

    base = PROJECT_ROOT / "results" / "embedded" / "medcalc-bench-2024"
    table = re.findall(r"^\| ([a-z0-9.-]+) \(([\d,]+)\) \| ([\d.]+) \| ([\d.-]+) \| ([\d.-]+) \| ([\d.-]+) \|$", README,
                       re.M)
    assert len(table) == 5, "the README's table of the five public runs moved: update this test"
    names = [t[0] for t in table]
    runs = [base / n for n in names]
    total = sum(_int(t[1]) for t in table)
    assert f"**0 differences** ({total:,} rows)" in README
    for d in runs:
        assert json.loads((d / "manifest.json").read_text(encoding="utf-8"))["source"]["differences"] == []
    ref = "gpt-4o-mini-direct-answer"
    pairs = [(n, ref) for n in names if n != ref]
    rep = build_report(runs, compare=pairs, draws=10_000, seed=0, registry=get_registry())
    by_name = {Path(str(r["dir"])).name: r for r in rep["runs"]}

    def shown(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f}"

    for name, rows, acc, replaced, other, none in table:
        r = by_name[name]
        assert (r["n_rows"], shown(r["accuracy"])) == (_int(rows), acc), name
        assert [shown(r["by_group"].get(g)) for g in ("replaced", "other", "none")] == [replaced, other, none], name
    gaps = {g["a"]: g for g in rep["gaps"] if g["subset"] == "all"}
    stated = re.search(r"GPT-4 direct ([-+][\d.]+) pp \((\d+) cases, cluster 95% CI\s+\[([-+][\d.]+), ([-+][\d.]+)\]\), "
                       r"GPT-4 one-shot ([-+][\d.]+) pp \((\d+)\), GPT-3.5 direct ([-+][\d.]+) pp \((\d+)\), GPT-3.5 "
                       r"one-shot\s+([-+][\d.]+) pp \((\d+)\)", README)
    assert stated, "the README's paired gaps of the public runs moved: update this test"
    g4, g4o, g35, g35o = (gaps[n] for n in ("gpt-4-direct-answer", "gpt-4-one-shot", "gpt-3.5-turbo-direct-answer",
                                              "gpt-3.5-turbo-one-shot"))
    assert list(stated.groups()) == [
        f"{g4['gap_pp']:+.2f}", str(g4["n"]), f"{g4['cluster_ci'][0]:+.2f}", f"{g4['cluster_ci'][1]:+.2f}",
        f"{g4o['gap_pp']:+.2f}", str(g4o["n"]), f"{g35['gap_pp']:+.2f}", str(g35["n"]),
        f"{g35o['gap_pp']:+.2f}", str(g35o["n"])]


def test_the_impact_figures_are_what_formula_impact_computes() -> None:
    """The README's summary of `formula impact` on the shipped reference cases (published variant)."""
    from audit.impact import impact
    from solver.data import REFERENCE_CASES, read_cases

    reg, cases = get_registry(), read_cases(REFERENCE_CASES)

    def run(pred: str, succ: str, **kw: bool):
        rep = impact(reg, pred, succ, cases, **kw)
        return rep, rep.summary(), (rep.reclassified() if rep.band_tables else None)

    m = re.search(r"MDRD -> CKD-EPI 2021: (\d+) of (\d+) compared; CKD-EPI minus MDRD median ([-+][\d.]+) mL/min/1.73 "
                  r"m² \(p5 ([-+][\d.]+),\s+p95 ([-+][\d.]+)\); (\d+) of (\d+) change G-stage \((\d+) to a later stage, "
                  r"(\d+) to an earlier one\)", README)
    assert m
    rep, s, rec = run("mdrd-gfr", "ckd-epi-2021")
    assert list(m.groups()) == [str(rep.compared), str(rep.cases), f"{s['median']:+.2f}", f"{s['p5']:+.1f}",
                                f"{s['p95']:+.1f}", str(rec["moved"]), str(rep.compared), str(rec["up"]), str(rec["down"])]
    m = re.search(r"CHA2DS2-VASc -> CHA2DS2-VA: (\d+) of (\d+); every woman loses her sex point \((\d+) cases, -1\), "
                  r"and no case\s+changes anticoagulation category", README)
    assert m
    rep, s, rec = run("cha2ds2-vasc", "cha2ds2-va")
    assert [int(x) for x in m.groups()] == [rep.compared, rep.cases, s["lower"]]
    assert set(rep.differences) == {0.0, -1.0} and rec["moved"] == 0
    m = re.search(r"Framingham hard CHD -> PCE: (\d+) of (\d+) compared \((\d+) aged outside 40-79\).*?all (\d+) \(the\s+"
                  r"report says so\); (\d+) of (\d+) change 10-year risk category \((\d+) up, (\d+) down\)", README, re.S)
    assert m
    rep, s, rec = run("framingham-hard-chd", "pooled-cohort-equations")
    assert [int(x) for x in m.groups()] == [rep.compared, rep.cases, rep.cases - rep.compared, rep.compared,
                                            rec["moved"], rep.compared, rec["up"], rec["down"]]
    assert dict(rep.unavailable) == {"OutOfRange (age)": rep.cases - rep.compared}  # "aged outside 40-79"
    m = re.search(r"prevent-10-year` compares none of its (\d+) cases", README)
    assert m
    rep, _, _ = run("framingham-hard-chd", "prevent-10-year", unlinked=True)
    assert (rep.compared, rep.cases) == (0, int(m.group(1)))


def test_the_public_runs_size_is_the_checkouts() -> None:
    m = re.search(r"They add ([\d.]+) MB to the checkout", README)
    assert m
    folder = PROJECT_ROOT / "results" / "embedded" / "medcalc-bench-2024"
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    assert f"{size / 1e6:.2f}" == m.group(1)
