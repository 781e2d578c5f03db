"""Where the registry is found, as git finds its repository: --root, else $FORMULA_REGISTRY_ROOT, else the nearest
folder upwards from the current one holding formulas/ and guidelines/, else the installed copy (read-only).

The end-to-end test is the committee's: every command of `cli.main.COMMANDS`, each in a process of its own, run
from a subfolder of the committee's own registry (a git repository) with no --root and no $FORMULA_REGISTRY_ROOT.
Every one must read the committee's registry, every writer write into it, and the project's own registry (this
checkout's formulas/, guidelines/ and results/, and the export the suite reads) stay byte for byte as it was.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import COMMANDS
from registry import loader
from registry.versions import bump
from tests.helpers import PROJECT_ROOT, SHIPPED_ROOT, committee, copy_registry, make_key
from tests.registry.helpers import NEW, SODIUM

CALCIUM = "calcium-correction"
CALCIUM_DRAFT = bump(loader.get_registry().calculators[CALCIUM].active.version, "minor")

GUARDED = ("formulas", "guidelines", "results")


def tree_hash(root: Path) -> dict[str, str]:
    """Every file under the registry folders of `root` with the hash of its bytes."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for d in GUARDED if (root / d).is_dir() for p in sorted((root / d).rglob("*"))
            if p.is_file() and p.name not in (".registry.lock", ".lock")}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org",
                    "-c", "commit.gpgsign=false", *args], check=True, capture_output=True, timeout=60)


