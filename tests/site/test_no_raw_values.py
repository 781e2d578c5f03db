"""The published report shows no raw Python values (issue 39): no `None`, `{}` or `[]`, no negative zero, no value
cut with an ellipsis, on any page of the session's site; run details are a definition list that says "not recorded";
an impact report that compares no case says why."""
from __future__ import annotations

import re

from tests.site.helpers import page, raw_values


def test_no_page_shows_a_raw_value(built_site):
    found = raw_values(built_site.out)
    assert not found, "\n".join(found[:20])


def test_the_walker_sees_each_raw_value(tmp_path):
    """The check itself: each kind of raw value is found where a reader would see it, and English is not."""
    (tmp_path / "a.html").write_text(
        "<html><head><style>td{}</style><script>var x = {};</script></head><body>"
        "<p>None of the eleven factors was given.</p><table><tr><td>None</td><td>{}</td><td>-0.00</td>"
        "<td>&#8722;0.0</td><td>{&quot;a&quot;: 1, &quot;b&quot;: …</td><td>True</td></tr></table>"
        "<p>a list, and so on …</p><dl><dt>git</dt><dd>[]</dd></dl><p>2026-01-01, -0.5, 10-0</p>"
        "<p>True positives. False alarms: few.</p></body></html>",
        encoding="utf-8")
    found = raw_values(tmp_path)
    assert [f.split(": ")[1] for f in found] == ["None in <td>", "empty container in <td>", "negative zero in <td>",
                                                 "negative zero in <td>", "ellipsis in a value in <td>",
                                                 "Python boolean in <td>", "empty container in <dd>"]


def test_a_boolean_default_reads_yes_and_says_whose_it_is(built_site):
    """Centor's `Cough Absent` defaults to true: the inputs table says "yes when not given", and that it is the
    registry's default, with the registry's reason (issue 50)."""
    text = page(built_site, "calculators/centor-mcisaac.html")
    row = next(r for r in re.findall(r"<tr>(.*?)</tr>", text, re.S) if "Cough Absent" in r)
    cell = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[-1])).strip()
    assert cell.startswith("yes when not given the registry's default: the benchmark counts"), cell
    assert "True" not in row


def test_numbers_never_print_negative_zero():
    from formula_site.markup import fixed, signed

    assert fixed(-0.0001, 2) == "0.00" and fixed(-0.0, 3) == "0.000" and fixed(-0.004, 2) == "0.00"
    assert fixed(-0.005001, 2) == "-0.01" and fixed(1.234, 1) == "1.2"
    assert signed(-0.001) == "0.00" and signed(0.0) == "0.00" and signed(2.5) == "+2.50" and signed(-2.5) == "-2.50"


def _run_details(text: str, anchor: str) -> dict[str, str]:
    at = text.index(f'id="{anchor}"')
    dl = re.search(r"<dl\b.*?</dl>", text[at:], re.S).group(0)
    out = {}
    for dt_, dd in re.findall(r"<dt>(.*?)</dt>\s*<dd>(.*?)</dd>", dl, re.S):
        out[re.sub(r"<[^>]+>", "", dt_)] = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dd)).strip()
    return out


def test_run_details_are_a_definition_list_that_says_not_recorded(built_site):
    text = page(built_site, "results/index.html")
    details = _run_details(text, "run-gold-solve")
    assert details["Arm"] == "gold-solve" and details["Model"] == "none (the arm uses no model)"  # model "none"
    assert "current" in details["Registry"] and details["engine"] == "synthetic" and details["seeds"] == "42"
    half = _run_details(text, "run-half-arm")
    assert half["Model"] == "test-model" and "changed since this run" in half["Registry"]
    # fields a run should record and these synthetic ones lack are listed as such, not left out
    assert half["git"] == half["packages"] == half["model revision"] == "not recorded" and half["engine"] == "synthetic"


def test_recorded_values_read_as_words_never_as_python():
    """A runner's manifest as it is written (null fields, empty maps, nested records, a map of like records, a
    list, a path of the machine that ran it) becomes a definition list a person reads."""
    from formula_site.details import definition_list

    html = definition_list([
        ("model revision", None), ("engine info", {}), ("resumed at", []), ("send seed", False),
        ("git", {"commit": "6ad8e71", "dirty": True}),
        ("formula texts", {f"calc-{k}": {"version": "1.0.1", "sha256": f"sha256:{k}"} for k in range(9)}),
        ("dataset", {"path": "/home/someone/data/test.parquet", "rows": 2200, "name": None}),
        ("changelog", ["1.0.0: first version"])])
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert "model revision not recorded" in text and "engine info not recorded" in text
    assert "resumed at none" in text and "send seed no" in text and "commit 6ad8e71 dirty yes" in text
    assert "9 entries" in html and "<details>" in html and text.count("sha256:") == 9  # folded, none left out
    assert "path test.parquet" in text and "/home" not in html and "name not recorded" in text
    assert "None" not in text and "{}" not in text and "[]" not in text and "…" not in text


def test_an_impact_report_comparing_no_case_says_why(built_site):
    text = page(built_site, "impact/meld-na--meld-3-0.html")
    body = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", re.search(r"<article.*?</article>", text, re.S).group(0)))
    # MELD 3.0 needs albumin; MELD Na does not take it, so its reference cases do not hold it
    assert "No case could be compared" in body
    assert ("(the first one each case lacks: Albumin in 40 of 40). meld-na does not take Albumin, so its cases, written "
            "for it, were never meant to hold it: the formulas do not share that input") in body, body[:2000]
    index = page(built_site, "impact/index.html")
    row = next(r for r in re.findall(r"<tr>(.*?)</tr>", index, re.S) if "meld-3-0" in r)
    cells = [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    assert cells[5] == "0 (no shared inputs)" and cells[6] == "none compared" and cells[7] == "none compared"


def test_the_readmes_example_build_line_counts_what_a_build_makes(built_site):
    """The documentation (docs/guide/report.md) quotes `formula site build`'s final line for the embedded runs: its page and FHIR counts are
    what a build makes (the session's site: the pages do not depend on the runs), its run count the embedded runs."""
    from formula_site.build import default_runs
    from tests.docs.pages import documentation

    readme = documentation()
    m = re.search(r"`built (\d+) pages \((\d+) runs, (\d+) FHIR resources\) in [\d.]+ s`", readme)
    assert m, "the documentation no longer quotes the build's final line: update this test"
    pages = sum(1 for _ in built_site.out.rglob("*.html"))
    fhir = sum(1 for _ in (built_site.out / "fhir").glob("*.json"))
    assert [int(x) for x in m.groups()] == [pages, len(default_runs()), fhir]
