"""Messages fit an 80-column terminal (issue 50): an error, what `init` and `people add` say they did, and
`stale` on a file that is not JSON lines (a few lines, not one per line of the file), each run in a
pseudo-terminal 80 columns wide. Words are never split; into a pipe the message is written as it is."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import PROJECT_ROOT, in_terminal, make_key

WIDTH = 80


def _env() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k != "FORMULA_REGISTRY_ROOT"}, "PYTHONPATH": str(PROJECT_ROOT)}


def _fits(text: str) -> list[str]:
    return [line for line in text.splitlines() if len(line) > WIDTH]


def test_init_and_people_add_fit_80_columns(tmp_path: Path) -> None:
    target = tmp_path / "committee"
    code, out = in_terminal([sys.executable, "-m", "cli", "init", str(target), "--key", f"{make_key('chair')}.pub",
                             "--name", "Dr A. Chair", "--role", "chair"], WIDTH, env=_env(), cwd=tmp_path)
    assert code == 0, out
    assert not _fits(out) and "results/: your run folders" in out, out
    code, out = in_terminal([sys.executable, "-m", "cli", "people", "add", "pharmacist", "--key",
                             f"{make_key('pharmacist')}.pub", "--name", "B. Pharmacist", "--new-role",
                             "renal pharmacist"], WIDTH, env=_env(), cwd=target)
    assert code == 0 and not _fits(out), out
    code, out = in_terminal([sys.executable, "-m", "cli", "people", "add", "ana", "--key",
                             f"{make_key('ana')}.pub", "--name", "Ana", "--role", "pharmacits"], WIDTH, env=_env(),
                            cwd=target)
    assert code == 1 and not _fits(out) and out.startswith("error: --role 'pharmacits'"), out


def test_stale_on_a_file_that_is_not_json_lines_answers_in_a_few_lines(tmp_path: Path) -> None:
    readme = PROJECT_ROOT / "README.md"
    code, out = in_terminal([sys.executable, "-m", "cli", "stale", str(readme)], WIDTH, env=_env(), cwd=tmp_path)
    assert code == 1 and "is not a JSON-lines results file" in out, out
    assert len(out.splitlines()) <= 4 and not _fits(out), out
    # into a pipe: the same message, one line (a log keeps it whole)
    piped = subprocess.run([sys.executable, "-m", "cli", "stale", str(readme)], capture_output=True, text=True,
                           env=_env(), cwd=tmp_path, timeout=120)
    assert piped.returncode == 1 and len(piped.stderr.splitlines()) == 1


def test_a_results_file_with_many_bad_lines_lists_five(tmp_path: Path) -> None:
    bad = tmp_path / "results.jsonl"
    bad.write_text("junk\n" * 40 + '{"a": 1}\n', encoding="utf-8")
    piped = subprocess.run([sys.executable, "-m", "cli", "stale", str(bad)], capture_output=True, text=True,
                           env=_env(), cwd=tmp_path, timeout=120)
    lines = piped.stderr.splitlines()
    assert piped.returncode == 1 and len(lines) == 7, piped.stderr  # five, "... and 36 more" (the row of no run too), the error
    assert "and 36 more lines like these" in lines[5]
