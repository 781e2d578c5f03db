"""Issue 49, item 1: `formula review-pr` reads what git stores, not what the change's own `.gitattributes` makes
of it, and every path the change touches is listed beside whether the review read it.

`git archive` obeys the revision's attributes: export-ignore hides a file, export-subst and ident rewrite one,
eol and working-tree-encoding convert it, a filter's smudge runs. Each kind is generated below against the
blobs themselves (`git cat-file blob`), and a hidden broken file must still fail the review.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from audit.revisions import RevisionError, extract, repository, resolve
from tests.audit.test_review_pr import git, make_repo
from tests.helpers import run

CALCIUM = "formulas/calcium-correction.yaml"
GAP = "formulas/anion-gap.yaml"

# attribute lines a change may add, and repository settings that make them act (a filter needs a driver)
ATTRIBUTES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "export-ignore": (f"{CALCIUM} export-ignore", []),
    "export-subst": (f"{CALCIUM} export-subst", []),
    "ident": (f"{CALCIUM} ident", []),
    "eol crlf": (f"{CALCIUM} text eol=crlf", []),
    "working-tree-encoding": (f"{CALCIUM} working-tree-encoding=UTF-16LE", []),
    "smudge filter": (f"{CALCIUM} filter=hide", [("filter.hide.smudge", "sed s/0.8/9.9/"),
                                                  ("filter.hide.clean", "cat")]),
    "a whole folder ignored": ("formulas/** export-ignore", []),
}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("reads") / "repo")


def _blob(repo: Path, rev: str, path: str) -> bytes:
    return subprocess.run(["git", "cat-file", "blob", f"{rev}:{path}"], cwd=repo, check=True,
                          capture_output=True).stdout


def _archived(repo: Path, rev: str, path: str) -> bytes | None:
    """The file as `git archive` exports it (None: left out)."""
    import io
    import tarfile

    tar = subprocess.run(["git", "archive", "--format=tar", rev, "--", "formulas"], cwd=repo, check=True,
                         capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        member = next((m for m in t.getmembers() if m.name == path), None)
        f = t.extractfile(member) if member is not None else None
        return f.read() if f is not None else None


@pytest.mark.parametrize("kind", sorted(ATTRIBUTES))
def test_each_file_of_a_side_is_the_blob_git_stores_whatever_the_attributes(shared: Path, tmp_path: Path,
                                                                          kind: str) -> None:
    line, config = ATTRIBUTES[kind]
    branch = "attr-" + kind.replace(" ", "-")
    git(shared, "checkout", "-qb", branch, "main")
    for name, value in config:
        git(shared, "config", name, value)
    text = (shared / CALCIUM).read_text(encoding="utf-8")
    (shared / CALCIUM).write_text(text + "# $Format:%H$ $Id$\n", encoding="utf-8")  # words export-subst and ident act on
    git(shared, "commit", "-qam", "the words attributes act on")
    (shared / ".gitattributes").write_text(line + "\n", encoding="utf-8")  # then the attributes, alone
    git(shared, "add", ".gitattributes")
    git(shared, "commit", "-qm", kind)
    assert _archived(shared, branch, CALCIUM) != _blob(shared, branch, CALCIUM)  # what `git archive` would show
    repo, prefix = repository(shared)
    root, read = extract(repo, resolve(repo, branch), prefix, tmp_path / "side", results=True)
    for path in (CALCIUM, GAP):
        assert (root / path).read_bytes() == _blob(shared, branch, path), (kind, path)
    assert CALCIUM in read and ".gitattributes" not in read


def test_a_file_the_attributes_hide_still_fails_the_review(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / GAP).write_text((repo / GAP).read_text(encoding="utf-8").replace("name: ", "name: [unclosed ", 1),
                            encoding="utf-8")
    (repo / ".gitattributes").write_text(f"{GAP} export-ignore\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "hide a broken file")
    code, out, _ = run(capsys, "review-pr", "--base", "main", "--head", "change", "--root", str(repo),
                       "--format", "json")
    report = json.loads(out)
    assert code == 1 and any("anion-gap.yaml" in p and "R-YAML" in p for p in report["problems"])
    paths = {p["path"]: p for p in report["paths"]}
    assert paths[GAP]["read"] is True and paths[".gitattributes"]["read"] is False
    assert any(w.startswith(".gitattributes: the change adds this path, which the review did not read")
               for w in report["blocking"])


@pytest.mark.parametrize("how", ["outside file", "rename out", "rename in", "working tree"])
def test_every_touched_path_is_listed_and_one_not_read_blocks(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              how: str) -> None:
    repo = make_repo(tmp_path / "repo")
    if how == "outside file":
        (repo / "notes.md").write_text("a note\n", encoding="utf-8")
    elif how == "rename out":
        git(repo, "mv", "guidelines", "elsewhere")
    elif how == "rename in":
        (repo / "stash.yaml").write_text((repo / CALCIUM).read_text(encoding="utf-8"), encoding="utf-8")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "stash")
        git(repo, "branch", "-f", "main")  # the base holds stash.yaml; the change moves it into the registry
        git(repo, "mv", "-f", "stash.yaml", "formulas/policy/stash.yaml")
    else:
        (repo / "run.sh").write_text("echo\n", encoding="utf-8")
    if how != "working tree":
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", how)
    else:
        git(repo, "add", "run.sh")
    head = [] if how == "working tree" else ["--head", "change"]
    code, out, _ = run(capsys, "review-pr", "--base", "main", *head, "--root", str(repo), "--format", "json")
    report = json.loads(out)
    unread = [p["path"] for p in report["paths"] if not p["read"]]
    assert code == 1 and unread and all(any(w.startswith(f"{u}: the change") for w in report["blocking"])
                                        for u in unread), report["paths"]
    code, md, _ = run(capsys, "review-pr", "--base", "main", *head, "--root", str(repo))
    assert code == 1 and "not read by this review" in md and "### Blocking:" in md


def test_a_change_inside_the_registry_alone_is_all_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "formulas" / "policy" / "NOTE.md").write_text("who we are\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a note in the registry")
    code, out, _ = run(capsys, "review-pr", "--base", "main", "--head", "change", "--root", str(repo),
                       "--format", "json")
    report = json.loads(out)
    assert report["paths"] == [{"status": "A", "path": "formulas/policy/NOTE.md", "old": None, "read": True}]
    assert report["blocking"] == []


@pytest.mark.parametrize("mode", ["submodule", "link"])
def test_a_submodule_or_link_in_the_registry_refuses_the_revision(shared: Path, tmp_path: Path, mode: str) -> None:
    branch = f"odd-{mode}"
    git(shared, "checkout", "-qb", branch, "main")
    if mode == "submodule":
        commit = git(shared, "rev-parse", "HEAD")
        git(shared, "update-index", "--add", "--cacheinfo", f"160000,{commit},formulas/vendored")
    else:
        (shared / "formulas" / "inner.yaml").symlink_to("anion-gap.yaml")
        git(shared, "add", "-A")
    git(shared, "commit", "-qm", mode)
    repo, prefix = repository(shared)
    with pytest.raises(RevisionError, match="cannot be unpacked safely"):
        extract(repo, resolve(repo, branch), prefix, tmp_path / "side", results=True)


@pytest.mark.parametrize("cap, value", [("MAX_FILES", 10), ("MAX_ARCHIVE_BYTES", 4096)])
def test_a_side_past_the_review_caps_is_refused_before_it_is_read(shared: Path, tmp_path: Path, cap: str, value: int,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from audit import revisions

    monkeypatch.setattr(revisions, cap, value)
    repo, prefix = repository(shared)
    with pytest.raises(RevisionError, match="more than the"):
        extract(repo, resolve(repo, "main"), prefix, tmp_path / "side", results=True)
    assert not (tmp_path / "side" / "formulas").exists()  # nothing was written
