"""The built report in a real browser: Debian's Chromium, headless, over loopback HTTP.

Loads the overview, an audit table, the results page, a calculator page and an impact page; checks that the tables
were set up by the site's script (sortable, filterable), that the plots loaded, that the console
shows no error and that the page asked for nothing beyond the loopback server; saves a screenshot of
each page into the test's temporary folder.
"""
from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

PAGES = {
    "overview": ("index.html", ["Literature audit groups", "Latest changes"]),
    "literature-audit": ("audits/literature.html", ["16 of 16 rows"]),
    "results": ("results/index.html", ["Accuracy by audit group", "Paired gaps"]),
    "calculator": ("calculators/meld-na.html", ["Supplied text", "Version history"]),
    "impact": ("impact/mdrd-gfr--ckd-epi-2021.html", ["Reclassification", "G3a"]),
}
PROBE = "/__console_probe.html"  # served by the test only: a page that logs a console error
WIDTHS = "/__widths.html"  # served by the test only: measures the pages below, each in a 1280 px frame
WIDE_PAGES = ["impact/index.html", "lineage.html", "changelog.html", "calculators/index.html",
              "audits/literature.html", "audits/fidelity.html", "results/index.html", "paper.html",
              "calculators/meld-na.html", "impact/mdrd-gfr--ckd-epi-2021.html", "calculators/ckd-epi-2021.html"]
# the issues' cut-off tables: these fit outright at 1280 px (issue 29: CKD-EPI's constants with "Used by", the
# changelog with "Sign-offs")
MUST_FIT = {"impact/index.html", "lineage.html", "changelog.html", "calculators/ckd-epi-2021.html"}
# In each frame: every table fits its scroll wrapper, or the wrapper has the visible scrollbar above it and the
# note (tables.js); every .fr-nowrap element is one line; every lineage label lies inside the diagram and every
# box's name inside its box. The findings are written into the page for --dump-dom.
MEASURE = """
function measure(win) {
  var d = win.document, out = {tables: [], nowrap: 0, wrapped: [], svg: []};
  Array.prototype.forEach.call(d.querySelectorAll("article table"), function (t) {
    var wrap = t.closest(".md-typeset__scrollwrap"), bar = wrap && wrap.previousElementSibling;
    var note = bar && bar.previousElementSibling;
    out.tables.push({head: t.tHead ? t.tHead.textContent.replace(/\\s+/g, " ").trim().slice(0, 60) : "",
      fits: wrap ? wrap.scrollWidth <= wrap.clientWidth + 1 : t.getBoundingClientRect().right <= win.innerWidth,
      bar: !!(bar && bar.classList.contains("fr-topscroll") && bar.offsetHeight > 0 && bar.scrollWidth > bar.clientWidth),
      note: !!(note && note.classList.contains("fr-scroll-note") && note.offsetHeight > 0)});
  });
  Array.prototype.forEach.call(d.querySelectorAll("article .fr-nowrap"), function (e) {
    out.nowrap += 1;
    if (e.getClientRects().length !== 1) { out.wrapped.push(e.textContent); }
  });
  Array.prototype.forEach.call(d.querySelectorAll("svg.fr-lineage"), function (svg) {
    var width = svg.viewBox.baseVal.width;
    Array.prototype.forEach.call(svg.querySelectorAll("text"), function (t) {
      var b = t.getBBox(), rect = t.previousElementSibling, bad = b.x < 0 || b.x + b.width > width;
      if (rect && rect.tagName === "rect") {
        var r = rect.getBBox();
        bad = bad || b.x < r.x || b.x + b.width > r.x + r.width || b.y < r.y || b.y + b.height > r.y + r.height;
      }
      if (bad || t.textContent.indexOf("\u2026") !== -1) { out.svg.push(t.textContent); }
    });
  });
  return out;
}
var pages = %s, results = {}, left = pages.length;
pages.forEach(function (p) {
  var f = document.createElement("iframe");
  f.width = "1280"; f.height = "900"; f.src = "/" + p;
  f.addEventListener("load", function () {
    setTimeout(function () {
      results[p] = measure(f.contentWindow);
      left -= 1;
      if (left === 0) {
        var pre = document.createElement("pre");
        pre.id = "fr-widths";
        pre.textContent = JSON.stringify(results);
        document.body.appendChild(pre);
      }
    }, 500);
  });
  document.body.appendChild(f);
});
"""


