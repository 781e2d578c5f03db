"""What every `formula` sub-command shares: the `--root` option, loading the registry, the error style.

Errors: a tool error prints `error: ...` on stderr and exits 1 (raise `CommandError`; the command
root in `cli.main` prints it); a usage error is argparse's (exit 2). Validation problems print one
a line, `path:line: field: problem [CODE]`, before the error line.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Callable

from registry.counted_nouns import counted
from registry.loader import ROOT_ENV, find_root, is_embedded, load, shown, where
from registry.model import Registry
from registry.schema import Calculator
from registry.terminal import printable, say, tell
from registry.toolerror import CommandError as CommandError  # defined there (importing nothing); commands use it here
from registry.validate import validate

ROOT_HELP = (f"registry root, the folder holding formulas/ and guidelines/ (default: ${ROOT_ENV}, else the "
             "nearest folder upwards from the current one holding both, else the copy installed with the "
             "package, read-only)")


def add_root(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", type=Path, default=None, help=ROOT_HELP)


def load_registry(root: Path | None, *, tolerate: Iterable[str] = (), partial: bool = False,
                  cached: bool = False) -> Registry:
    """Load and validate; refuse (printing each problem) unless every problem's code is in `tolerate`.

    With `partial` (read-only commands), calculator files that do not load are left out with a
    warning when they are the registry's only problems (registry.broken_files). With `cached` (read-only
    commands only), a registry whose every byte passed validation before is read from the cache
    (`loader.validated`); writers leave it False and always validate in full.
    """
    from registry.broken_files import leave_out, warning
    from registry.validate import first_fix

    if cached:
        from registry.loader import validated

        reg = validated(root)
    else:
        reg = load(root)
        validate(reg)
    allowed = frozenset(tolerate)
    bad = [p for p in reg.problems if p.code not in allowed]
    if bad and partial:
        note = warning(reg)
        if note is not None:
            say(printable(note), file=sys.stderr)
            leave_out(reg)
            return reg
    if bad:
        for p in bad:
            say(printable(p), file=sys.stderr)
        advice = first_fix(bad)
        raise CommandError(f"{counted(len(bad), 'problem')} in the registry at {shown(reg.root)}: "
                           + (printable(advice) if advice else "fix them first") + " (`formula validate` lists them)")
    return reg


def require_writable(root: Path | None) -> None:
    """Refuse to write into the read-only copy of the registry installed with the package."""
    if is_embedded(root):
        raise CommandError(f"the registry at {shown(find_root(root).path)} is the read-only copy installed with the package; "
                           "work in a registry of your own (`formula init DIR` makes one): run the command inside "
                           f"it, or pass --root DIR (or set {ROOT_ENV})")


def fail(message: str) -> int:
    """Print a tool error in the house style and return exit status 1."""
    tell(printable(f"error: {message}"), file=sys.stderr)
    return 1


def add_key(p: argparse.ArgumentParser) -> None:
    p.add_argument("--key", help="your OpenSSH signing key (or its .pub, the key held by ssh-agent); default "
                   "$FORMULA_SIGNING_KEY. The decision is signed, and recorded as the principal "
                   "formulas/policy/allowed_signers gives this key")


def add_format(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=["table", "json"], default="table",
                   help="table: for reading, fitted to the terminal (default); json: every field, never cut, for scripts")
    p.add_argument("--wide", action="store_true",
                   help="print the table at its full width, whatever the terminal's (no column left out)")


def load_valid(root: Path | None) -> Registry:
    # read-only: a broken calculator file leaves the others readable, and an unchanged registry that passed
    # validation before is read from the cache (list 0.95 s -> see bench/cli.py)
    return load_registry(root, partial=True, cached=True)


def find_calculator(reg: Registry, ref: str) -> Calculator:
    try:
        return reg.get(ref)
    except KeyError:
        if re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", ref) and ref != "units" and (reg.formulas_dir / f"{ref}.yaml").is_file():
            # a calculator left out of a partial reading (registry.broken_files)
            raise CommandError(printable(f"{ref} is left out: formulas/{ref}.yaml, or a calculator it uses, fails "
                                         "validation (`formula validate` lists the problems)")) from None
        from registry.suggest import unknown_calculator

        raise CommandError(unknown_calculator(reg, ref)) from None


def registry_line(root: Path | None) -> str:
    """The first line of `validate`, `verify` and every writer: which registry, and how it was found."""
    return printable(f"registry: {where(root)}")


def in_registry(message: str, root: Path | None) -> str:
    """A refusal (a key not listed, a policy not met, a bad file) with the registry it concerns, on its line."""
    found = find_root(root)
    return f"{message} (in the registry at {shown(found.path)}, {found.how})"


def maintain(root: Path | None, action: Callable[[], str]) -> int:
    """Run a registry-editing action: its output opens with the registry written to; its refusal is
    `error: ...` naming that registry and exit 1, never a traceback."""
    from registry.atomic import JournalRefused
    from registry.errors import ReleaseError
    from registry.yamlio import YamlError

    require_writable(root)
    try:
        done = action()
    except (ReleaseError, YamlError, JournalRefused) as e:
        raise CommandError(in_registry(str(e), root)) from None
    say(registry_line(root))
    tell(done)
    return 0

