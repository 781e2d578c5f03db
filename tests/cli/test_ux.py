"""What a person meets at the command line (issue 23): tables at 80 columns, --version, "did you mean",
readable deviation texts, the two completeness notions named apart, refusals instead of tracebacks."""
from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

from registry.tables import render_table
from tests.helpers import run

DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def _table(out: str) -> list[str]:
    return out.split("\n\n")[0].splitlines()


@pytest.fixture()
def columns80(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")


def test_list_at_80_columns_keeps_slugs_and_versions_whole(capsys, columns80) -> None:
    code, out, _ = run(capsys, "list")
    lines = _table(out)
    assert code == 0 and all(len(line) <= 80 for line in lines)
    _, js, _ = run(capsys, "list", "--format", "json")
    rows = json.loads(js)
    text = "\n".join(lines)
    for r in rows:  # each row's slug and version appear whole on the row's first line
        line = next(x for x in lines if re.search(rf"(^|\s){re.escape(r['slug'])}\s", x))
        assert f" {r['active_version']} " in line
    assert "…" not in text and "(not shown at 80 columns:" in text and "--format json" in text


def test_list_names_the_papers_finding_on_the_original_text(capsys) -> None:
    code, out, _ = run(capsys, "list", "--group", "replaced")
    assert code == 0 and "original text (paper)" in out and re.search(r"^\d+ .* incomplete ", out, re.M)
    assert "original text (paper's audit):" in out and "current text:" in out


def test_audit_completeness_names_the_current_text(capsys) -> None:
    code, out, _ = run(capsys, "audit", "completeness", "--no-cases")
    assert code == 0 and "current text" in out.splitlines()[0] and re.search(r"current text: (\d+) of \1 complete", out)


def test_history_at_80_columns_keeps_dates_whole_and_json_keeps_the_hash(capsys, columns80) -> None:
    code, out, _ = run(capsys, "history", "meld-na")
    _, js, _ = run(capsys, "history", "meld-na", "--format", "json")
    rows = json.loads(js)
    assert code == 0 and all(len(line) <= 80 for line in out.splitlines()[1:] if not line.startswith("("))
    for r in rows:
        assert r["effective"] in out and re.search(rf"^{re.escape(r['version'])}\s", out, re.M)
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", r["hash"])  # JSON: the whole hash


def test_due_at_80_columns(capsys, columns80) -> None:
    code, out, _ = run(capsys, "due", "--on", "2030-01-01")
    assert code == 0 and all(len(line) <= 80 for line in _table(out))
    assert "creatinine-clearance-cockcroft-gault " in out  # the longest slug, whole


def test_table_helper_wraps_prose_drops_low_value_columns_and_never_cuts_identifiers(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "70")
    rows = [{"slug": "creatinine-clearance-cockcroft-gault", "version": "10.20.30", "date": "2026-12-01",
             "why": "a long sentence that explains the change in several words", "extra": "x" * 30}]
    text = render_table(rows, ["slug", "version", "date", "why", "extra"], drop=["extra"])
    lines = text.splitlines()
    assert all(len(line) <= 70 for line in lines)
    assert "creatinine-clearance-cockcroft-gault" in text and "10.20.30" in text and "2026-12-01" in text
    assert "x" * 30 not in text and "extra" in lines[-1]  # dropped, and said so
    assert "several" in text  # prose wraps instead of being cut
    monkeypatch.delenv("COLUMNS")
    assert "x" * 30 in render_table(rows, ["slug", "extra"], drop=["extra"])  # not a terminal: nothing cut


def test_table_cells_are_not_markup(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert "[unverified]" in render_table([{"a": "x [unverified] [bold]y[/bold]"}], ["a"])


def test_every_table_command_has_json(capsys) -> None:
    from cli.main import build_parser
    from tests.cli.test_malformed_args import leaves

    for words, p in leaves(build_parser()):
        fmt = [a for a in p._actions if "--format" in a.option_strings]
        if fmt and "table" in (fmt[0].choices or ()):
            assert "json" in fmt[0].choices, " ".join(words)
    for words in (["list"], ["history", "meld-na"], ["due"], ["audit", "completeness", "--no-cases"]):
        code, out, _ = run(capsys, *words, "--format", "json")
        assert code == 0 and isinstance(json.loads(out), list)


def test_version(capsys) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as e:
        run(capsys, "--version")
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"formula {version('formula-registry')}"


@pytest.mark.parametrize("argv, expected", [
    (["show", "mdrd-gf"], "did you mean mdrd-gfr?"),
    (["history", "meld-n"], "did you mean meld-na"),
    (["impact", "mdrd-gfrr", "ckd-epi-2021"], "did you mean mdrd-gfr?"),
    (["solve", "--calculator", "mdrd-gf", "--entities", "{}"], "did you mean mdrd-gfr?"),
    (["schema", "--calculator", "mdrd-gf"], "did you mean mdrd-gfr?"),
    (["run", "--arm", "gold-solv", "--data", "x.csv", "--out", "o"], "did you mean gold-solve"),
])
def test_did_you_mean(capsys, argv: list[str], expected: str) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 1 and expected in err and "Traceback" not in err


def test_show_composes_deviation_texts(capsys) -> None:
    from registry.loader import get_registry

    reg = get_registry()
    code, out, _ = run(capsys, "show", "meld-na")
    assert code == 0 and "the benchmark the " not in out.lower()
    flat = " ".join(out.split())
    for d in reg.get("meld-na").deviations:
        assert f"benchmark: {' '.join(d.benchmark.split())}" in flat
        assert f"published: {' '.join(d.published.split())}" in flat
    assert "Original text: incomplete (paper)" in out and "Current text (version" in out
    for c in reg.calculators.values():  # no calculator's page composes "the benchmark" with a capitalised sentence
        for d in c.deviations:
            assert d.benchmark[:1].isupper() or d.benchmark[:1] in "'\"", (c.slug, d.id)


def test_impact_refuses_unlinked_pairs_unless_asked(capsys) -> None:
    code, _, err = run(capsys, "impact", "mdrd-gfr", "body-mass-index")
    assert code == 1 and "does not link mdrd-gfr to body-mass-index" in err and "--unlinked" in err
    code, _, err = run(capsys, "impact", "ckd-epi-2021", "mdrd-gfr")
    assert code == 1 and "other way round" in err
    code, out, _ = run(capsys, "impact", "mdrd-gfr", "body-mass-index", "--unlinked")
    assert code == 0 and "relation in the registry: not linked" in out


def test_replay_of_a_binary_file_is_an_error(capsys, tmp_path: Path) -> None:
    f = tmp_path / "record.json"
    f.write_bytes(bytes(range(256)))
    code, _, err = run(capsys, "replay", str(f))
    assert code == 1 and "not text" in err


@pytest.mark.parametrize("port", ["99999", "0", "-5", "http"])
def test_site_serve_port_out_of_range_is_a_usage_error(capsys, port: str) -> None:
    with pytest.raises(SystemExit) as e:
        run(capsys, "site", "serve", "--port", port)
    assert e.value.code == 2 and "--port" in capsys.readouterr().err


def test_site_serve_finds_a_busy_port_before_building(capsys, monkeypatch) -> None:
    import formula_site.site_cli as site_cli

    monkeypatch.setattr(site_cli, "_build", lambda args: pytest.fail("built before checking the port"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        code, _, err = run(capsys, "site", "serve", "--port", str(s.getsockname()[1]))
    assert code == 1 and "cannot serve on 127.0.0.1" in err and "another --port" in err


def test_review_interval_out_of_range_is_refused(capsys, registry_copy: Path) -> None:
    code, _, err = run(capsys, "review", "meld-na", "--by", "A", "--role", "r", "--interval-days", "99999999",
                       "--root", str(registry_copy))
    assert code == 1 and "--interval-days must be between 1 and" in err


def test_batch_defaults_to_published_and_says_so(capsys, tmp_path: Path) -> None:
    src, dst = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text("weight,weight_unit,height,height_unit\n70,kg,175,cm\n", encoding="utf-8")
    code, _, err = run(capsys, "batch", str(src), "--calculator", "body-mass-index", "--out", str(dst), "--no-progress")
    assert code == 0 and "(published," in err


def test_changelog_as_a_table_at_80_columns(capsys, columns80) -> None:
    code, out, _ = run(capsys, "changelog", "--format", "table")
    _, js, _ = run(capsys, "changelog", "--format", "json")
    lines = out.splitlines()
    assert code == 0 and all(len(line) <= 80 for line in lines)
    starts = [line.split()[0] for line in lines[2:] if DATE.match(line)]
    assert starts and all(DATE.fullmatch(s) for s in starts)  # every date whole, at the start of its row
    assert len(starts) == len(json.loads(js))


def test_site_serve_serves_the_built_folder_on_the_port_it_took_first(capsys, monkeypatch, tmp_path: Path) -> None:
    import http.server
    import threading
    import types
    import urllib.request

    import formula_site.site_cli as site_cli

    (tmp_path / "index.html").write_text("<p>built</p>", encoding="utf-8")
    monkeypatch.setattr(site_cli, "_build", lambda args: types.SimpleNamespace(out=tmp_path, pages=1, runs=0,
                                                                               seconds=0.0))
    got: list[bytes] = []

    def one_request(self, *a, **k) -> None:
        port = self.server_address[1]
        client = threading.Thread(target=lambda: got.append(urllib.request.urlopen(
            f"http://127.0.0.1:{port}/index.html", timeout=10).read()))
        client.start()
        self.handle_request()
        client.join(10)

    monkeypatch.setattr(http.server.ThreadingHTTPServer, "serve_forever", one_request)
    with socket.socket() as s:  # a free port
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, _ = run(capsys, "site", "serve", "--port", str(port))
    assert code == 0 and got == [b"<p>built</p>"] and f"http://127.0.0.1:{port}/" in out
