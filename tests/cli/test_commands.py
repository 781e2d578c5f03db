"""The command root: every registry-reading command takes --root, one error style, exit codes 0/1/2."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from cli.main import build_parser
from registry import codes
from tests.helpers import edit, run

NO_REGISTRY = {"exec", "init"}  # commands that never read a registry (init copies the shipped one into a new)


def _leaves(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return {prefix: parser}
    out = {}
    for name, p in subs[0].choices.items():
        out.update(_leaves(p, prefix + (name,)))
    return out


def test_every_command_that_reads_the_registry_takes_root() -> None:
    leaves = _leaves(build_parser())
    assert ("audit", "deviations") in leaves and ("solve",) in leaves and ("schema",) in leaves
    missing = [" ".join(k) for k, p in leaves.items()
               if k[0] not in NO_REGISTRY and not any("--root" in a.option_strings for a in p._actions)]
    assert not missing, f"commands without --root: {missing}"


def test_tool_errors_say_error_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["show", "no-such-calculator"], ["solve", "--calculator", "2", "--entities", "{}", "--root",
                                                   str(tmp_path)],
                 ["audit", "deviations", "--root", str(tmp_path)], ["list", "--root", str(tmp_path)],
                 ["due", "--on", "tomorrow"]):
        code, _, err = run(capsys, *argv)
        assert code == 1, argv
        assert err.splitlines()[-1].startswith("error: "), (argv, err)
        assert "Traceback" not in err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        run(capsys, "list", "--no-such-option")
    assert info.value.code == 2


def test_every_problem_carries_a_rule_code(registry_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(registry_copy / "formulas" / "body-mass-index.yaml", "category: physical\n", "category: nope\n")
    edit(registry_copy / "formulas" / "ideal-body-weight.yaml", "value: 2.3", "value: 2.4")
    code, out, _ = run(capsys, "validate", "--root", str(registry_copy))
    known = {v for k, v in vars(codes).items() if k.isupper() and isinstance(v, str)}
    assert code == 1
    first, *lines = out.strip().splitlines()
    assert first == f"registry: {registry_copy} (given by --root)"
    assert lines and all(re.search(r" \[R-[A-Z-]+\]$", line) for line in lines), lines
    assert {line.rsplit("[", 1)[1].rstrip("]") for line in lines} <= known


def test_rule_codes_are_distinct() -> None:
    values = [v for k, v in vars(codes).items() if k.isupper() and isinstance(v, str)]
    assert len(values) == len(set(values))
    assert codes.UNRELEASED <= set(values) and codes.UNREADABLE <= set(values)