@pytest.fixture()
def committee_repo(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    """The committee's registry: a git repository holding a copy of formulas/, guidelines/ and results/, two
    people (an author and a chair) and their keys."""
    repo = copy_registry(tmp_path / "committee")
    shutil.copytree(PROJECT_ROOT / "results" / "embedded" / "gold-solve", repo / "results" / "gold-solve")
    people = committee(repo, {"author": ("R. Maintainer", ["clinical informatician"]), "chair": ("Dr A. Chair", ["chair"])})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the committee's registry")
    return repo, {**people.keys, "stranger": make_key("stranger")}


def _env(key: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (loader.ROOT_ENV, "COLUMNS")}
    return {**env, "FORMULA_SIGNING_KEY": str(key)}


def _inputs(repo: Path) -> dict[str, Path]:
    """The files the commands that read one are given (all inside the committee's repository)."""
    work = repo / "work"
    work.mkdir()
    (work / "program.py").write_text("def solve():\n    return round(70 / 1.75 ** 2, 2)\n", encoding="utf-8")
    (work / "cohort.jsonl").write_text('{"weight": [70, "kg"], "height": [175, "cm"]}\n', encoding="utf-8")
    (work / "cohort.csv").write_text("weight,weight_unit,height,height_unit\n70,kg,175,cm\n80,kg,180,cm\n",
                                     encoding="utf-8")
    log = {"Row Number": 1, "Calculator Name": "calculator 2", "Calculator ID": "2", "Note ID": "note-1",
           "Patient Note": "A note.", "Question": "What is the value?", "LLM Explanation": "N/A",
           "Ground Truth Answer": "100", "Ground Truth Explanation": "invented", "LLM Answer": "100",
           "Result": "Correct"}
    (work / "x_direct_answer.jsonl").write_text(json.dumps(log) + "\n", encoding="utf-8")
    return {"work": work}


def _steps(repo: Path, keys: dict[str, Path]) -> list[tuple[str, list[str], tuple[int, ...]]]:
    """(command, argv, the exit statuses it may end with), in the order a committee would run them; every
    command of COMMANDS appears (test_every_command_is_run checks)."""
    chair, w = ["--key", str(keys["chair"])], "../work"
    entities = json.dumps({"weight": [70, "kg"], "height": [1.75, "m"]})
    return [
        ("validate", ["validate"], (0,)),
        ("list", ["list"], (0,)),
        ("show", ["show", SODIUM], (0,)),
        ("history", ["history", SODIUM], (0,)),
        ("diff", ["diff", "body-mass-index", "1.0.0", "1.0.1"], (0,)),
        ("schema", ["schema", "--kind", "policy"], (0,)),
        ("lock", ["lock"], (0,)),
        ("fix", ["fix", SODIUM, "--set", "correction_per_mg_dl_glucose=0.016", "--label",
                 "correction_per_mg_dl_glucose=Katz factor", "--reason", "Katz 1973 factor", "--draft"], (0,)),
        ("pending", ["pending"], (0,)),
        ("approve", ["approve", SODIUM, NEW, "--key", str(keys["stranger"]), "--reason", "r"], (1,)),  # no key of ours
        ("approve", ["approve", SODIUM, NEW, "--reason", "my own"], (1,)),  # four eyes: the author's key
        ("approve", ["approve", SODIUM, NEW, *chair, "--reason", "agreed at the meeting"], (0,)),
        ("activate", ["activate"], (0,)),
        ("release", ["release", "body-mass-index", "--reason", "nothing was edited"], (1,)),
        ("fix", ["fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "to turn down", "--draft"], (0,)),
        ("reject", ["reject", CALCIUM, CALCIUM_DRAFT, *chair, "--reason", "not this one"], (0,)),
        ("review", ["review", SODIUM, *chair], (0,)),
        ("due", ["due"], (0,)),
        ("changelog", ["changelog", "--format", "table"], (0,)),
        ("recover", ["recover"], (0,)),
        ("stale", ["stale", "--runs", "."], (0,)),
        ("verify", ["verify"], (3,)),
        ("safety", ["safety", "case", "--out", f"{w}/case.md"], (0,)),
        ("safety", ["safety", "sign-off", *chair, "--reason", "not the safety officer"], (1,)),
        ("texts", ["texts", "render"], (0,)),
        ("solve", ["solve", "--calculator", "6", "--entities", entities, "--format", "json"], (0,)),
        ("replay", ["replay", f"{w}/record.json"], (0,)),
        ("exec", ["exec", f"{w}/program.py"], (0,)),
        ("run", ["run", "--arm", "gold-solve", "--data", "one-shot", "--seeds", "42", "--out", f"{w}/run",
                 "--no-progress", "--limit", "3"], (0,)),
        ("score", ["score", f"{w}/run"], (0,)),
        ("import", ["import", "medcalc-bench", f"{w}/x_direct_answer.jsonl", "--out", f"{w}/imported"], (0,)),
        ("serve", ["serve", "--mcp"], (0,)),
        ("batch", ["batch", f"{w}/cohort.csv", "--calculator", "6", "--out", f"{w}/cohort-out.csv",
                   "--no-progress"], (0,)),
        ("convert", ["convert", "--to", "parquet", f"{w}/cohort.jsonl", f"{w}/cohort.parquet"], (0,)),
        ("audit", ["audit", "completeness"], (0, 1)),
        ("impact", ["impact", "mdrd-gfr", "ckd-epi-2021"], (0,)),
        ("review-pr", ["review-pr", "--base", "main", "--out", f"{w}/review.md"], (0, 1)),
        ("report", ["report", "tables", "gold-solve", "--draws", "5"], (0,)),
        ("site", ["site", "build", "--results", "gold-solve"], (0,)),
        ("export", ["export", "fhir", "--out", f"{w}/fhir"], (0,)),
        ("people", ["people", "add", "stranger", "--key", f"{keys['stranger']}.pub", "--name", "S. Tranger",
                    "--new-role", "observer"], (0,)),
        ("init", ["init", f"{w}/another", "--key", f"{keys['chair']}.pub", "--name", "Dr A. Chair", "--role", "chair"],
         (0,)),
    ]


def test_every_command_reads_and_writes_the_registry_it_stands_in(committee_repo) -> None:
    repo, keys = committee_repo
    ours = {root: tree_hash(root) for root in (PROJECT_ROOT, SHIPPED_ROOT)}
    paths = _inputs(repo)
    here = repo / "results"  # a subfolder: the registry is found upwards, as git finds .git
    lock, texts = (repo / "formulas" / "REGISTRY.lock").read_bytes(), tree_hash(repo)
    failures = []
    for name, argv, allowed in _steps(repo, keys):
        p = subprocess.run([sys.executable, "-m", "cli", *argv], cwd=here, env=_env(keys["author"]),
                           capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        if p.returncode not in allowed or "Traceback" in p.stderr:
            failures.append(f"formula {' '.join(argv)}: exit {p.returncode}\n{p.stdout[-800:]}\n{p.stderr[-800:]}")
        for root in (PROJECT_ROOT / "formulas", PROJECT_ROOT / "guidelines", SHIPPED_ROOT):
            if str(root) in p.stdout + p.stderr:
                failures.append(f"formula {' '.join(argv)} names {root}:\n{p.stdout[-400:]}{p.stderr[-400:]}")
        if name == "solve":
            (paths["work"] / "record.json").write_text(p.stdout, encoding="utf-8")
        if name in ("validate", "verify", "lock", "fix", "approve", "review", "texts", "people") and p.returncode != 1:
            first = p.stdout.splitlines()[0] if p.stdout else ""
            if first != f"registry: {repo} (found from the current folder)":
                failures.append(f"formula {' '.join(argv)}: first line {first!r}")
        if p.returncode == 1 and name in ("approve", "release"):  # a refusal names the registry it concerns
            if f"in the registry at {repo}, found from the current folder" not in p.stderr:
                failures.append(f"formula {' '.join(argv)}: the refusal names no registry: {p.stderr}")
    assert not failures, "\n\n".join(failures)
    for root, before in ours.items():
        assert tree_hash(root) == before, f"{root} changed"
    # the writers wrote into the committee's registry: the Katz fix, approved and active, its catalogue text,
    # the chair's review, the site built into the repository's build/site
    after = tree_hash(repo)
    assert (repo / "formulas" / "REGISTRY.lock").read_bytes() != lock and after != texts
    assert "0.016" in (repo / "formulas" / "texts" / f"{SODIUM}.md").read_text(encoding="utf-8")
    assert (repo / "build" / "site" / "index.html").is_file() and (paths["work"] / "review.md").is_file()
    assert (paths["work"] / "another" / "formulas" / "policy" / "allowed_signers").is_file()
    assert not (PROJECT_ROOT / "work").exists()


def test_every_command_is_run(tmp_path: Path) -> None:
    steps = _steps(tmp_path, {"chair": tmp_path / "k", "stranger": tmp_path / "s"})
    assert {name for name, _, _ in steps} == set(COMMANDS)


def test_the_root_is_named_relative_when_under_the_current_folder(committee_repo, capsys, monkeypatch) -> None:
    from tests.helpers import run

    repo, _ = committee_repo
    monkeypatch.delenv(loader.ROOT_ENV, raising=False)
    monkeypatch.chdir(repo)
    loader.clear_cache()
    code, out, _ = run(capsys, "validate")
    assert code == 0 and out.splitlines()[0] == "registry: . (found from the current folder)"
    monkeypatch.chdir(repo.parent)
    code, out, _ = run(capsys, "validate", "--root", "committee")
    assert code == 0 and out.splitlines()[0] == "registry: committee (given by --root)"
    monkeypatch.setenv(loader.ROOT_ENV, str(repo))
    code, out, _ = run(capsys, "validate")
    assert code == 0 and out.splitlines()[0] == "registry: committee (from $FORMULA_REGISTRY_ROOT)"
    loader.clear_cache()


def test_the_nearest_registry_upwards_wins_and_a_folder_with_formulas_only_is_no_registry(tmp_path, monkeypatch):
    outer = copy_registry(tmp_path / "outer")
    inner = copy_registry(outer / "nested" / "inner")
    (inner / "deep" / "er").mkdir(parents=True)
    (outer / "half" / "formulas").mkdir(parents=True)  # no guidelines/ beside it
    monkeypatch.delenv(loader.ROOT_ENV, raising=False)
    for cwd, want in ((inner / "deep" / "er", inner), (outer / "nested", outer), (outer / "half", outer),
                      (outer / "half" / "formulas", outer)):
        monkeypatch.chdir(cwd)
        assert loader.find_root() == loader.Found(want, loader.FOUND), cwd
    monkeypatch.chdir(tmp_path)
    assert loader.find_root().how == loader.INSTALLED and loader.is_embedded()
    assert loader.find_root(outer) == loader.Found(outer, loader.GIVEN) and not loader.is_embedded(outer)
