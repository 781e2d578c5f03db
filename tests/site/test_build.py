"""The built report: every page there, the paper's counts, the stored runs as given, offline, links intact."""
from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from registry.loader import get_registry
from tests.site.helpers import NAMESPACE_HOSTS, URL_RE, benchmark_ids, header_after, page, rows, table_after


def test_every_page_is_built(built_site):
    reg = get_registry()
    for rel in ("index.html", "audits/literature.html", "audits/completeness.html", "audits/fidelity.html",
                "calculators/index.html", "lineage.html", "results/index.html", "changelog.html", "paper.html",
                "about.html", "impact/index.html"):
        assert (built_site.out / rel).is_file(), rel
    for slug in reg.calculators:
        assert (built_site.out / "calculators" / f"{slug}.html").is_file(), slug
    for svg in ("accuracy-by-group.svg", "coverage-accuracy.svg", "per-calculator.svg"):
        text = page(built_site, f"results/{svg}")
        assert text.lstrip().startswith("<?xml") and "<svg" in text, svg


def test_literature_audit_lists_the_papers_16_concerns(built_site):
    # The paper's Table 11: 16 concerns (4 replaced by a guideline, 1 jurisdiction dependent, 4
    # use-specific caveats, 4 contested coefficients, 3 with a newer version).
    body = rows(page(built_site, "audits/literature.html"))
    assert len(body) == 16
    concerns = [r[5] for r in body]
    for label, n in (("replaced by guideline", 4), ("jurisdiction dependent", 1), ("use-specific caveat", 4),
                     ("contested coefficient", 4), ("newer version exists", 3)):
        assert sum(c.startswith(label) for c in concerns) == n, label
    names = {r[0] for r in body}
    assert {"MELD Na (UNOS/OPTN)"} <= names


def test_completeness_audit_matches_the_papers_counts(built_site):
    # The paper's Tables 21 and 22: 10 wrong, 18 incomplete, 27 complete of the 55 texts.
    body = rows(page(built_site, "audits/completeness.html"))
    status = [r[2] for r in body if r[1] != "–"]
    assert len(status) == 55
    assert (status.count("wrong"), status.count("incomplete"), status.count("complete")) == (10, 18, 27)


def test_fidelity_audit_lists_every_recorded_deviation(built_site):
    reg = get_registry()
    body = rows(page(built_site, "audits/fidelity.html"))
    assert len(body) == sum(len(c.deviations) for c in reg.calculators.values())
    assert {r[1] for r in body} == {d.id for c in reg.calculators.values() for d in c.deviations}


def test_overview_counts_groups_and_names_the_lock_digest(built_site):
    from registry.versions import lock_digest

    text = page(built_site, "index.html")
    assert lock_digest(get_registry().lock_path) in text
    groups = dict((r[0], r[1]) for r in rows(text, 1))
    assert groups == {"Replaced by guideline": "4", "Other concern": "12", "No issue identified": "39"}


# The session's runs (tests/site/conftest.py): 55 calculators x 4 rows, one seed. gold-solve is right on
# every row; half-arm is right on k = 0 and 2, wrong on k = 1 and gives no answer on k = 3. The registry
# has 4 replaced, 12 other-concern and 39 no-issue benchmark calculators (the paper's Table 11).
N_GROUP = {"replaced": 4, "other": 12, "none": 39}


