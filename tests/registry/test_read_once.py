"""Traced: `formula fix` and `formula approve` read each registry file from disk once, validate the version they
make once and re-render only the texts whose inputs changed (issue 50: a walk found one calculator file read up
to three times, a version validated up to three times and all 62 texts re-rendered for one constant)."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import registry.governance.approving as approving
import registry.governance.release as releasing
import registry.governance.writeplan as writeplan
import registry.plain_files as plain_files
import registry.texts as texts
from tests.helpers import committee, copy_registry, run


class Trace:
    """Counts, per command: disk reads per file, validations of a calculator file, texts rendered."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
        self.reads: Counter[str] = Counter()
        self.validations = 0
        self.renders: list[str] = []
        real_read, real_render = plain_files._read_bytes, texts.render

        def read(path: Any, limit: Any) -> bytes:
            self.reads[str(Path(path).relative_to(root)) if str(path).startswith(str(root)) else str(path)] += 1
            return real_read(path, limit)

        def render(calc: Any, *a: Any, **k: Any) -> str:
            self.renders.append(calc.slug)
            return real_render(calc, *a, **k)

        monkeypatch.setattr(plain_files, "_read_bytes", read)
        monkeypatch.setattr(texts, "render", render)
        for module in (writeplan, releasing, approving):
            real = module.validated

            def validated(text: str, path: Path, _real: Any = real) -> Any:
                self.validations += 1
                return _real(text, path)

            monkeypatch.setattr(module, "validated", validated)

    def twice(self) -> dict[str, int]:
        return {p: n for p, n in self.reads.items() if n > 1}


def test_fix_then_approve_read_validate_and_render_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    root = copy_registry(tmp_path)
    people = committee(root, four_eyes=True)
    monkeypatch.setenv("FORMULA_SIGNING_KEY", str(people.keys["author"]))
    fix = Trace(monkeypatch, root)
    code, _, err = run(capsys, "fix", "meld-na", "--set", "score_cap=30", "--reason", "trace", "--root", str(root))
    assert code == 0, err
    assert fix.twice() == {} and fix.reads["formulas/meld-na.yaml"] == 1
    assert fix.validations == 1 and fix.renders == []  # a draft: nothing active changes, no text is rendered
    monkeypatch.undo()
    approve = Trace(monkeypatch, root)
    code, out, err = run(capsys, "approve", "meld-na", "1.2.0", "--reason", "trace", "--key", str(people.keys["chair"]),
                         "--root", str(root))
    assert code == 0 and "now active" in out, err
    assert approve.twice() == {} and approve.reads["formulas/drafts/meld-na.yaml"] == 1
    assert approve.validations == 1
    assert approve.renders == ["meld-na"]  # no other text reads meld-na (nothing depends on it)
    code, out, err = run(capsys, "validate", "--root", str(root))
    assert code == 0 and "registry OK" in out, err  # the catalogue written is the one a fresh render makes
