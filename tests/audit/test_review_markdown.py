"""The review as a pull-request comment: registry text is untrusted, the comment has a size limit.

The markdown is parsed with markdown-it-py (CommonMark with GitHub's tables and strikethrough, raw
HTML allowed, as a comment is rendered): the only HTML in it is the report's own <details>/<summary>,
and every hostile string the pull request planted arrives as visible text.
"""
from __future__ import annotations

import json
import re

import pytest
from markdown_it import MarkdownIt

from audit.review_markdown import LIMIT, esc, markdown
from audit.review_pr import Review
from tests.audit.test_review_pr import CALCIUM, CALCIUM_OPENING, edit_active_text, key, make_repo
from tests.helpers import run

HOSTILE = ("<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3)) "
           "![i](https://example.org/i.png) @admins *bold* ~~gone~~ | pipe | </details> ```")
OWN_HTML = re.compile(r"^\s*(<details>\s*<summary>.*</summary>|</details>)\s*$", re.S)


def parse(text: str) -> list:
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    tokens = md.parse(text)
    flat = []
    for t in tokens:
        flat.append(t)
        flat += t.children or []
    return flat


def _formula(*argv: str) -> tuple[int, str]:
    """`formula ARGV...` in this process, outside any test's capsys (the fixture below is built once)."""
    import contextlib
    import io

    from cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    assert code == 0, err.getvalue()
    return code, out.getvalue()


@pytest.fixture(scope="module")
def hostile_review(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The comment on a pull request whose registry text, reason, name and role are hostile."""
    repo = make_repo(tmp_path_factory.mktemp("hostile") / "repo", require_signatures=False)  # typed names
    edit_active_text(repo, CALCIUM, CALCIUM_OPENING, CALCIUM_OPENING + " " + HOSTILE.replace("{", "("))
    _formula("release", CALCIUM, "--reason", HOSTILE, "--by", "<b>Eve</b> @admins", "--role",
             "[x](javascript:alert(4))", "--part", "patch", "--root", str(repo))
    return _formula("review-pr", "--base", "main", "--root", str(repo))[1]


def test_the_comment_holds_no_html_but_its_own_details(hostile_review: str) -> None:
    tokens = parse(hostile_review)
    html = [t.content for t in tokens if t.type in ("html_block", "html_inline")]
    assert html and all(OWN_HTML.match(h) for h in html), html
    assert not [t for t in tokens if t.type in ("link_open", "image", "s_open", "em_open")]
    rendered = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(hostile_review)
    assert "<script" not in rendered and "<img" not in rendered and "<b>" not in rendered and "<a " not in rendered
    # the hostile strings are there, as text a reader sees (the name, the role, the reason)
    assert "&lt;b&gt;Eve&lt;/b&gt;" in rendered and "[x](javascript:alert(4))" in rendered
    prose = re.sub(r"<pre>.*?</pre>", "", rendered, flags=re.S)  # GitHub mentions nobody from a code block
    assert "@admins" not in prose and "@\u2060admins" in prose  # nor from the report's text


def test_the_text_diff_stays_in_its_code_fence(hostile_review: str) -> None:
    tokens = parse(hostile_review)
    fences = [t for t in tokens if t.type == "fence"]
    assert fences and all(t.info == "diff" for t in fences)
    assert any("</details> ```" in t.content for t in fences)  # the planted fence and tag are diff text
    paths = "<summary>Paths the change touches" in hostile_review  # the one folded part that holds no fence
    assert sum(t.type == "html_block" and "</details>" in t.content for t in tokens) == len(fences) + paths


def test_escape_leaves_nothing_active() -> None:
    assert esc("a|b") == "a&#124;b" and esc("<x>") == "&#60;x&#62;" and esc("www.example.org") == "www&#46;example.org"
    assert esc("1. first", lead=True) == "1&#46; first" and esc("- item", lead=True) == "&#45; item"
    assert esc("line\nbreak") == "line break" and len(esc("x" * 1000)) == 300
    assert esc("\x1b[2Jfake") == "&#92;x1b&#91;2Jfake" and esc("a\u202eb") == "a&#92;u202eb"  # visible, inert


def test_a_long_review_is_cut_to_the_limit_saying_what_and_how_to_see_all(tmp_path, capsys) -> None:
    repo = make_repo(tmp_path / "repo")
    assert run(capsys, "fix", "ideal-body-weight", "--set", "base_height=61", "--reason", "r", "--with-dependants",
               "--root", str(repo), *key())[0] == 0
    code, out, _ = run(capsys, "review-pr", "--base", "main", "--root", str(repo), "--format", "json")
    rev = Review.model_validate({k: v for k, v in json.loads(out).items() if k != "exit"})
    one = rev.calculators[0]
    many = [one.model_copy(update={"slug": f"calc-{i:03d}", "text_diff": [f"+line {j} " + "x" * 80
                                                                            for j in range(200)]})
            for i in range(150)]
    big = rev.model_copy(update={"calculators": many})
    text = markdown(big)
    assert len(text) <= LIMIT and text == markdown(big)
    assert "This comment was cut to fit 65,536 characters" in text and "--format json" in text
    assert "| calc-149 |" in text  # the summary table is never cut
    html = [t.content for t in parse(text) if t.type in ("html_block", "html_inline")]
    assert all(OWN_HTML.match(h) for h in html)
    assert len(markdown(big, limit=None)) > LIMIT  # --out writes it all