def test_results_accuracy_by_subset_and_group(built_site):
    text = page(built_site, "results/index.html")
    # issue 29: each run's own calculator counts, beside its accuracy (never the first run's for all runs)
    # issue 50: accuracy leads (a phone shows the first columns), the counts follow
    assert header_after(text, "accuracy") == ["Run", "all", "not replaced", "no issue identified", "Arm", "Rows",
                                              "Cases", "Seeds", "Calcs"]
    acc = [[c.replace("\xa0", " ") for c in r] for r in table_after(text, "accuracy")]
    assert [r[4:] for r in acc] == [["gold-solve", "220", "220", "1", "55"],
                                    ["half-arm", "220", "220", "1", "55"]]
    assert acc[0][:4] == ["gold-solve", "100.00 (55)", "100.00 (51)", "100.00 (39)"]
    assert acc[1][:4] == ["test-model · half-arm", "50.00 (55)", "50.00 (51)", "50.00 (39)"]
    assert header_after(text, "accuracy-by-audit-group") == ["Group", "gold-solve", "test-model · half-arm"]
    table13 = [[c.replace("\xa0", " ") for c in r] for r in table_after(text, "accuracy-by-audit-group")]
    assert table13 == [["Replaced by guideline", "100.00 (4)", "50.00 (4)"], ["Other concern", "100.00 (12)", "50.00 (12)"],
                       ["No issue identified", "100.00 (39)", "50.00 (39)"], ["All", "100.00 (55)", "50.00 (55)"]]
    for heading in ("by-category", "by-output-type"):
        cells = table_after(text, heading)
        assert all(c == "100.00" for c in cells[0][1:]) and all(c == "50.00" for c in cells[1][1:]), heading


def test_results_paired_gaps_per_calculator_set(built_site):
    text = page(built_site, "results/index.html")
    gaps = table_after(text, "paired-gaps")
    # half-arm - gold-solve: A right on 2 of 4 rows per calculator, B on all 4, so the gap is -50 pp on every
    # calculator and every calculator-resample gives -50 exactly; B alone is right on 2 rows per calculator.
    expected = [("all", 55), ("not replaced", 55 - N_GROUP["replaced"]), ("no issue identified", N_GROUP["none"])]
    assert [(g[0], g[1]) for g in gaps] == [("test-model · half-arm − gold-solve", s) for s, _ in expected]
    tests = table_after(text, "tests-and-clustering")
    assert [(t[0], t[1]) for t in tests] == [(g[0], g[1]) for g in gaps]
    for g, t, (_, calcs) in zip(gaps, tests, expected):
        assert g[2:9] == [str(4 * calcs), str(calcs), "50.00", "100.00", "-50.00", g[7], "[-50.00, -50.00]"]
        lo, hi = (float(x) for x in g[7].strip("[]").split(","))
        assert lo < -50 < hi  # the case interval: cases resampled, so it has width
        assert t[2:4] == ["0", str(2 * calcs)]  # discordant: A alone right never, B alone on k = 1 and 3
        assert t[4] == t[5] == t[6] == "<0.001"  # 0 against 2n discordant rows
    assert "How each statistic is computed" in text
    hybrid = table_after(text, "library-first-hybrids")
    assert hybrid[0][:3] == ["gold-solve first, test-model · half-arm fallback", "100.0", "100.00"]


def test_results_outcome_accounting(built_site):
    text = page(built_site, "results/index.html")
    out = table_after(text, "outcome-accounting")
    assert out[0][1:10] == ["220", "100.0", "0.0", "0.0", "0.0", "0.0", "0.0", "100.00", "100.00"]
    # 110 right, 55 wrong, 55 without an answer (no output); attempted accuracy 110 / 165; the date
    # calculators' rows follow the same 2-of-4 pattern
    assert out[1][1:10] == ["220", "50.0", "25.0", "25.0", "25.0", "0.0", "0.0", "66.67", "50.00"]
    kinds = table_after(text, "outcome-kinds-rows")
    assert header_after(text, "outcome-kinds-rows") == ["Run", "Rows", "answered", "no_answer"]
    assert [r[1:] for r in kinds] == [["220", "220", "0"], ["220", "165", "55"]]


def test_results_per_calculator_and_staleness(built_site):
    text = page(built_site, "results/index.html")
    per = table_after(text, "accuracy-per-calculator")
    assert len(per) == 55
    # gold-solve recorded each calculator's current text version, half-arm a version that never existed
    assert all(r[4].startswith("100.0 v") and "stale" not in r[4] for r in per)
    assert all(r[5] == "50.0 v0.0.1 stale" for r in per)
    # the gold run recorded the current lock digest, the other one a made-up digest
    assert text.count("the run used this registry") == 1 and text.count("the registry has changed since this run") == 1
    article = re.search(r"<article.*?</article>", text, re.S).group(0)
    assert "90.53" not in article and "28.25" not in article  # none of the paper's numbers


