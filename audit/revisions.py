"""A registry as it stands at a git revision, read through git itself (`git archive`), never from .git's files.

`formula review-pr` compares two revisions of a registry repository. Each side is extracted into a
private temporary folder; the working tree is used as it is when no head revision is given. Every
failure to reach a revision (not a repository, an unknown revision, a shallow clone that lacks it)
is a `RevisionError` whose message says how to fetch what is missing.
"""
from __future__ import annotations

import os
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REGISTRY_DIRS = ("formulas", "guidelines")
RESULTS_DIR = "results"
_GIT_TIMEOUT_S = 120
MAX_ARCHIVE_BYTES = 512 * 2**20  # the shipped registry and its runs are about 10 MiB; a pull request cannot ask for more


class RevisionError(Exception):
    """A revision that cannot be read; the message says why and how to fetch it."""


@dataclass(frozen=True)
class Side:
    """One side of a review: the revision as given, the commit it names (None: the working tree), the root."""

    label: str
    commit: str | None
    root: Path


def _git(repo: Path, *args: str, binary: bool = False) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=not binary, env=env,
                              timeout=_GIT_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise RevisionError("git is not installed: install it (e.g. `apt-get install git`) to review revisions") from None
    except subprocess.TimeoutExpired:
        raise RevisionError(f"git {args[0]} took longer than {_GIT_TIMEOUT_S} s in {repo}") from None


def repository(root: Path) -> tuple[Path, str]:
    """The repository holding `root`, and `root`'s path inside it ('' at the top, else 'sub/dir/')."""
    p = _git(root, "rev-parse", "--show-toplevel")
    if p.returncode != 0:
        raise RevisionError(f"{root} is not inside a git repository (git says: {p.stderr.strip()}); review-pr "
                            "compares two revisions of a registry repository")
    top = Path(p.stdout.strip()).resolve()
    rel = root.resolve().relative_to(top).as_posix()
    return top, "" if rel == "." else rel + "/"


def resolve(repo: Path, rev: str) -> str:
    """The commit `rev` names; a clear error (and how to fetch it) when the repository lacks it."""
    if not rev or rev.startswith("-"):
        raise RevisionError(f"{rev!r} is not a revision: give a commit, branch or tag")
    p = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    if p.returncode == 0:
        return p.stdout.strip()
    shallow = _git(repo, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"
    if shallow:
        raise RevisionError(f"unknown revision {rev!r}: this clone is shallow and lacks it; fetch the history "
                            f"(`git fetch --unshallow`) or the revision itself (`git fetch origin {rev}`), or check "
                            "out with full history (actions/checkout: fetch-depth: 0)")
    raise RevisionError(f"unknown revision {rev!r} in {repo}: check its spelling (`git log --oneline`), or fetch it "
                        f"(`git fetch origin {rev}`)")


def _present(repo: Path, commit: str, prefix: str) -> list[str]:
    """Which of the registry's folders (and results/) the commit holds."""
    names = [prefix + d for d in (*REGISTRY_DIRS, RESULTS_DIR)]
    p = _git(repo, "ls-tree", "--name-only", commit, "--", *names)
    if p.returncode != 0:
        raise RevisionError(f"cannot list revision {commit[:12]}: {p.stderr.strip()}")
    return sorted(set(p.stdout.split()))


def extract(repo: Path, commit: str, prefix: str, dest: Path, *, results: bool) -> Path:
    """Write the registry folders of `commit` (and results/ when asked) under `dest`; returns the registry root.

    `git archive` produces the tree; the tar is unpacked with the `data` filter, which refuses absolute
    paths and links that leave `dest` (a revision's files are untrusted: they come from a pull request).
    """
    paths = [p for p in _present(repo, commit, prefix) if results or not p.endswith(RESULTS_DIR)]
    if prefix + "formulas" not in paths:
        raise RevisionError(f"revision {commit[:12]} holds no {prefix}formulas/ folder: is it a registry revision?")
    dest.mkdir(parents=True, exist_ok=True)
    archive = dest.with_suffix(".tar")
    p = _git(repo, "archive", "--format=tar", f"--output={archive}", commit, "--", *paths, binary=True)
    if p.returncode != 0:
        raise RevisionError(f"git archive {commit[:12]} failed: {p.stderr.decode(errors='replace').strip()}")
    size = archive.stat().st_size
    if size > MAX_ARCHIVE_BYTES:
        raise RevisionError(f"revision {commit[:12]}'s registry folders hold {size / 2**20:.0f} MiB, more than the "
                            f"{MAX_ARCHIVE_BYTES // 2**20} MiB a registry review reads")
    try:
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
    except (tarfile.TarError, OSError) as e:
        raise RevisionError(f"revision {commit[:12]} cannot be unpacked safely: {e}") from None
    finally:
        archive.unlink(missing_ok=True)
    return dest / prefix if prefix else dest


@contextmanager
def sides(root: Path, base: str, head: str | None) -> Iterator[tuple[Side, Side]]:
    """The base and head registries (head None: the working tree at `root`), in folders removed afterwards."""
    repo, prefix = repository(root)
    base_commit = resolve(repo, base)
    head_commit = resolve(repo, head) if head is not None else None
    with tempfile.TemporaryDirectory(prefix="formula-review-") as tmp:
        base_root = extract(repo, base_commit, prefix, Path(tmp) / "base", results=False)
        if head_commit is None:
            head_side = Side("working tree", None, root)
        else:
            assert head is not None
            head_side = Side(head, head_commit, extract(repo, head_commit, prefix, Path(tmp) / "head", results=True))
        yield Side(base, base_commit, base_root), head_side
