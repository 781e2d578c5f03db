"""`formula init DIR`: a committee's own registry, ready to sign its first decision.

It holds the shipped calculators with their history before signing (formulas/ with history/, REGISTRY.lock,
the seal formulas/policy/recorded_before_signing.yaml and the catalogue texts/; guidelines/), copied from
the registry this package ships (`loader.shipped_root`: the wheel's copy, or the checkout an editable
install runs from); a policy that requires signatures, with the first person's key and roles; a git
repository (unless DIR is inside one); a `.pre-commit-config.yaml` running this project's hooks; and a
CODEOWNERS line for formulas/policy/, the trust root. Every argument is checked first, the registry is
built and validated in a temporary sibling folder and renamed into place: DIR appears whole or not at all.
"""
from __future__ import annotations

import base64
import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from registry.counted_nouns import counted
from registry.errors import ReleaseError
from registry.trust.policy import POLICY_FILE, PRINCIPAL_RE
from registry.trust.sshsig import NAMESPACE, SIGNERS_FILE, fingerprint_of, parse_signers

HOOKS_FILE = ".pre-commit-hooks.yaml"  # this project's hooks (the shipped registry carries a copy: setup.py)
_KEY_LINE = re.compile(r"^(\S+) ([A-Za-z0-9+/=]+)(?: (.*))?$")
# what a registry copy never takes along: the lock and journal of a running command, a maintainer's local
# drafts and rejections (decisions of another registry), leftovers of an interrupted write
_IGNORED = shutil.ignore_patterns(".registry.lock", ".journal.json", "drafts", "*.tmp", ".staging", "__pycache__")


RESULTS_DIR = "results"  # the committee's own run folders: `formula site build` publishes these (never the package's)
GITIGNORE = ("# what formula's commands leave while they run, and the site they build\nformulas/.registry.lock\n"
             "formulas/.journal.json\nresults/**/.lock\nbuild/\n")
RESULTS_README = ("# Runs\n\nThe committee's own run folders (`formula run ... --out results/NAME`, `formula import ... --out "
                  "results/NAME`),\none folder each with manifest.json and results.jsonl. `formula site build` publishes "
                  "every run under\nthis folder, and only these.\n")


class InitError(ReleaseError):
    """`formula init` cannot go ahead; nothing was written."""


@dataclasses.dataclass(frozen=True)
class Person:
    """The first person of the committee: their principal, public key line, name and roles."""

    principal: str
    keytype: str
    key: str
    name: str
    roles: list[str]

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(base64.b64decode(self.key))

    def signer_line(self) -> str:
        return f'{self.principal} namespaces="{NAMESPACE}" {self.keytype} {self.key}\n'


@dataclasses.dataclass(frozen=True)
class Plan:
    """What `init` will make, every argument checked."""

    target: Path
    source: Path
    person: Person
    owners: list[str]
    git: bool  # run `git init` (DIR is not inside a repository)
    repository: Path | None  # the repository DIR is inside, when it is


def read_public_key(path: Path) -> tuple[str, str, str]:
    """(key type, base64 key, comment) of an OpenSSH public key file; InitError saying what is wrong."""
    if path.suffix != ".pub" and Path(f"{path}.pub").is_file():
        path = Path(f"{path}.pub")  # the private key's path: its public half beside it (never the secret)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InitError(f"--key {path}: no such file; give the person's public key (e.g. ~/.ssh/chair_ed25519.pub)") \
            from None
    except (OSError, UnicodeDecodeError) as e:
        raise InitError(f"--key {path}: cannot be read ({e})") from None
    if "PRIVATE KEY" in text:
        raise InitError(f"--key {path} is a private key: give its public half ({path}.pub); a private key never "
                        "enters the registry")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    m = _KEY_LINE.match(lines[0]) if len(lines) == 1 else None
    if m is None:
        raise InitError(f"--key {path}: expected one OpenSSH public key line (`ssh-ed25519 AAAA... comment`), as "
                        "ssh-keygen writes it into the .pub file")
    keytype, key, comment = m.group(1), m.group(2), (m.group(3) or "").strip()
    probe = f'probe namespaces="{NAMESPACE}" {keytype} {key}'
    signers, bad = parse_signers(probe)
    if bad or not signers:
        why = bad[0][1] if bad else "not a public key"
        raise InitError(f"--key {path}: {why}")
    return keytype, key, comment