def test_paper_tables_are_apart_and_cited(built_site):
    text = page(built_site, "paper.html")
    assert "Not computed here" in text
    t1 = rows(text, 0)
    assert ["Program-Solve", "given", "given", "executor", "84.18", "75.31", "98.64", "90.53"] in t1
    t13 = rows(text, 2)
    assert t13[0] == ["Replaced by guideline", "4", "28.25", "71.00", "22.75", "36.50", "90.00", "25.00"]


def test_calculator_page_has_text_provenance_lineage_and_fhir(built_site):
    text = page(built_site, "calculators/meld-na.html")
    catalogue = (Path(get_registry().root) / "formulas" / "texts" / "meld-na.md").read_text(encoding="utf-8")
    assert html.escape(catalogue.strip().splitlines()[0]) in text  # the supplied text as rendered
    for heading in ("Inputs", "Constants", "Provenance", "Literature audit", "Completeness history",
                    "Replacements and lineage", "Version history", "Accuracy per arm"):
        assert f">{heading}<" in text, heading
    assert 'href="meld-3-0.html"' in text  # the successor's page
    assert 'href="../fhir/Library-meld-na-1.0.0.json"' in text
    assert "unverified" in text or "verified" in text
    acc = rows(text, len(re.findall(r"<table", text)) - 1)
    assert [r[1] for r in acc] == ["gold-solve", "half-arm"] and [r[4] for r in acc] == ["100.00", "50.00"]
    assert [r[5] for r in acc] == ["current", "stale the run used an older text"]


def _refs(text: str) -> list[str]:
    return re.findall(r'(?:src|href|srcset|action|poster|data)\s*=\s*"([^"]*)"', text)


def test_no_external_host_is_referenced(built_site):
    """Nothing in the built HTML and CSS loads from or links to another host; the theme's own JavaScript
    names a few hosts only in licence comments and in features this site does not use."""
    # Hosts in mkdocs-material's bundled JavaScript: licence and source comments (lunr and its language
    # packs), the mermaid and ResizeObserver polyfill loaders (used only for mermaid diagrams, which the
    # site has none of, and browsers without ResizeObserver), and the GitHub API (only with repo_url).
    theme_js_hosts = {"github.com", "snowball.tartarus.org", "code.google.com", "www.mozilla.org",
                      "en.wikipedia.org", "unpkg.com", "api.github.com", "developer.mozilla.org",
                      "clipboardjs.com", "bit.ly", "wiki.ecmascript.org", "wiki.commonjs.org", "underscorejs.org",
                      "tartarus.org", "people.mozilla.org", "narwhaljs.org", "msdn.microsoft.com", "lunrjs.com",
                      "docs.python.org", "chasen.org", "fontawesome.com"}
    bad = []
    for f in built_site.out.rglob("*"):
        if f.suffix not in (".html", ".css", ".js", ".svg"):
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        rel = f.relative_to(built_site.out).as_posix()
        if rel == "search/search_index.js":  # the offline plugin's copy of the search index (page text, not code)
            index = (built_site.out / "search" / "search_index.json").read_text(encoding="utf-8")
            assert text == "var __index = " + index, "search_index.js is not the search index alone"
            continue
        if f.suffix in (".html", ".svg"):
            refs = _refs(text) + re.findall(r"url\(\s*['\"]?([^'\")]+)", text)
            refs += re.findall(r'<script[^>]+src="([^"]+)"', text)
            bad += [f"{rel}: {r}" for r in refs if URL_RE.match(r.strip())]
        elif f.suffix == ".css":
            refs = re.findall(r"url\(\s*['\"]?([^'\")]+)", text) + re.findall(r"@import\s+['\"]([^'\"]+)", text)
            bad += [f"{rel}: {r}" for r in refs if URL_RE.match(r.strip())]
        else:
            hosts = set(re.findall(r"https?://([A-Za-z0-9.-]+)", text)) - NAMESPACE_HOSTS
            allowed = theme_js_hosts if rel.startswith("assets/javascripts/") else set()
            bad += [f"{rel}: {h}" for h in sorted(hosts - allowed)]
    assert not bad, bad


