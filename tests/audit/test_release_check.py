"""The post-release audit (reference cases) is wired by the command line, never by importing its module."""
from __future__ import annotations

import importlib

import pytest


def test_importing_the_check_registers_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from registry.governance import writeplan

    monkeypatch.setattr(writeplan, "AFTER_RELEASE", [])
    import audit.release_check

    importlib.reload(audit.release_check)
    assert writeplan.AFTER_RELEASE == []


def test_a_releasing_command_wires_it_explicitly(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from audit.release_check import reference_lines
    from cli.main import main
    from registry.governance import writeplan

    monkeypatch.setattr(writeplan, "AFTER_RELEASE", [])
    with pytest.raises(SystemExit):
        main(["fix", "no-such-calculator", "--set"])  # a usage error: parsed, nothing run, nothing wired
    assert writeplan.AFTER_RELEASE == []
    main(["fix", "no-such-calculator", "--set", "x=1", "--reason", "test", "--root", "/nonexistent-registry"])
    assert writeplan.AFTER_RELEASE == [reference_lines]
    capsys.readouterr()