def person(key: Path, principal: str | None, name: str | None, roles: list[str]) -> Person:
    keytype, blob, comment = read_public_key(key)
    principal = principal or comment
    if not principal:
        raise InitError(f"--key {key} has no comment to take the principal from: give --principal (e.g. the "
                        "person's e-mail address)")
    if not re.match(PRINCIPAL_RE, principal):
        source = "--principal" if principal != comment else f"the comment of {key}"
        raise InitError(f"{source}: principal {principal!r} must be one literal identity such as ana@example.org "
                        "(letters, digits, . _ + - and one @); give --principal")
    if not name or not name.strip():
        raise InitError("--name: give the person's name as decisions should show it (e.g. 'Dr A. Chair')")
    if len(name) > 200 or any(not ch.isprintable() for ch in name):
        raise InitError("--name: at most 200 printable characters")
    clean = [r.strip() for r in roles if r.strip()]
    if not clean:
        raise InitError("--role: give at least one role (e.g. --role chair); repeat it for several")
    return Person(principal, keytype, blob, name.strip(), clean)


def _repository_of(folder: Path) -> Path | None:
    """The git work tree `folder` is inside (None: none); InitError when git is missing."""
    probe = folder
    while not probe.exists():
        probe = probe.parent
    try:
        p = subprocess.run(["git", "-C", str(probe), "rev-parse", "--show-toplevel"], capture_output=True,
                           text=True, timeout=60)
    except FileNotFoundError:
        raise InitError("git is not installed: install it (e.g. `apt-get install git`), or pass --no-git to "
                        "make the registry without a repository") from None
    except subprocess.TimeoutExpired:
        raise InitError(f"git rev-parse took longer than 60 s in {probe}") from None
    return Path(p.stdout.strip()) if p.returncode == 0 and p.stdout.strip() else None


def plan(target: Path, key: Path, principal: str | None, name: str | None, roles: list[str], owners: list[str],
         use_git: bool = True) -> Plan:
    """Every argument checked, nothing written: InitError says what to change."""
    from registry.loader import holds_registry, shipped_root

    target = Path(os.path.abspath(target))
    if target.exists() and not target.is_dir():
        raise InitError(f"{target} is a file; give a new or empty folder")
    if target.is_dir() and any(target.iterdir()):
        raise InitError(f"{target} is not empty; `formula init` makes a registry only in a new or empty folder")
    if not target.parent.is_dir():
        raise InitError(f"{target.parent} does not exist; make it first (init makes only the last folder)")
    if not os.access(target.parent, os.W_OK):
        raise InitError(f"{target.parent} is not writable")
    source = shipped_root()
    if not holds_registry(source):
        raise InitError(f"the registry shipped with the package is missing at {source}; reinstall formula-registry")
    for owner in owners:
        if not re.fullmatch(r"@[A-Za-z0-9][A-Za-z0-9._/-]*|[^@\s]+@[^@\s]+\.[^@\s]+", owner):
            raise InitError(f"--owner {owner!r}: a CODEOWNERS owner is @user, @org/team or an e-mail address")
    who = person(key, principal, name, roles)
    repository = _repository_of(target) if use_git else None
    return Plan(target, source, who, owners, use_git and repository is None, repository)


def _governance_text(source: Path, who: Person) -> str:
    """The shipped policy (its comments kept) with signatures required and the first person in people:."""
    from registry.yamlio import rt_dump, rt_load

    data = rt_load(source / "formulas" / POLICY_FILE)
    data["require_signatures"] = True
    data["people"] = {who.principal: {"name": who.name, "roles": list(who.roles)}}
    return rt_dump(data)


def _signers_text(source: Path, who: Person) -> str:
    shipped = (source / "formulas" / SIGNERS_FILE).read_text(encoding="utf-8")
    header = "".join(line + "\n" for line in shipped.splitlines() if line.startswith("#"))
    return header + who.signer_line()


def _hooks_config(source: Path) -> str:
    """This project's hooks (its .pre-commit-hooks.yaml), run with the `formula` installed here."""
    import yaml

    hooks = yaml.safe_load((source / HOOKS_FILE).read_text(encoding="utf-8"))
    local = [{**h, "language": "system"} for h in hooks]
    return ("# formula-registry's pre-commit hooks (its .pre-commit-hooks.yaml), run with the `formula` command\n"
            "# installed on this machine (language: system). To have pre-commit install a pinned version instead,\n"
            "# name the repository you host formula-registry in and its tag:\n"
            "#   - repo: <formula-registry's repository>\n"
            "#     rev: <a tag>\n"
            "#     hooks: [{id: formula-validate}, {id: formula-texts-check}, {id: formula-stale-check}]\n"
            + yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]}, sort_keys=False, width=1000))