def chromium() -> str:
    """The system Chromium, installed from Debian when missing and this test may do so."""
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    if os.geteuid() == 0 and shutil.which("apt-get"):
        for cmd in (["apt-get", "install", "-y", "-qq", "chromium"], ["apt-get", "update", "-qq"],
                    ["apt-get", "install", "-y", "-qq", "chromium"]):
            subprocess.run(cmd, capture_output=True, timeout=900, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
            if shutil.which("chromium"):
                return shutil.which("chromium")
    pytest.skip("no Chromium, and it cannot be installed here (needs root and apt-get)")


class Handler(http.server.SimpleHTTPRequestHandler):
    served: list[tuple[str, int]]

    def log_message(self, *args):  # keep test output quiet
        pass

    def send_response(self, code, message=None):
        self.served.append((self.path, code))
        super().send_response(code, message)

    def do_GET(self):
        if self.path in (PROBE, WIDTHS):
            body = (b"<!doctype html><title>probe</title><script>console.error('probe error');</script>"
                    if self.path == PROBE else ("<!doctype html><title>widths</title><body><script>"
                                                + MEASURE % json.dumps(WIDE_PAGES) + "</script></body>").encode())
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


@pytest.fixture(scope="module")
def server(built_site):
    served: list[tuple[str, int]] = []
    handler = functools.partial(type("H", (Handler,), {"served": served}), directory=str(built_site.out))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    httpd.shutdown()
    httpd.server_close()


def load(browser: str, url: str, work: Path, name: str) -> tuple[str, str, list[tuple[str, str]]]:
    """(DOM after scripts ran, browser log, [(initiator, url)] of every request the page made)."""
    net = work / f"{name}.netlog.json"
    shot = work / f"{name}.png"
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
           f"--user-data-dir={work / ('profile-' + name)}", "--enable-logging=stderr", "--v=0",
           f"--log-net-log={net}", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
           "--virtual-time-budget=5000", "--window-size=1280,1400", f"--screenshot={shot}", "--dump-dom", url]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert shot.is_file() and shot.stat().st_size > 0, f"no screenshot of {name}"
    text = net.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:  # a log cut short on exit: close its event list
        data = json.loads(text.rstrip().rstrip(",") + "]}")
    types = {v: k for k, v in data["constants"]["logEventTypes"].items()}
    requests = [(e["params"].get("initiator", ""), e["params"]["url"]) for e in data["events"]
                if types.get(e["type"]) == "URL_REQUEST_START_JOB" and "url" in e.get("params", {})]
    return proc.stdout, proc.stderr, requests


def console_errors(log: str) -> list[str]:
    return [line for line in log.splitlines()
            if "Uncaught" in line or ("CONSOLE" in line and re.search(r"error", line, re.I))]


@pytest.fixture(scope="module")
def browser() -> str:
    return chromium()


def test_console_scan_catches_an_error(browser, server, tmp_path):
    """Positive control: the log scan below does see a console error when a page logs one."""
    base, _ = server
    _, log, requests = load(browser, base + PROBE, tmp_path, "probe")
    assert console_errors(log), "the browser log did not show the probe page's console error"
    assert any(u == base + PROBE for _, u in requests), "the net log did not record the page load"


@pytest.mark.parametrize("name", list(PAGES))
def test_page_renders_in_chromium(browser, server, tmp_path, name):
    base, served = server
    rel, texts = PAGES[name]
    before = len(served)
    dom, log, requests = load(browser, f"{base}/{rel}", tmp_path, name)
    assert "<article" in dom
    assert (tmp_path / f"{name}.png").stat().st_size > 20_000, "the screenshot looks blank"
    for t in texts:
        assert t in dom, f"{name}: {t!r} not rendered"
    assert not console_errors(log), console_errors(log)
    # every request the page itself made went to the loopback server and succeeded
    page_made = [u for init, u in requests if init.startswith("http")]
    assert page_made, "no page request in the net log"
    outside = [u for u in page_made if urlparse(u).hostname != "127.0.0.1"]
    assert not outside, outside
    failed = [(p, c) for p, c in served[before:] if c >= 400]
    assert not failed, failed
    tables = re.findall(r"<table[^>]*>", dom)
    if name in ("literature-audit", "results"):
        assert any('data-ready="true"' in t for t in tables), "the table script did not run"
        assert "fr-filter" in dom
    if name == "impact":
        assert any(p.endswith("mdrd-gfr--ckd-epi-2021.svg") and c == 200 for p, c in served[before:])
    if name == "results":
        for svg in ("accuracy-by-group.svg", "coverage-accuracy.svg", "per-calculator.svg"):
            assert any(p.endswith(svg) and c == 200 for p, c in served[before:]), f"{svg} not loaded"
    assert tables, "no table rendered"


