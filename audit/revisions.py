"""A registry as it stands at a git revision: the blobs git stores, read through git itself, never from .git's files.

`formula review-pr` compares two revisions of a registry repository. Each side's registry folders are
listed with `git ls-tree -r -z` and their blobs read with `git cat-file --batch` into a private
temporary folder: byte for byte what is committed. `git archive` is not used, because it obeys the
revision's own `.gitattributes` (export-ignore hides a file; export-subst, ident, filters and
encodings rewrite one), so a change could show the review other files than it merges. A link or a
submodule inside the registry folders is refused. The working tree is used as it is when no head
revision is given. Every path the change touches (`git diff --name-status`, renames and copies
included) is listed with whether the review read it (`touched`). Every failure to reach a revision
(not a repository, an unknown revision, a shallow clone that lacks it) is a `RevisionError` whose
message says how to fetch what is missing.
"""
from __future__ import annotations

import dataclasses
import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

REGISTRY_DIRS = ("formulas", "guidelines")
RESULTS_DIR = "results"
_GIT_TIMEOUT_S = 120
MAX_ARCHIVE_BYTES = 512 * 2**20  # the shipped registry and its runs are about 10 MiB; a pull request cannot ask for more
MAX_FILES = 100_000  # blobs a side's registry folders may hold
LINK, GITLINK = "120000", "160000"
CHUNK = 1 << 20  # bytes of a blob held in memory at once


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
    read: frozenset[str] = field(default_factory=frozenset)  # repository paths the review read (committed sides)
    touched: tuple[Touched, ...] = ()  # the head only: every path the change touches against the base


@dataclass(frozen=True)
class Touched:
    """One path the change touches, as `git diff --name-status` names it: A, M, D, T, R or C (renames and copies
    carry their source in `old`); `read`: whether the review read it on the side(s) where it exists."""

    status: str
    path: str
    old: str | None
    read: bool


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


def _listing(repo: Path, commit: str, paths: list[str]) -> list[tuple[str, str, int, str]]:
    """(mode, object id, size, path) of every entry under `paths` at `commit`, read as git lists them and stopped
    past MAX_FILES entries or MAX_ARCHIVE_BYTES of blobs (a hostile tree cannot make the listing itself large)."""
    out: list[tuple[str, str, int, str]] = []
    total, rest = 0, b""
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    with subprocess.Popen(["git", "-C", str(repo), "ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", *paths],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env) as proc:
        assert proc.stdout is not None
        while chunk := proc.stdout.read(CHUNK):
            *records, rest = (rest + chunk).split(b"\0")
            for rec in records:
                meta, _, name = rec.partition(b"\t")
                mode, _kind, oid, size = meta.decode("ascii", "replace").split()
                out.append((mode, oid, int(size) if size.isdigit() else 0, name.decode("utf-8", "surrogateescape")))
                total += out[-1][2]
            if len(out) > MAX_FILES or total > MAX_ARCHIVE_BYTES:
                proc.kill()
                raise RevisionError(f"revision {commit[:12]}'s registry folders hold more than the {MAX_FILES:,} "
                                    f"files or {MAX_ARCHIVE_BYTES // 2**20} MiB a registry review reads")
    if proc.returncode != 0:
        raise RevisionError(f"cannot list revision {commit[:12]} (git ls-tree exit {proc.returncode})")
    return out


def _target(dest: Path, commit: str, mode: str, path: str) -> Path:
    """Where a blob is written; a link, a submodule or a path that could leave `dest` refuses the revision."""
    why = None
    if mode == LINK:
        why = "is a symbolic link (a registry file is a file)"
    elif mode == GITLINK:
        why = "is a submodule, whose files the review cannot read"
    elif not mode.startswith("100"):
        why = f"has git mode {mode}"
    parts = PurePosixPath(path).parts
    if why is None and (not parts or path.startswith("/") or any(x in ("", ".", "..", ".git") for x in parts)):
        why = "is not a plain relative path"
    if why is not None:
        raise RevisionError(f"revision {commit[:12]} cannot be unpacked safely: {path!r} {why}")
    return dest.joinpath(*parts)


