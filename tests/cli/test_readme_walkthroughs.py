"""The README's governance and review walkthroughs run as written (issue 36).

Each transcript block of the two sections (a fence whose first line is a `$ ` prompt) is executed in README
order against one committee registry (tests.helpers.committee_registry: what `formula init` makes, plus the
stored gold-solve run the README names): a `formula` command in this process, anything else (git, echo,
printf) by bash in the registry folder, with HOME holding the people's keys. What each prints (stdout, then
stderr) must be the lines under it. Only what cannot repeat is masked, explicitly: commit ids (12 hex
digits) and key fingerprints (SHA256:...); every date is fixed by $FORMULA_TODAY (DAY below). To see what the
commands print now (to update the README after a change):

    PYTHONPATH=. .venv/bin/python -m tests.cli.test_readme_walkthroughs
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
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from registry.loader import PROJECT_ROOT
from tests.helpers import GIT_ID, committee_registry

README = PROJECT_ROOT / "README.md"
SECTIONS = ("## Governance workflow", "## Reviewing a pull request")
DAY = "2026-12-02"  # the walkthroughs' today (registry.clock.ENV)
STORED_RUN = PROJECT_ROOT / "results" / "embedded" / "gold-solve"
_VOLATILE = re.compile(r"\b[0-9a-f]{12}\b|SHA256(?::|&#58;)[A-Za-z0-9+/]{43}")
_ENV = re.compile(r"^[A-Z_][A-Z0-9_]*=")


@dataclass
class Step:
    command: str
    expected: str


def section(text: str, heading: str) -> str:
    """The section under `heading`, up to the next level-2 heading outside a fence."""
    start = text.index("\n" + heading + "\n") + 1
    out, fence = [], None
    for line in text[start:].splitlines()[1:]:
        m = re.match(r"^(`{3,})", line)
        if m and (fence is None or m.group(1) == fence):
            fence = m.group(1) if fence is None else None
        if fence is None and line.startswith("## "):
            break
        out.append(line)
    return "\n".join(out)


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


def transcripts(text: str) -> list[str]:
    """The bodies of the walkthrough sections' transcript blocks (text fences opening with a `$ ` prompt)."""
    return [body for heading in SECTIONS for _, info, body in blocks(section(text, heading))
            if info in ("", "text", "console") and body.startswith("$ ")]


def steps(text: str = "") -> list[Step]:
    """Every `$ ` command of the sections' transcript blocks, in README order, with the output shown under it."""
    text = text or README.read_text(encoding="utf-8")
    out: list[Step] = []
    for body in transcripts(text):
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
            main(argv)
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
        os.environ[k] = v  # the shell's own variable, for the steps after it (walkthrough_registry restores it)
        return ""
    env = {}
    while words and _ENV.match(words[0]):
        k, _, v = words.pop(0).partition("=")
        env[k] = v
    if words and words[0] == "formula" and not set(words) & {"&&", "||", ";", "|", ">", ">>"}:
        return _formula([os.path.expanduser(w) if w.startswith("~/") else w for w in words[1:]], env)
    git_env = {"GIT_AUTHOR_NAME": "Committee", "GIT_AUTHOR_EMAIL": "committee@example.org",
               "GIT_COMMITTER_NAME": "Committee", "GIT_COMMITTER_EMAIL": "committee@example.org",
               "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # `formula` in a pipeline
    p = subprocess.run(["bash", "-c", step.command], cwd=root, capture_output=True, text=True, timeout=300,
                       env={**os.environ, **git_env, "HOME": str(home), "PATH": path, **env})
    return p.stdout + p.stderr


@contextlib.contextmanager
def walkthrough_registry(tmp: Path) -> Iterator[tuple[Path, Path]]:
    """The committee registry with the stored run the README names, committed; cwd, HOME and today set."""
    root = committee_registry(tmp)
    shutil.copytree(STORED_RUN, root / "results" / "gold-solve")
    for args in (["add", "-A"], ["commit", "-qm", "The gold-solve run"]):
        subprocess.run(["git", *GIT_ID, *args], cwd=root, check=True, capture_output=True, timeout=60)
    home = tmp / "home"
    saved = {k: os.environ.get(k) for k in ("HOME", "FORMULA_TODAY", "FORMULA_REGISTRY_ROOT", "COLUMNS")}
    cwd = os.getcwd()
    os.environ.update(HOME=str(home), FORMULA_TODAY=DAY, COLUMNS="80")
    os.environ.pop("FORMULA_REGISTRY_ROOT", None)  # found from the current folder, as a person's shell finds it
    os.chdir(root)
    try:
        yield root, home
    finally:
        os.chdir(cwd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _masked(text: str, root: Path | None = None) -> str:
    """Commit ids and key fingerprints masked; the temporary registry's path written as the folder one is in."""
    if root is not None:
        text = text.replace(str(root), ".")
    return _VOLATILE.sub("…", text).rstrip("\n")


def test_the_walkthroughs_have_steps() -> None:
    found = steps()
    commands = [s.command.split()[0] for s in found]
    assert commands.count("formula") >= 8, commands
    assert any(s.command.startswith("formula review-pr") for s in found)


def test_the_readmes_governance_and_review_walkthroughs_print_what_they_show(tmp_path: Path) -> None:
    with walkthrough_registry(tmp_path) as (root, home):
        for step in steps():
            got = run_step(step, root, home)
            assert _masked(got, root) == _masked(step.expected), (
                f"README step `$ {step.command}` prints otherwise; run "
                f"`PYTHONPATH=. python -m tests.cli.test_readme_walkthroughs` to see what it prints:\n{got}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d, walkthrough_registry(Path(d)) as (root, home):
        for step in steps():
            sys.stdout.write(f"$ {step.command}\n" + run_step(step, root, home).replace(str(root), "."))
