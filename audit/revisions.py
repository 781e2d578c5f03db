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
    """One side of a review: the revision as given (or the branch checked out), the commit it names, its subject
    line, the root; `working_tree`: the registry folders as they stand on disk, with changes not committed
    (then `commit` is the commit they sit on)."""

    label: str
    commit: str | None
    root: Path
    subject: str | None = None
    working_tree: bool = False


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


def subject(repo: Path, commit: str) -> str | None:
    """The commit's subject line (its message's first line)."""
    p = _git(repo, "log", "-1", "--format=%s", commit)
    return p.stdout.strip() or None if p.returncode == 0 else None


def _checked_out(repo: Path, root: Path, prefix: str) -> Side | None:
    """The working tree as a side: named by the commit checked out (and its branch) when the registry folders
    hold nothing uncommitted, else "working tree" on top of that commit. None before the first commit."""
    head = _git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if head.returncode != 0:
        return None
    commit = head.stdout.strip()
    folders = [prefix + d for d in (*REGISTRY_DIRS, RESULTS_DIR)]
    dirty = _git(repo, "status", "--porcelain", "--untracked-files=all", "--", *folders)
    branch = _git(repo, "symbolic-ref", "--quiet", "--short", "HEAD").stdout.strip()
    clean = dirty.returncode == 0 and not dirty.stdout.strip()
    label = (branch or "HEAD") if clean else "working tree"
    return Side(label, commit, root, subject(repo, commit), working_tree=not clean)


@contextmanager
def sides(root: Path, base: str, head: str | None) -> Iterator[tuple[Side, Side]]:
    """The base and head registries (head None: the working tree at `root`), in folders removed afterwards."""
    repo, prefix = repository(root)
    base_commit = resolve(repo, base)
    head_commit = resolve(repo, head) if head is not None else None
    with tempfile.TemporaryDirectory(prefix="formula-review-") as tmp:
        base_root = extract(repo, base_commit, prefix, Path(tmp) / "base", results=False)
        if head_commit is None:
            head_side = _checked_out(repo, root, prefix) or Side("working tree", None, root, working_tree=True)
        else:
            assert head is not None
            head_side = Side(head, head_commit, extract(repo, head_commit, prefix, Path(tmp) / "head", results=True),
                             subject(repo, head_commit))
        yield Side(base, base_commit, base_root, subject(repo, base_commit)), head_side


def head_of(root: Path) -> tuple[str | None, bool]:
    """(the commit checked out where `root` is, whether its registry folders differ from it); (None, False)
    outside a repository or without git. What a built site says it was built from."""
    try:
        head = _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
        if head.returncode != 0 or not head.stdout.strip():
            return None, False
        dirty = _git(root, "status", "--porcelain", "--", *REGISTRY_DIRS)
    except RevisionError:
        return None, False
    return head.stdout.strip(), bool(dirty.returncode == 0 and dirty.stdout.strip())
