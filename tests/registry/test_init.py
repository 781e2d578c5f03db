"""`formula init DIR`: a committee's own registry, from the registry the package ships, ready to sign."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from registry import loader
from registry.governance import init as initmod
from registry.trust.sshsig import parse_signers
from tests.helpers import PROJECT_ROOT, make_key, run
from tests.registry.helpers import SODIUM

POLICY = Path("formulas") / "policy"


def tree(root: Path, *folders: str) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for d in folders for p in sorted((root / d).rglob("*")) if p.is_file()}


def init(capsys: pytest.CaptureFixture[str], target: Path, *extra: str, key: Path | None = None,
         ) -> tuple[int, str, str]:
    key = key or make_key("chair")
    return run(capsys, "init", str(target), "--key", f"{key}.pub", "--name", "Dr A. Chair", "--role", "chair", *extra)


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".init-" in p.name)


def test_init_makes_a_registry_that_validates_and_rests_on_history_before_signing(tmp_path, capsys) -> None:
    target = tmp_path / "committee"
    code, out, err = init(capsys, target, "--owner", "@hospital/governance", "--role", "clinical informatician")
    assert code == 0, err
    assert out.splitlines()[0] == f"registry: {target} (new, from the registry shipped at {loader.shown(loader.shipped_root())})"
    # the shipped calculators, their history, lock, seal, catalogue and guidelines, byte for byte
    source = loader.shipped_root()
    ignore = ("policy/governance.yaml", "policy/allowed_signers")
    shipped = {k: v for k, v in tree(source, "formulas", "guidelines").items()
               if not k.endswith(ignore) and "/drafts/" not in k and not k.endswith((".registry.lock", ".journal.json"))}
    made = {k: v for k, v in tree(target, "formulas", "guidelines").items() if not k.endswith(ignore)}
    assert made == shipped and "formulas/policy/recorded_before_signing.yaml" in made
    assert any(k.startswith("formulas/history/") for k in made) and "formulas/REGISTRY.lock" in made
    # the policy: signatures required, the first person with their roles, their key and only theirs
    policy = yaml.safe_load((target / POLICY / "governance.yaml").read_text(encoding="utf-8"))
    assert policy["require_signatures"] is True and policy["four_eyes"] is True
    assert policy["people"] == {"chair": {"name": "Dr A. Chair", "roles": ["chair", "clinical informatician"]}}
    signers, bad = parse_signers((target / POLICY / "allowed_signers").read_text(encoding="utf-8"))
    pub = Path(f"{make_key('chair')}.pub").read_text(encoding="utf-8").split()
    assert not bad and [(s.principal, s.keytype, s.key) for s in signers] == [("chair", pub[0], pub[1])]
    assert (target / ".git").is_dir()
    assert "/formulas/policy/ @hospital/governance\n" in (target / "CODEOWNERS").read_text(encoding="utf-8")
    assert oct(target.stat().st_mode & 0o777) != oct(0o700) and leftovers(tmp_path) == []
    # it passes validation, and verify says why it is not yet verified (exit 3)
    code, out, _ = run(capsys, "validate", "--root", str(target))
    assert code == 0, out
    code, out, _ = run(capsys, "verify", "--root", str(target))
    assert code == 3 and "0 verified" in out


def test_the_first_person_signs_a_draft_at_once(tmp_path, capsys) -> None:
    target = tmp_path / "committee"
    assert init(capsys, target)[0] == 0
    code, out, err = run(capsys, "fix", SODIUM, "--set", "correction_per_mg_dl_glucose=0.016", "--label",
                         "correction_per_mg_dl_glucose=Katz factor", "--reason", "Katz 1973", "--draft",
                         "--key", str(make_key("chair")), "--root", str(target))
    assert code == 0, err
    assert out.splitlines()[0] == f"registry: {target} (given by --root)" and "drafted" in out
    assert run(capsys, "validate", "--root", str(target))[0] == 0


def test_the_hooks_are_this_projects_and_run_with_pre_commit(tmp_path, capsys) -> None:
    target = tmp_path / "committee"
    assert init(capsys, target)[0] == 0
    config = yaml.safe_load((target / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    manifest = yaml.safe_load((PROJECT_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    [repo] = config["repos"]
    assert repo["repo"] == "local"
    assert [{k: v for k, v in h.items() if k != "language"} for h in repo["hooks"]] == \
        [{k: v for k, v in h.items() if k != "language"} for h in manifest]
    assert {h["language"] for h in repo["hooks"]} == {"system"}
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PRE_COMMIT_HOME": str(tmp_path / "pre-commit"), "PRE_COMMIT_COLOR": "never"}
    env.pop(loader.ROOT_ENV, None)
    subprocess.run(["git", "-C", str(target), "add", "-A"], check=True, timeout=60)
    p = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=target, env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert p.stdout.count("Passed") == 3, p.stdout


def test_inside_a_repository_no_git_init_and_the_private_keys_path_means_its_public_half(tmp_path, capsys) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True, timeout=60)
    target = tmp_path / "repo" / "registry"
    target.mkdir()  # an empty folder is fine
    code, out, err = run(capsys, "init", str(target), "--key", str(make_key("chair")), "--principal",
                         "chair@example.org", "--name", "Dr A. Chair", "--role", "chair")
    assert code == 0, err
    assert not (target / ".git").exists() and f"inside the repository at {tmp_path / 'repo'}" in out
    assert "/formulas/policy/ chair@example.org\n" in (target / "CODEOWNERS").read_text(encoding="utf-8")


@pytest.mark.parametrize("why, argv, needle", [
    ("not empty", [], "is not empty"),
    ("private key", ["--key", "{tmp}/secret"], "is a private key"),  # (no secret.pub beside it)
    ("no such key", ["--key", "{tmp}/nope.pub"], "no such file"),
    ("bad principal", ["--principal", "chair, *"], "must be one literal identity"),
    ("blank name", ["--name", " "], "--name"),
    ("bad owner", ["--owner", "governance"], "a CODEOWNERS owner is"),
])
def test_every_argument_is_checked_before_anything_is_written(tmp_path, capsys, why, argv, needle) -> None:
    key = make_key("chair")
    target = tmp_path / "committee"
    if why == "not empty":
        target.mkdir()
        (target / "notes.txt").write_text("ours\n", encoding="utf-8")
    (tmp_path / "secret").write_bytes(key.read_bytes())
    before = sorted(p.name for p in tmp_path.rglob("*"))
    given = [a.format(key=key, tmp=tmp_path) for a in argv]
    base = ["--key", f"{key}.pub", "--name", "Dr A. Chair", "--role", "chair"]
    for flag in given[::2]:  # a given option replaces the default one
        if flag in base:
            i = base.index(flag)
            del base[i:i + 2]
    code, _, err = run(capsys, "init", str(target), *base, *given)
    assert code == 1 and needle in err and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_a_registry_that_fails_validation_leaves_nothing_behind(tmp_path, capsys, monkeypatch) -> None:
    def broken(tmp: Path, p: initmod.Plan) -> None:
        real(tmp, p)
        (tmp / "formulas" / "anion-gap.yaml").write_text("name: [unclosed\n", encoding="utf-8")

    real = initmod._fill
    monkeypatch.setattr(initmod, "_fill", broken)
    code, _, err = init(capsys, tmp_path / "committee")
    assert code == 1 and "does not validate" in err and "nothing was written" in err
    assert list(tmp_path.iterdir()) == []


def test_an_installed_package_copies_its_embedded_registry(tmp_path, capsys, monkeypatch) -> None:
    from tests.helpers import copy_registry

    embedded = copy_registry(tmp_path / "site-packages" / "registry" / "embedded")
    (embedded / ".pre-commit-hooks.yaml").write_bytes((PROJECT_ROOT / ".pre-commit-hooks.yaml").read_bytes())
    (embedded / "guidelines" / "marker.txt").write_text("the wheel's copy\n", encoding="utf-8")
    monkeypatch.setattr(loader, "EMBEDDED_ROOT", embedded)
    assert loader.shipped_root() == embedded
    code, out, err = init(capsys, tmp_path / "committee", "--no-git")
    assert code == 0, err
    assert (tmp_path / "committee" / "guidelines" / "marker.txt").is_file()
    assert not (tmp_path / "committee" / ".git").exists() and "git: none (--no-git)" in out
