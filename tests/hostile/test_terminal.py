"""Terminal spoofing: no control character from a program, a record or the registry reaches the terminal
raw; one helper (registry.terminal) escapes them for every human-facing output."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from registry.terminal import printable
from solver.router.core import solve
from tests.helpers import copy_registry, run

# Clear the screen and draw a fake answer; overwrite the line; reorder it; ring; 8-bit CSI; line separator.
SPOOFS = ["\x1b[2J\x1b[Hmdrd-gfr 1.0.0 (benchmark): 90.0", "ok\rFAKE", "\u202egro.live", "\x07bell", "\x9b31m",
          "a\u2028b", "\x1b]0;title\x07"]
RAW = ("\x1b", "\r", "\u202e", "\x07", "\x9b", "\u2028")


def clean(text: str) -> bool:
    return not any(c in text for c in RAW)


@pytest.mark.parametrize("s", SPOOFS)
def test_printable_escapes_controls_visibly(s: str) -> None:
    out = printable(s)
    assert clean(out) and "\\" in out
    assert printable("line\n\tnext", multiline=True) == "line\n\tnext"
    assert printable("line\nnext") == "line\\x0anext"
    assert printable("µmol/L · 5 ≥ 3 — é") == "µmol/L · 5 ≥ 3 — é"


def test_exec_uses_the_one_helper() -> None:
    from solver import exec_cli

    assert exec_cli.printable is printable


@pytest.mark.parametrize("spoof", SPOOFS[:3])
def test_solve_prints_a_programs_message_escaped(spoof: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "p.py"
    p.write_text(f"def solve():\n    raise ValueError({spoof!r})\n", encoding="utf-8")
    code, out, err = run(capsys, "solve", "--calculator", "6", "--entities", "{}", "--program", str(p),
                         "--route", "program")
    assert code == 3 and "abstained" in out
    assert clean(out) and clean(err)


@pytest.mark.parametrize("spoof", SPOOFS[:3])
def test_replay_prints_record_fields_escaped(spoof: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rec = json.loads(solve("body-mass-index", {"weight": [70, "kg"], "height": [175, "cm"]}, variant="benchmark").model_dump_json())
    rec["value"] = spoof
    rec["version"] = rec["version"]
    f = tmp_path / "r.json"
    f.write_text(json.dumps(rec), encoding="utf-8")
    code, out, err = run(capsys, "replay", str(f))
    assert code == 3 and "DIFFERS" in out and clean(out) and clean(err)
    rec["calculator"] = spoof  # an unknown calculator: the error names it, escaped
    f.write_text(json.dumps(rec), encoding="utf-8")
    code, out, err = run(capsys, "replay", str(f))
    assert code == 1 and clean(out) and clean(err)


@pytest.mark.parametrize("spoof", [SPOOFS[0], SPOOFS[2]])
def test_reviewer_names_reach_show_and_history_escaped(spoof: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    root = copy_registry(tmp_path)
    code, out, err = run(capsys, "review", "body-mass-index", "--by", spoof, "--role", spoof, "--root", str(root))
    assert clean(out) and clean(err)
    if code != 0:  # a registry that refuses such a name never shows it
        return
    for argv in (["show", "body-mass-index"], ["history", "body-mass-index"], ["changelog"]):
        code, out, err = run(capsys, *argv, "--root", str(root))
        assert clean(out) and clean(err), argv
    code, out, _ = run(capsys, "show", "body-mass-index", "--root", str(root))
    assert "reviewed by \\x1b" in out or "reviewed by \\u202e" in out


def test_tool_errors_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "solve", "--calculator", "\x1b[2Jnope", "--entities", "{}")
    assert code == 1 and "error:" in err and clean(err)


def test_batch_errors_are_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in.csv"
    src.write_text("weight,height\n70,175\n", encoding="utf-8")
    code, out, err = run(capsys, "batch", str(src), "--calculator", "\x1b[2Jnope", "--out", str(tmp_path / "o.csv"),
                         "--no-progress")
    assert code == 1 and "error:" in err and clean(err) and clean(out)
