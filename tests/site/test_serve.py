"""`formula site serve`: a NUL byte in a path is answered 400 (not an exception inside the server that drops the
connection), a missing page gets the site's own 404 page, pages are served as usual; and `--results` takes
several folders and globs."""
from __future__ import annotations

import functools
import http.client
import http.server
import threading

import pytest

from formula_site.serve import SiteHandler


@pytest.fixture(scope="module")
def served(built_site):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                            functools.partial(SiteHandler, directory=str(built_site.out)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def _get(port: int, path: str) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    resp = conn.getresponse()
    body = resp.read().decode("utf-8", errors="replace")
    conn.close()
    return resp.status, body


def test_a_nul_byte_is_a_bad_request(served):
    for path in ("/index.html%00.txt", "/%00", "/results/%00index.html"):
        status, body = _get(served, path)
        assert status == 400, path
    assert _get(served, "/index.html")[0] == 200  # the server is still up and serving


def test_a_missing_page_gets_the_sites_own_404(served, built_site):
    status, body = _get(served, "/no-such-page.html")
    assert status == 404
    assert body == (built_site.out / "404.html").read_text(encoding="utf-8")
    assert "Formula provenance audit" in body and "Error response" not in body  # not Python's default page


def test_results_takes_several_folders_and_globs(built_site, tmp_path, monkeypatch):
    """`--results a b`, `--results 'glob/*'` (quoted, expanded here) and the option repeated all name the same
    runs; a glob that matches no run folder is an error naming it."""
    import argparse

    from formula_site import site_cli

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    site_cli.register(sub)
    gold, half = built_site.runs
    seen = []
    monkeypatch.setattr("formula_site.build.build", lambda results, *a, **kw: seen.append(sorted(results)))
    for argv in (["--results", str(gold), str(half)], ["--results", str(gold.parent / "*")],
                 ["--results", str(gold), "--results", str(half)]):
        args = parser.parse_args(["site", "build", *argv])
        site_cli._build(args)
    assert seen == [sorted([gold, half])] * 3
    from audit.runs import RunError, expand_run_dirs

    with pytest.raises(RunError, match="no run folder"):
        expand_run_dirs([str(tmp_path / "nothing-*")], option="--results")
