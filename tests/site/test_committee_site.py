"""A committee's site (issue 50): `formula site build` in a registry made by `formula init` publishes the runs in
its own results/, never the runs the package ships; every page names the registry lock digest and the commit it
was built from; served from a sub-path (--site-url .../some/prefix/), the 404 page's links and assets resolve."""
from __future__ import annotations

import functools
import http.server
import re
import subprocess
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from formula_site.build import EMBEDDED_RESULTS, default_runs
from formula_site.serve import SiteHandler
from registry.loader import clear_cache
from registry.versions import lock_digest
from tests.helpers import GIT_ID, make_key
from tests.site.helpers import make_run

PREFIX = "some/prefix"


@pytest.fixture(scope="module")
def committee_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, int]:
    """(registry, built site, its commit, the port it is served on): one run of the committee's own in
    results/, committed on main, built for http://127.0.0.1:PORT/some/prefix/ and served there."""
    import contextlib
    import io
    import os

    from cli.main import main

    tmp = tmp_path_factory.mktemp("committee-site")
    root = tmp / "committee"
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        assert main(["init", str(root), "--key", f"{make_key('chair')}.pub", "--name", "Dr A. Chair", "--role",
                     "chair"]) == 0, quiet.getvalue()
    assert subprocess.run(["git", "symbolic-ref", "HEAD"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip() == "refs/heads/main"
    make_run(root / "results", "our-own-arm", lambda cid, k: k != 1)
    for args in (["add", "-A"], ["commit", "-qm", "our first run"]):
        subprocess.run(["git", *GIT_ID, *args], cwd=root, check=True, capture_output=True, timeout=60)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                            check=True).stdout.strip()
    www = tmp / "www"
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Prefixed, directory=str(www)))
    port = httpd.server_address[1]
    clear_cache()
    before, env = os.getcwd(), os.environ.pop("FORMULA_REGISTRY_ROOT", None)
    os.chdir(root)  # found from the current folder, as a committee runs it
    try:
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            code = main(["site", "build", "--out", str(www / PREFIX), "--on", "2026-12-01",
                         "--site-url", f"http://127.0.0.1:{port}/{PREFIX}"])
    finally:
        os.chdir(before)
        if env is not None:
            os.environ["FORMULA_REGISTRY_ROOT"] = env
    assert code == 0, quiet.getvalue()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, www / PREFIX, commit, port
    httpd.shutdown()
    httpd.server_close()


class _Prefixed(SiteHandler):
    """A web server that holds the site under /some/prefix/ and answers a missing path with that site's 404."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        self.directory = str(Path(self.directory) / PREFIX)
        super().send_error(code, message, explain)


def test_the_committees_own_runs_are_published_never_the_shipped_ones(committee_site) -> None:
    root, out, _, _ = committee_site
    assert default_runs(root) == [root / "results" / "our-own-arm"]
    results = (out / "results" / "index.html").read_text(encoding="utf-8")
    assert "our-own-arm" in results
    shipped = sorted(p.name for p in EMBEDDED_RESULTS.iterdir() if p.is_dir())
    assert shipped and not [name for name in shipped if name in results]


def test_every_page_names_the_lock_digest_and_the_commit(committee_site) -> None:
    root, out, commit, _ = committee_site
    digest = lock_digest(root / "formulas" / "REGISTRY.lock")
    pages = sorted(out.rglob("*.html"))
    assert len(pages) > 60 and out / "404.html" in pages
    missing = [p.relative_to(out).as_posix() for p in pages
               if digest not in (text := p.read_text(encoding="utf-8")) or f"commit {commit}" not in text]
    assert not missing, missing
    assert "uncommitted" not in (out / "index.html").read_text(encoding="utf-8")


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_the_404_page_works_under_a_sub_path(committee_site) -> None:
    _, out, _, port = committee_site
    base = f"http://127.0.0.1:{port}"
    code, body = _get(f"{base}/{PREFIX}/no/such/page.html")
    assert code == 404 and b"404" in body
    html = body.decode("utf-8")
    links = set(re.findall(r'(?:href|src)="([^"#?]+)', html))
    local = {u for u in links if not u.startswith(("http:", "https:", "data:", "mailto:"))}
    assert local and all(u.startswith(f"/{PREFIX}/") for u in local), sorted(local)
    broken = [u for u in sorted(local) if _get(base + u)[0] != 200]
    assert not broken, broken
    assert any(u.endswith(".css") for u in local) and any(u.endswith(".js") for u in local)


def test_serve_refuses_a_site_url(capsys) -> None:
    """`site serve` previews at the server's root: a site built for a sub-path would find none of its assets."""
    from cli.main import main

    assert main(["site", "serve", "--site-url", "https://example.org/formulas/"]) == 2
    assert "--site-url is for `site build`" in capsys.readouterr().err


def test_a_site_url_is_an_http_url() -> None:
    import argparse

    from formula_site.site_cli import _site_url

    assert _site_url("https://example.org/formulas") == "https://example.org/formulas/"
    with pytest.raises(argparse.ArgumentTypeError):
        _site_url("/some/prefix/")
