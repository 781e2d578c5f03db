"""docs/guide/cohorts-parquet.md runs as written: `formula convert --to parquet`, then `formula batch` on the file.

Every ```console block of the page is run in order in a fresh registry made by `formula init`
(tests.helpers.committee_registry), today fixed, and what each command prints must be the lines under it (a line
`...` alone matches any lines). To see what the commands print now:

    PYTHONPATH=. python -m tests.cli.test_guide_cohorts_parquet
"""
from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from registry.loader import PROJECT_ROOT
from tests.cli.test_readme_walkthroughs import Step, _masked, blocks, run_step, walkthrough_registry

PAGE = PROJECT_ROOT / "docs" / "guide" / "cohorts-parquet.md"


def page_steps() -> list[Step]:
    out: list[Step] = []
    for _, info, body in blocks(PAGE.read_text(encoding="utf-8")):
        if info != "console":
            continue
        for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
            lines = chunk.split("\n")
            out.append(Step(lines.pop(0), "\n".join(lines).rstrip("\n")))
    return out


def matches(got: str, want: str) -> bool:
    """`got` equals `want`, where a line `...` alone in `want` stands for any lines."""
    pattern = "\n".join(".*?" if line == "..." else re.escape(line) for line in want.split("\n"))
    return re.fullmatch(pattern, got, flags=re.S) is not None


def test_the_page_has_the_convert_and_batch_walkthrough() -> None:
    commands = [s.command for s in page_steps()]
    assert any(c.startswith("formula convert --to parquet") for c in commands)
    assert sum(c.startswith("formula batch") for c in commands) >= 3


def test_the_cohorts_parquet_page_prints_what_it_shows(tmp_path: Path) -> None:
    with walkthrough_registry(tmp_path) as (root, home):
        for step in page_steps():
            got = _masked(run_step(step, root, home), root)
            assert matches(got, _masked(step.expected)), (
                f"`$ {step.command}` prints otherwise; run `PYTHONPATH=. python -m "
                f"tests.cli.test_guide_cohorts_parquet` to see what it prints:\n{got}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d, walkthrough_registry(Path(d)) as (root, home):
        for step in page_steps():
            sys.stdout.write(f"$ {step.command}\n" + run_step(step, root, home).replace(str(root), "."))