def _codeowners(owners: list[str], who: Person) -> str:
    """formulas/policy/ is the trust root: a change to it (a key, a role, the policy) needs its owners' review."""
    head = ("# formulas/policy/ says who may decide: a pull request that adds a key adds a decider, so changes\n"
            "# to it need the review of these owners (protect the branch so that their review is required).\n")
    named = owners or ([who.principal] if "@" in who.principal else [])
    if named:
        return head + "/formulas/policy/ " + " ".join(named) + "\n"
    return head + ("# name the owners (@user, @org/team or e-mail addresses) and remove the '#':\n"
                   "# /formulas/policy/ @your-org/governance-committee\n")


def build(p: Plan) -> list[str]:
    """Make the registry of `p` (validated) in a temporary sibling folder and rename it into place; the
    lines init prints. InitError, with nothing left behind, when it does not validate."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{p.target.name}.init-", dir=p.target.parent))
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # a folder as mkdir makes it (mkdtemp's is private)
        _fill(tmp, p)
        _check(tmp, p.source)
        if p.git:
            _git_init(tmp)
        _fsync_tree(tmp)
        if p.target.is_dir():
            p.target.rmdir()  # empty (checked): rename(2) could replace it, but not on every platform
        os.rename(tmp, p.target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return _report(p)


def _fill(tmp: Path, p: Plan) -> None:
    from registry.atomic import atomic_write

    for folder in ("formulas", "guidelines"):
        shutil.copytree(p.source / folder, tmp / folder, ignore=_IGNORED)
    atomic_write(tmp / "formulas" / POLICY_FILE, _governance_text(p.source, p.person))
    atomic_write(tmp / "formulas" / SIGNERS_FILE, _signers_text(p.source, p.person))
    atomic_write(tmp / ".pre-commit-config.yaml", _hooks_config(p.source))
    atomic_write(tmp / "CODEOWNERS", _codeowners(p.owners, p.person))
    atomic_write(tmp / ".gitignore", GITIGNORE)
    atomic_write(tmp / RESULTS_DIR / "README.md", RESULTS_README)


def _check(tmp: Path, source: Path) -> None:
    """The new registry passes every rule before anyone sees it (`formula validate --root DIR`)."""
    from registry.loader import clear_cache, load
    from registry.validate import validate

    reg = load(tmp)
    validate(reg)
    clear_cache()
    if reg.problems:
        raise InitError(f"the new registry does not validate ({counted(len(reg.problems), 'problem')}, first: "
                        f"{reg.problems[0]}); the registry it is copied from ({source}) may hold unreleased edits; "
                        "nothing was written")


def _git_init(tmp: Path) -> None:
    """A repository whose first branch is `main` (what `review-pr` compares with), whatever git's default is;
    `symbolic-ref` rather than `init -b` so that git before 2.28 makes it too."""
    for args in (["init", "-q", str(tmp)], ["-C", str(tmp), "symbolic-ref", "HEAD", "refs/heads/main"]):
        try:
            r = subprocess.run(["git", *args], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise InitError(f"git init failed: {e}") from None
        if r.returncode != 0:
            raise InitError(f"git init failed: {r.stderr.strip()}")


def _fsync_tree(root: Path) -> None:
    """Every file and folder on disk before the rename makes the registry visible."""
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _report(p: Plan) -> list[str]:
    from registry.loader import shown

    who, here = p.person, shown(p.target)
    git = ("git: a new repository on branch main (commit these files to start its history)" if p.git else
           f"git: inside the repository at {shown(p.repository)}" if p.repository else "git: none (--no-git)")
    return [f"registry: {here} (new, from the registry shipped at {shown(p.source)})",
            "formulas/, guidelines/: the shipped calculators, their history recorded before signing "
            "(`formula verify` exits 3 until your committee signs its own decisions)",
            f"formulas/{SIGNERS_FILE.as_posix()}: {who.principal} ({who.keytype} {who.fingerprint})",
            f"formulas/{POLICY_FILE.as_posix()}: {who.name} ({', '.join(who.roles)}); signatures required, four eyes",
            git,
            ".pre-commit-config.yaml: formula validate, texts render --check, stale --check",
            f"{RESULTS_DIR}/: your run folders; `formula site build` publishes these",
            "CODEOWNERS: " + ("formulas/policy/ " + " ".join(p.owners or [who.principal]) if
                              p.owners or "@" in who.principal else "name the owners of formulas/policy/ (--owner)"),
            f"next: add a second person (four eyes: no one approves their own draft), then `cd {here}` and "
            "`formula validate`"]
