"""`formula audit ...` on an unreleased edit: the static check runs, the executable one refuses (the library would)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import edit, run


def test_completeness_on_an_unreleased_edit(registry_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(registry_copy / "formulas" / "ideal-body-weight.yaml", "value: 2.3", "value: 2.4")
    root = str(registry_copy)
    code, _, err = run(capsys, "audit", "completeness", "--root", root)
    assert code == 1 and "[R-LOCK-CHANGED]" in err
    assert err.splitlines()[-1].startswith("error: the registry has unreleased edits")
    code, out, _ = run(capsys, "audit", "completeness", "--root", root, "--no-cases")
    assert code == 0 and re.search(r"\ncurrent text: (\d+) of \1 complete", out)
    code, _, err = run(capsys, "audit", "deviations", "--root", root)
    assert code == 1 and err.splitlines()[-1].startswith("error: ")