def test_every_table_fits_or_visibly_scrolls_at_1280_px(browser, server, tmp_path):
    """Issue 23: at 1280 px no table is cut off without a sign; the impact index and the lineage table fit
    outright; the lineage diagram's names and labels are whole; dates and versions never wrap."""
    base, _ = server
    dom, _, _ = load(browser, base + WIDTHS, tmp_path, "widths")
    m = re.search(r'<pre id="fr-widths">(.*?)</pre>', dom, re.S)
    assert m, "the measuring page did not finish"
    import html

    results = json.loads(html.unescape(m.group(1)))
    assert set(results) == set(WIDE_PAGES)
    for page, r in results.items():
        assert r["tables"], f"{page}: no table measured"
        for t in r["tables"]:
            if page in MUST_FIT:
                assert t["fits"], f"{page}: table {t['head']!r} is wider than the page at 1280 px"
            else:
                assert t["fits"] or (t["bar"] and t["note"]), f"{page}: table {t['head']!r} is cut off without a sign"
        assert not r["wrapped"], f"{page}: these should stay on one line: {r['wrapped']}"
        assert not r["svg"], f"{page}: lineage text cut or outside its box: {r['svg']}"
    assert results["changelog.html"]["nowrap"] > 0 and results["impact/index.html"]["nowrap"] > 0
    assert any(not t["fits"] for r in results.values() for t in r["tables"]), \
        "no table needs to scroll at 1280 px: the scrollbar check above was never exercised"
    assert "svg" in results["lineage.html"] and results["lineage.html"]["tables"]


def test_impact_index_mean_difference_has_units(built_site):
    text = (built_site.out / "impact" / "index.html").read_text(encoding="utf-8")
    assert "Mean difference (successor&#x27;s unit)" in text or "Mean difference (successor's unit)" in text
    cells = re.findall(r'<span class="fr-nowrap">(-?\d+\.\d{2})(?:&nbsp;|\u00a0)([^<]+)</span>', text)
    units = {u for _, u in cells}
    assert len(cells) >= 5 and {"mL/min/1.73 m²", "ms"} <= units, units


# ---------------------------------------------------------------------- issue 29: every page, two widths, two schemes
# Driven over the DevTools protocol (tests/site/cdp.py), so pages run in real time: the search worker answers.

MEASURE_PAGE = """(function () {
  // The page no wider than its window, and no element of the article sticking out of the content column,
  // except inside an element that scrolls or clips on its own (a table's scroll wrapper, a code block).
  // The box is the content column (.md-content): the theme lets tables and code blocks bleed into the
  // article's own margin by design.
  var art = document.querySelector("article"), out = [];
  var edge = art ? art.closest(".md-content").getBoundingClientRect() : null;
  function walk(el) {
    for (var c = el.firstElementChild; c; c = c.nextElementSibling) {
      var r = c.getBoundingClientRect();
      if (r.width > 0 && (r.right > edge.right + 1 || r.left < edge.left - 1)) {
        out.push(c.tagName + "." + (c.className || "") + ": " + (c.textContent || "").trim().slice(0, 40));
        continue;
      }
      if (getComputedStyle(c).overflowX === "visible") { walk(c); }
    }
  }
  if (art) { walk(art); }
  return {page: document.documentElement.scrollWidth, window: window.innerWidth, out: out.slice(0, 5)};
})()"""
SEARCH_DONE = """(function () {
  var m = document.querySelector(".md-search-result__meta");
  if (!m || /Initializing/.test(m.textContent)) { return null; }
  return {meta: m.textContent.trim(), items: document.querySelectorAll(".md-search-result__item").length};
})()"""