def _read_blobs(repo: Path, commit: str, listing: list[tuple[str, str, int, str]], dest: Path) -> None:
    """Each blob's stored bytes, one at a time through `git cat-file --batch` (no attribute, filter or
    conversion applies), written under `dest`."""
    targets = [(oid, size, _target(dest, commit, mode, path)) for mode, oid, size, path in listing]
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    with subprocess.Popen(["git", "-C", str(repo), "cat-file", "--batch"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            for oid, size, target in targets:
                proc.stdin.write(oid.encode("ascii") + b"\n")
                proc.stdin.flush()
                header = proc.stdout.readline().split()
                if len(header) != 3 or header[1] != b"blob" or int(header[2]) != size:
                    raise RevisionError(f"revision {commit[:12]}: git cannot read blob {oid} of {target.name}")
                target.parent.mkdir(parents=True, exist_ok=True)
                _copy(proc.stdout, target, size)
                proc.stdout.read(1)  # the newline after the content
        except OSError as e:
            raise RevisionError(f"revision {commit[:12]} cannot be unpacked safely: {e}") from None
        finally:
            proc.stdin.close()


def _copy(stream: Any, target: Path, size: int) -> None:
    """`size` bytes of `stream` into `target`, a chunk at a time: memory stays bounded whatever a blob holds."""
    with open(target, "xb") as out:
        left = size
        while left:
            chunk = stream.read(min(left, CHUNK))
            if not chunk:
                raise OSError(f"git stopped before the end of {target.name}")
            out.write(chunk)
            left -= len(chunk)


def extract(repo: Path, commit: str, prefix: str, dest: Path, *, results: bool) -> tuple[Path, frozenset[str]]:
    """Write the registry folders of `commit` (and results/ when asked) under `dest`, as git stores them; returns the
    registry root and the repository paths written."""
    paths = [p for p in _present(repo, commit, prefix) if results or not p.endswith(RESULTS_DIR)]
    if prefix + "formulas" not in paths:
        raise RevisionError(f"revision {commit[:12]} holds no {prefix}formulas/ folder: is it a registry revision?")
    dest.mkdir(parents=True, exist_ok=True)
    listing = _listing(repo, commit, paths)
    _read_blobs(repo, commit, listing, dest)
    return (dest / prefix if prefix else dest), frozenset(path for *_, path in listing)


def touched(repo: Path, base: str, head: str | None) -> list[tuple[str, str, str | None]]:
    """(status, path, source) of every path `head` (None: the working tree) changes against `base`, renames and
    copies found, whatever the repository's diff settings say."""
    p = _git(repo, "diff", "--name-status", "-z", "-M", "-C", "--no-ext-diff", "--no-textconv", "--ignore-submodules=none",
             base, *([head] if head else []), "--", binary=True)
    if p.returncode != 0:
        raise RevisionError(f"git diff {base[:12]} failed: {p.stderr.decode(errors='replace').strip()}")
    fields = [f.decode("utf-8", "surrogateescape") for f in p.stdout.split(b"\0")]
    out: list[tuple[str, str, str | None]] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i][:1]
        if status in ("R", "C"):
            out.append((status, fields[i + 2], fields[i + 1]))
            i += 3
        else:
            out.append((status, fields[i + 1], None))
            i += 2
    return out


DEFAULT_BRANCH = "main"


def merge_base(repo: Path, head: str | None) -> str:
    """The commit where the head (None: HEAD, under the working tree) left `main`: the base a pull request into main
    is reviewed against when no --base is given."""
    main = resolve(repo, DEFAULT_BRANCH)
    tip = resolve(repo, head) if head is not None else resolve(repo, "HEAD")
    p = _git(repo, "merge-base", main, tip)
    if p.returncode != 0 or not p.stdout.strip():
        raise RevisionError(f"{head or 'HEAD'} shares no history with {DEFAULT_BRANCH}: give the base with --base REV")
    return p.stdout.strip()


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


def _marked(changes: list[tuple[str, str, str | None]], base_read: frozenset[str], head_read: frozenset[str] | None,
            folders: tuple[str, ...]) -> tuple[Touched, ...]:
    """Each touched path with whether the review read it: on the head where it exists there, on the base where the
    change deletes it (or renames it away). `head_read` None: the working tree, read whole under `folders`."""
    def on_head(path: str) -> bool:
        return path.startswith(folders) if head_read is None else path in head_read

    def gone(path: str) -> bool:
        return path in base_read or path.startswith(folders[-1:])  # a deleted run is simply absent from results/

    out = []
    for status, path, old in changes:
        ok = gone(path) if status == "D" else on_head(path) and (status != "R" or old is None or gone(old))
        out.append(Touched(status, path, old, ok))
    return tuple(out)


@contextmanager
def sides(root: Path, base: str | None, head: str | None) -> Iterator[tuple[Side, Side]]:
    """The base (None: the merge-base of the head with main) and head registries (head None: the working tree at
    `root`), in folders removed afterwards; the head carries every path the change touches and whether the review
    read it."""
    repo, prefix = repository(root)
    if base is None:
        base_commit = merge_base(repo, head)
        base = f"merge-base with {DEFAULT_BRANCH}"
    else:
        base_commit = resolve(repo, base)
    head_commit = resolve(repo, head) if head is not None else None
    folders = tuple(f"{prefix}{d}/" for d in (*REGISTRY_DIRS, RESULTS_DIR))
    with tempfile.TemporaryDirectory(prefix="formula-review-") as tmp:
        base_root, base_read = extract(repo, base_commit, prefix, Path(tmp) / "base", results=False)
        changes = touched(repo, base_commit, head_commit)
        if head_commit is None:
            found = _checked_out(repo, root, prefix) or Side("working tree", None, root, working_tree=True)
            head_side = dataclasses.replace(found, touched=_marked(changes, base_read, None, folders))
        else:
            assert head is not None
            head_root, head_read = extract(repo, head_commit, prefix, Path(tmp) / "head", results=True)
            head_side = Side(head, head_commit, head_root, subject(repo, head_commit), read=head_read,
                             touched=_marked(changes, base_read, head_read, folders))
        yield Side(base, base_commit, base_root, subject(repo, base_commit), read=base_read), head_side


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