def test_every_internal_link_resolves(built_site):
    missing = []
    for f in built_site.out.rglob("*.html"):
        if f.name == "404.html":  # served for any path, so mkdocs writes its links from the site root
            continue
        for ref in _refs(f.read_text(encoding="utf-8")):
            u = urlparse(ref)
            if u.scheme or u.netloc or not u.path or ref.startswith("#"):
                continue
            target = (f.parent / unquote(u.path)).resolve()
            if not target.exists():
                missing.append(f"{f.relative_to(built_site.out)} -> {ref}")
    assert not missing, missing[:20]


def test_lineage_diagram_links_predecessors_to_successors(built_site):
    text = page(built_site, "lineage.html")
    svg = re.search(r"<svg[^>]*fr-lineage.*?</svg>", text, re.S).group(0)
    assert 'href="calculators/meld-na.html"' in svg and 'href="calculators/meld-3-0.html"' in svg
    assert 'href="calculators/cha2ds2-vasc.html"' in svg and 'href="calculators/cha2ds2-va.html"' in svg


@pytest.mark.parametrize("args, message", [
    (["site", "build", "--results", "/nonexistent/run"], "not a stored run"),
    (["site", "build", "--on", "yesterday"], "--on must be a date"),
    (["site", "build", "--compare", "nope:gold-solve"], "'nope' is not one of the runs given"),
    (["site", "build", "--compare", "gold-solve"], "expected A:B"),
])
def test_bad_arguments_are_clear_errors(capsys, args, message):
    from cli.main import main

    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("error:") and message in err and "Traceback" not in err


GOOD_ROW = '{"row_number": 1, "calculator_id": 2, "seed": 42, "outcome": "answered", "correct": true}'