def all_pages(out: Path) -> list[str]:
    """Every page of the built site (the 404 page too: serve shows it for missing pages)."""
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html"))


@pytest.fixture(scope="module")
def cdp(browser, tmp_path_factory):
    from tests.site.cdp import Chromium

    b = Chromium(browser, tmp_path_factory.mktemp("cdp-profile"))
    yield b
    b.close()


def test_the_protocol_sees_console_errors(cdp, server):
    """Positive control for the checks below: the probe page's console error is seen."""
    base, _ = server
    cdp.goto(base + PROBE, 1280)
    cdp.pump(0.3)
    assert any("probe error" in e for e in cdp.errors), cdp.errors
    # and the measure sees an element wider than the article
    cdp.goto(base + "/about.html", 390)
    assert not cdp.evaluate(MEASURE_PAGE)["out"]
    cdp.evaluate("document.querySelector('article').appendChild(Object.assign(document.createElement('div'), "
                 "{style: 'width: 2000px; height: 4px'}))")
    assert cdp.evaluate(MEASURE_PAGE)["out"]


@pytest.mark.parametrize("width", [1280, 390])
def test_every_page_fits_its_window_and_logs_no_error_over_http(cdp, server, built_site, width):
    """Every page at 1280 and 390 px: never wider than the window (tables scroll inside their own wrappers),
    no console error, no failed request."""
    base, served = server
    before = len(served)
    wide, errors = {}, {}
    for rel in all_pages(built_site.out):
        cdp.goto(f"{base}/{rel}", width)
        cdp.pump(0.1)
        m = cdp.evaluate(MEASURE_PAGE)
        if m["page"] > m["window"] + 1 or m["out"]:
            wide[rel] = m
        if cdp.errors:
            errors[rel] = cdp.errors
    assert not wide, f"wider than {width} px: {wide}"
    assert not errors, errors
    failed = [(p, c) for p, c in served[before:] if c >= 400]
    assert not failed, failed


def test_every_page_logs_no_error_over_file(cdp, built_site):
    """Opened from the file system, as the README's first command suggests: no missing search_index.js, no
    script error, and nothing fetched from anywhere but the disk."""
    errors = {}
    cdp.requests = []
    for rel in all_pages(built_site.out):
        if rel == "404.html":  # a server's page for any path: its links start at the server's root
            continue
        cdp.goto((built_site.out / rel).as_uri(), 1280)
        cdp.pump(0.1)
        if cdp.errors:
            errors[rel] = cdp.errors
    assert not errors, errors
    assert cdp.requests and not [u for u in cdp.requests if not u.startswith(("file:", "data:", "about:", "blob:"))]


@pytest.mark.parametrize("width", [1280, 390])
def test_search_returns_results_over_http_and_file(cdp, server, built_site, width):
    """The theme's search, opened with ?q= (as a shared search link is), finds pages over http:// and from
    file:// (the offline plugin's inlined index, run by the site's worker shim), on a desktop and a phone."""
    base, _ = server
    for scheme, url in (("http", f"{base}/calculators/meld-na.html?q=creatinine"),
                        ("file", (built_site.out / "calculators" / "meld-na.html").as_uri() + "?q=creatinine")):
        cdp.goto(url, width)
        found = cdp.wait_for(SEARCH_DONE, timeout=30)
        assert found, f"{scheme} at {width} px: search stayed on 'Initializing search'"
        assert found["items"] > 0 and re.match(r"\d+ matching document", found["meta"]), (scheme, found)
        assert not cdp.errors, (scheme, cdp.errors)


def test_on_a_phone_the_results_table_leads_with_accuracy(cdp, server):
    """At 360 px (a phone) the first table of the results page shows each run's accuracy without scrolling
    sideways: the column after the run's name (issue 50)."""
    base, _ = server
    cdp.goto(f"{base}/results/index.html", 360)
    found = cdp.evaluate("""(function () {
  var t = document.querySelector("article table"), cell = t.tBodies[0].rows[0].cells[1];
  return {head: t.tHead.rows[0].cells[1].textContent.trim(), text: cell.textContent.trim(),
          right: cell.getBoundingClientRect().right, window: window.innerWidth};
})()""")
    assert found["head"].startswith("all") and re.match(r"\d+\.\d\d", found["text"]), found
    assert found["right"] <= found["window"], found
