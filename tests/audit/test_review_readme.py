"""The README's example of `formula review-pr` is the command's own output, not hand-written.

The example is a signed fix of the sodium correction for hyperglycemia (the Katz factor, the README's
maintainer example) reviewed against `main`. Commit ids and key fingerprints differ on every run, so
both sides are compared with those masked. To regenerate the block after a registry change:

    PYTHONPATH=. FORMULA_TODAY=<the suite's day> python -m tests.audit.test_review_readme
"""
from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

import pytest

from registry.loader import PROJECT_ROOT
from tests.audit.test_review_pr import git, key, make_repo
from tests.helpers import run

SODIUM = "sodium-correction-hyperglycemia"
SECTION = "## Reviewing a pull request"
_VOLATILE = re.compile(r"\b[0-9a-f]{12}\b|SHA256(?::|&#58;)[A-Za-z0-9+/]{43}")


def example(tmp: Path, capsys: pytest.CaptureFixture[str] | None = None) -> str:
    """The review of the README's example change, as `formula review-pr --base main` prints it."""
    from cli.main import main

    def formula(*argv: str) -> tuple[int, str]:
        if capsys is not None:
            code, out, err = run(capsys, *argv)
            assert code in (0, 1), err
            return code, out
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = main(list(argv))
        return code, buf.getvalue()

    repo = make_repo(tmp / "registry")
    formula("fix", SODIUM, "--set", "correction_per_mg_dl_glucose=0.016", "--label",
            "correction_per_mg_dl_glucose=Katz factor", "--reason", "Katz 1973 factor, for comparison",
            "--root", str(repo), *key())
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Katz factor")
    code, out = formula("review-pr", "--base", "main", "--root", str(repo))
    assert code == 0
    return out


def readme_example() -> str:
    text = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1]  # the example holds "## " headings of its own: find its fence
    return re.search(r"`````markdown\n(.*?)`````", section, re.S).group(1)  # type: ignore[union-attr]


def test_the_readme_shows_what_review_pr_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fresh = example(tmp_path, capsys)
    assert _VOLATILE.sub("…", readme_example()) == _VOLATILE.sub("…", fresh), (
        "README's review-pr example is stale: regenerate it (tests/audit/test_review_readme.py says how)")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        sys.stdout.write(example(Path(d)))
