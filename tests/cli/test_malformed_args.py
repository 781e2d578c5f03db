"""Every `formula` command, fed malformed arguments, answers with a message and an exit status, never a traceback.

The commands are enumerated from the parser itself (nested sub-commands included), so a new command is
covered the day it is registered. Each gets: no arguments, an unknown option, its required arguments
filled with a name that does not exist and with the path of a binary file, and then each of its options
given a bad value (a wrong choice, a non-number, a huge number, a binary file, a name that does not exist).
Everything runs in this process against a private copy of the registry; serving is stubbed so that a
command which gets as far as serving returns at once.
"""
from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.main import build_parser, main
from tests.helpers import copy_registry

HUGE = "99999999999999999999"


def leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...],
                                                                                      argparse.ArgumentParser]]:
    """(command words, parser) for every command that runs something."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for action in subs:
        for name, child in action.choices.items():
            yield from leaves(child, (*path, name))


def _options(p: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in p._actions if a.option_strings and a.nargs != 0
            and not isinstance(a, (argparse._HelpAction, argparse._VersionAction))]


def _is_path(a: argparse.Action) -> bool:
    return a.type is Path or getattr(a.type, "__name__", "") in ("Path", "FileType")


def _required(p: argparse.ArgumentParser, binary: str, everywhere: bool = False) -> list[str]:
    """The required arguments, each a name that does not exist (a path: the binary file), or all the binary file."""
    out: list[str] = []
    for a in p._actions:
        value = binary if everywhere or _is_path(a) else "no-such-thing"
        if not a.option_strings and not isinstance(a, argparse._SubParsersAction):
            out.append(a.choices[0] if a.choices else value)  # type: ignore[index]
        elif a.option_strings and a.required:
            out += [a.option_strings[0]] if a.nargs == 0 else [a.option_strings[0], value]
    return out


def _bad_values(a: argparse.Action, binary: str) -> list[str]:
    if a.choices:
        return ["no-such-choice"]
    if a.type is int or a.type is float:
        return ["abc", HUGE]
    if _is_path(a):
        return [binary]
    return [HUGE]  # a date, a ref, a name: a huge number is none of them


def argv_sets(binary: str, root: str) -> list[list[str]]:
    cases: list[list[str]] = []
    for words, p in leaves(build_parser()):
        has_root = any("--root" in a.option_strings for a in p._actions)
        base = [*words, *(["--root", root] if has_root else [])]
        needs = any(a.required or not a.option_strings for a in p._actions
                    if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)))
        cases.append([*base, "--no-such-option"])
        if needs:  # (without required arguments, the bare command is a valid call, not a malformed one)
            cases.append(list(words))
            cases += [[*base, *_required(p, binary)], [*base, *_required(p, binary, everywhere=True)]]
        for a in _options(p):
            if a.dest == "root" or a.required:
                continue
            for bad in _bad_values(a, binary):
                cases.append([*base, *_required(p, binary), a.option_strings[0], bad])
    return cases


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    tmp = tmp_path_factory.mktemp("malformed")
    binary = tmp / "binary.json"
    binary.write_bytes(bytes(range(256)) * 4)
    return str(binary), str(copy_registry(tmp / "registry"))


def _load_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Load and validate the private registry once, not once per call: the calls never change it (and the
    test stays fast); every module that imported `load_registry` gets the memoised one."""
    import sys

    from registry import cliutil

    real, seen = cliutil.load_registry, {}

    def once(root: Path | None, **kw: object) -> object:
        key = (str(root), repr(sorted(kw.items())))
        if key not in seen:
            seen[key] = real(root, **kw)  # type: ignore[arg-type]
        return seen[key]

    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("registry", "solver", "audit", "formula_site", "cli") and \
                getattr(module, "load_registry", None) is real:
            monkeypatch.setattr(module, "load_registry", once)


def test_every_command_is_enumerated() -> None:
    names = {" ".join(w) for w, _ in leaves(build_parser())}
    assert {"list", "show", "history", "review", "replay", "impact", "site serve", "audit completeness",
            "texts changed", "export fhir"} <= names


def test_malformed_arguments_never_raise(world: tuple[str, str], capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import http.server

    import solver.tools.mcp_server as mcp_server

    monkeypatch.setattr(http.server.ThreadingHTTPServer, "serve_forever", lambda self, *a, **k: None)
    monkeypatch.setattr(mcp_server, "serve_stdio", lambda *a, **k: None)
    monkeypatch.chdir(tmp_path)  # anything a command writes by default lands here
    _load_once(monkeypatch)
    binary, root = world
    failures = []
    for argv in argv_sets(binary, root):
        if argv[:2] == ["site", "build"] or argv[:2] == ["site", "serve"]:
            if not any(x in argv for x in ("--port", "--on", "--no-such-option")) and len(argv) > 2:
                continue  # a bad --results/--compare/--out is found by the (8 s) build: tests/site covers those
        try:
            code = main(argv)
        except SystemExit as e:  # argparse's usage error
            code = e.code if isinstance(e.code, int) else 2
        except BaseException as e:  # noqa: BLE001 - the point of the test
            failures.append(f"formula {' '.join(argv)}: {type(e).__name__}: {e}")
            continue
        err = capsys.readouterr().err
        if "Traceback" in err:
            failures.append(f"formula {' '.join(argv)}: traceback on stderr")
        elif code not in (0, 1, 2, 3):
            failures.append(f"formula {' '.join(argv)}: exit {code}")
    assert not failures, "\n".join(failures)
