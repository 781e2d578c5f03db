"""Run the ```console blocks of a Markdown page as a person would, and compare what they print.

A console block is a fence whose info string is `console`: lines starting with `$ ` are commands (a line
ending in `\\` continues on the next), the lines under a command its exact output (stdout, then stderr).
A `formula` command runs in this process (cli.main.main); anything else (git, printf, python3 -c) runs in
bash in the registry folder, with HOME holding the people's keys. Only what cannot repeat is masked: commit
ids (12 hex digits) and key fingerprints (SHA256:...); every date is fixed by $FORMULA_TODAY (DAY). An
expected line `...` alone matches any number of lines (none included).
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from registry.loader import PROJECT_ROOT
from tests.helpers import GIT_ID, committee_registry

DAY = "2026-12-02"  # the pages' today (registry.clock.ENV)
STORED_RUN = PROJECT_ROOT / "results" / "embedded" / "gold-solve"
ELLIPSIS = "..."
_VOLATILE = re.compile(r"\b[0-9a-f]{12}\b|SHA256(?::|&#58;)[A-Za-z0-9+/]{43}")
_ENV = re.compile(r"^[A-Z_][A-Z0-9_]*=")


@dataclass
class Step:
    command: str
    expected: str


def blocks(text: str) -> list[tuple[str, str, str]]:
    """The fenced blocks of `text` as (fence, info string, body): a fence closes only on its own backticks."""
    out: list[tuple[str, str, str]] = []
    fence, info, body = None, "", []
    for line in text.splitlines():
        m = re.match(r"^(`{3,})(.*)$", line)
        if fence is None and m:
            fence, info, body = m.group(1), m.group(2).strip(), []
        elif fence is not None and line == fence:
            out.append((fence, info, "\n".join(body)))
            fence = None
        elif fence is not None:
            body.append(line)
    return out


def console_blocks(text: str) -> list[str]:
    """The bodies of the page's ```console blocks, in order."""
    return [body for _, info, body in blocks(text) if info == "console"]


def steps(bodies: list[str]) -> list[Step]:
    """Every `$ ` command of the blocks, in order, with the output shown under it."""
    out: list[Step] = []
    for body in bodies:
        for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
            lines = chunk.split("\n")
            command = lines.pop(0)
            while command.endswith("\\"):
                command = command[:-1] + " " + lines.pop(0).strip()
            out.append(Step(command, "\n".join(lines).rstrip("\n")))
    return out


def _formula(argv: list[str], env: dict[str, str]) -> str:
    from cli.main import main
    from registry.loader import clear_cache

    clear_cache()
    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(argv)
            except SystemExit:  # argparse's usage errors and --help: what they printed is the output
                pass
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return out.getvalue() + err.getvalue()


def run_step(step: Step, root: Path, home: Path) -> str:
    """What one command prints, run as a person would in the registry folder."""
    words = shlex.split(step.command, comments=True)
    if len(words) == 2 and words[0] == "export" and _ENV.match(words[1]):
        k, _, v = words[1].partition("=")
        os.environ[k] = v  # the shell's own variable, for the steps after it (page_registry restores it)
        return ""
    env = {}
    while words and _ENV.match(words[0]):
        k, _, v = words.pop(0).partition("=")
        env[k] = v
    if words and words[0] == "formula" and not set(words) & {"&&", "||", ";", "|", ">", ">>", "<", "2>&1"}:
        return _formula([os.path.expanduser(w) if w.startswith("~/") else w for w in words[1:]], env)
    git_env = {"GIT_AUTHOR_NAME": "Committee", "GIT_AUTHOR_EMAIL": "committee@example.org",
               "GIT_COMMITTER_NAME": "Committee", "GIT_COMMITTER_EMAIL": "committee@example.org",
               "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # `formula` in a pipeline
    p = subprocess.run(["bash", "-c", step.command], cwd=root, capture_output=True, text=True, timeout=300,
                       env={**os.environ, **git_env, "HOME": str(home), "PATH": path, **env})
    return p.stdout + p.stderr


@contextlib.contextmanager
def page_registry(tmp: Path) -> Iterator[tuple[Path, Path]]:
    """A fresh committee registry (`formula init`, committed on main) with the stored gold-solve run
    committed; cwd, HOME (the people's keys), today and an 80-column terminal set, restored after."""
    root = committee_registry(tmp)
    shutil.copytree(STORED_RUN, root / "results" / "gold-solve")
    for args in (["add", "-A"], ["commit", "-qm", "The gold-solve run"]):
        subprocess.run(["git", *GIT_ID, *args], cwd=root, check=True, capture_output=True, timeout=60)
    home = tmp / "home"
    saved = dict(os.environ)  # a page's `export NAME=...` lasts for that page only
    cwd = os.getcwd()
    os.environ.update(HOME=str(home), FORMULA_TODAY=DAY, COLUMNS="80")
    os.environ.pop("FORMULA_REGISTRY_ROOT", None)  # found from the current folder, as a person's shell finds it
    os.chdir(root)
    try:
        yield root, home
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(saved)


def masked(text: str, root: Path | None = None) -> str:
    """Commit ids and key fingerprints masked; the temporary registry's path written as the folder one is in."""
    if root is not None:
        text = text.replace(str(root), ".")
    return _VOLATILE.sub("…", text).rstrip("\n")


def matches(expected: list[str], got: list[str]) -> bool:
    """`got` is `expected` line for line, where an expected line `...` alone stands for any lines (none too)."""
    parts: list[list[str]] = [[]]
    for line in expected:
        if line == ELLIPSIS:
            parts.append([])
        else:
            parts[-1].append(line)
    if len(parts) == 1:
        return got == expected
    first, *middle, last = parts
    if got[:len(first)] != first or len(got) < len(first) + len(last) or (last and got[-len(last):] != last):
        return False
    at, end = len(first), len(got) - len(last)
    for part in middle:  # each run of lines at its leftmost place: any later match leaves less room
        found = next((i for i in range(at, end - len(part) + 1) if got[i:i + len(part)] == part), None)
        if found is None:
            return False
        at = found + len(part)
    return True


def same(expected: str, got: str, root: Path | None = None) -> bool:
    """What a step printed is what the page shows under it (masked; `...` lines match anything)."""
    want, have = masked(expected), masked(got, root)
    return matches(want.split("\n") if want else [], have.split("\n") if have else [])