@pytest.mark.parametrize("manifest, rows, message", [
    ("{not json", GOOD_ROW + "\n", "manifest.json: not readable JSON"),
    ("{}", '{"row_number": 1, "calculator_id": 2, "seed": 42, "outcome": "answered"}\n',
     "results.jsonl:1: missing field 'correct'"),
    ("{}", GOOD_ROW + "\n{oops\n", "results.jsonl:2: not valid JSON"),
    ("{}", GOOD_ROW.replace('"seed": 42', '"seed": "42"') + "\n", "results.jsonl:1: field 'seed' must be int"),
])
def test_a_bad_run_is_refused_with_its_file_and_line(tmp_path, capsys, manifest, rows, message):
    from cli.main import main

    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text(manifest)
    (run / "results.jsonl").write_text(rows)
    assert main(["site", "build", "--results", str(run), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error:") and message in err, err
    assert not (tmp_path / "out").exists()


def test_strict_mode_fails_on_a_broken_link(built_site, tmp_path):
    """mkdocs runs with --strict: one link to a page that does not exist stops the build (the same
    sources without it built fine for the session's site)."""
    import shutil

    from formula_site.build import SiteError, run_mkdocs
    from formula_site.registry_pages import ordered

    src = tmp_path / "src"
    shutil.copytree(built_site.out.parent / "site-src", src)
    with open(src / "about.md", "a", encoding="utf-8") as fh:
        fh.write("\nSee [the missing page](missing.md).\n")
    nav = {"Calculators": [{c.name: f"calculators/{c.slug}.md"} for c in ordered(get_registry())]}
    with pytest.raises(SiteError, match="Aborted with 1 warning"):
        run_mkdocs(src, tmp_path / "out", nav)


def test_a_folder_it_did_not_build_is_never_replaced(tmp_path, capsys):
    from cli.main import main

    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    assert main(["site", "build", "--out", str(out)]) == 1
    assert "not a site this command built" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "keep me"


def test_default_runs_are_every_run_under_results_embedded(tmp_path, monkeypatch):
    from formula_site import build
    from tests.site.helpers import make_run

    monkeypatch.setattr(build, "EMBEDDED_RESULTS", tmp_path / "embedded")
    assert build.default_runs() == []
    a = make_run(tmp_path / "embedded", "gold-solve", lambda cid, k: True, rows_per_calc=1)
    b = make_run(tmp_path / "embedded", "gold-solve-published", lambda cid, k: True, rows_per_calc=1)
    assert build.default_runs() == [a, b]


def test_runs_the_report_cannot_pair_are_shown_unpaired(tmp_path):
    """Runs over different seeds cannot be paired (audit.runs.pair refuses them): the site shows both, unpaired,
    with the report's reason."""
    from formula_site.build import build
    from tests.site.helpers import make_run

    a = make_run(tmp_path / "runs", "gold-solve", lambda cid, k: True, rows_per_calc=1)
    b = make_run(tmp_path / "runs", "other-arm", lambda cid, k: False, rows_per_calc=1, seeds=(43,))
    res = build([a, b], tmp_path / "site")
    text = (res.out / "results" / "index.html").read_text(encoding="utf-8")
    assert "could not pair these runs" in text and "seeds differ" in text
    assert [r[1].split("\xa0")[0] for r in table_after(text, "accuracy")] == ["100.00", "0.00"]


def test_compare_chooses_the_paired_gaps(tmp_path):
    """--compare A:B replaces the default pairs (every run against gold-solve) with the ones asked for."""
    from formula_site.build import build
    from tests.site.helpers import make_run

    runs = tmp_path / "runs"
    gold = make_run(runs, "gold-solve", lambda cid, k: True, rows_per_calc=1)
    none = make_run(runs, "none-right", lambda cid, k: False, rows_per_calc=1)
    half = make_run(runs, "half-right", lambda cid, k: cid % 2 == 0, rows_per_calc=1)
    res = build([gold, none, half], tmp_path / "site", compare=["half-right:none-right"])
    text = (res.out / "results" / "index.html").read_text(encoding="utf-8")
    gaps = table_after(text, "paired-gaps")
    assert {g[0] for g in gaps} == {"half-right − none-right"}
    even = sum(1 for cid in benchmark_ids() if cid % 2 == 0)
    assert gaps[0][1:4] == ["all", "55", "55"] and gaps[0][6] == f"{100 * even / 55:+.2f}"


def test_the_two_completeness_notions_are_named_apart(built_site):
    """Issue 23: "original text" is the paper's finding on the benchmark's text, "current text" today's audit."""
    page = (built_site.out / "calculators" / "meld-na.html").read_text(encoding="utf-8")
    assert "original text: incomplete (paper)" in page and "Completeness of the current text (this registry" in page
    # issue 36: completeness is the text's, agreement the answers', each on its own line in the same words
    assert "<strong>complete: the text carries every input, constant, table and branch</strong>" in page
    assert "Agreement with the benchmark: <strong>40 of 40 reference answers agree with the benchmark" in page
    index = (built_site.out / "calculators" / "index.html").read_text(encoding="utf-8")
    assert "Original text (paper)" in index
    audit = (built_site.out / "audits" / "completeness.html").read_text(encoding="utf-8")
    assert "Original text (paper&#x27;s audit)" in audit or "Original text (paper's audit)" in audit
    assert "Current text" in audit and "Agreement with the benchmark" in audit


def test_changelog_dates_and_versions_do_not_wrap(built_site):
    page = (built_site.out / "changelog.html").read_text(encoding="utf-8")
    dates = re.findall(r'<td[^>]*><span class="fr-nowrap">(\d{4}-\d{2}-\d{2})</span></td>', page)
    assert dates and ".md-typeset .fr-nowrap { white-space: nowrap; }" in (
        built_site.out / "assets" / "report.css").read_text(encoding="utf-8")
