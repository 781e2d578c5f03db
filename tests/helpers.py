"""Helpers shared by tests in every folder: a private copy of the registry, and running the command line."""
from __future__ import annotations

import atexit
import dataclasses
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from cli.main import main
from registry.loader import PROJECT_ROOT, default_root  # noqa: F401 (PROJECT_ROOT: re-exported for tests)

# The registry as committed, exported by tests/conftest.py (never the checkout's working tree: a local draft
# or edit there changes nothing the suite reads). Tests read it; tests that edit take a copy_registry.
SHIPPED_ROOT = default_root()


def copy_registry(dest: Path) -> Path:
    """Copy the shipped formulas/ and guidelines/ into `dest` (a registry root of its own)."""
    for d in ("formulas", "guidelines"):
        shutil.copytree(SHIPPED_ROOT / d, dest / d)
    return dest


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`formula ARGV...` in this process: (exit status, stdout, stderr)."""
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    """Replace `owner.name` with a wrapper that still calls it; the returned list grows by one per call."""
    calls: list[int] = []
    real = getattr(owner, name)

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")


# ---------------------------------------------------------------------- signing keys and a committee


@dataclasses.dataclass
class Committee:
    """People of a test registry with their OpenSSH keys (registry.governance.signatures): `args(who)` is `--key PATH`."""

    root: Path
    keys: dict[str, Path]

    def args(self, who: str) -> list[str]:
        return ["--key", str(self.keys[who])]


# principal -> (name, roles): an author who may not approve and two approvers, as a committee would have them
PEOPLE: dict[str, tuple[str, list[str]]] = {
    "author": ("R. Maintainer", ["clinical informatician"]),
    "chair": ("Dr A. Chair", ["chair"]),
    "pharmacist": ("B. Pharmacist", ["renal pharmacist"]),
    "nurse": ("C. Nurse", ["nurse"]),
}
APPROVER_ROLES = ["chair", "renal pharmacist"]
_KEYS = Path(tempfile.mkdtemp(prefix="formula-test-keys-"))
atexit.register(shutil.rmtree, _KEYS, True)


def make_key(name: str, folder: Path | None = None) -> Path:
    """An ed25519 key without passphrase (`ssh-keygen -t ed25519 -N ''`); one per name and folder per run."""
    folder = folder or _KEYS
    key = folder / name
    if not key.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True,
                       timeout=60, capture_output=True)
    return key


def signer_line(principal: str, key: Path, *, valid_after: str | None = None, valid_before: str | None = None) -> str:
    pub = Path(f"{key}.pub").read_text(encoding="utf-8").split()
    opts = ['namespaces="formula-registry"'] + ([f'valid-after="{valid_after}"'] if valid_after else []) + \
        ([f'valid-before="{valid_before}"'] if valid_before else [])  # quoted, as OpenSSH requires
    return f"{principal} {','.join(opts)} {pub[0]} {pub[1]}\n"


def add_person(root: Path, principal: str, name: str, roles: list[str], key: Path, **window: str) -> None:
    """List a person in the registry's governance.yaml (people:) and their key in allowed_signers."""
    import yaml

    policy = root / "formulas" / "policy" / "governance.yaml"
    data = (yaml.safe_load(policy.read_text(encoding="utf-8")) if policy.exists() else None) or {}
    data.setdefault("people", {})[principal] = {"name": name, "roles": roles}
    policy.parent.mkdir(parents=True, exist_ok=True)
    policy.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    with open(root / "formulas" / "policy" / "allowed_signers", "a", encoding="utf-8") as f:
        f.write(signer_line(principal, key, **window))


def set_policy(root: Path, **fields: object) -> None:
    """Set fields of the registry's governance.yaml (four_eyes, approvals_required, ...), keeping the rest."""
    import yaml

    policy = root / "formulas" / "policy" / "governance.yaml"
    data = (yaml.safe_load(policy.read_text(encoding="utf-8")) if policy.exists() else None) or {}
    data.update(fields)
    policy.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def committee(root: Path, people: dict[str, tuple[str, list[str]]] | None = None, **policy: object) -> Committee:
    """Give a registry copy the PEOPLE (or `people`) with fresh keys, approver roles APPROVER_ROLES, and `policy`."""
    keys = {}
    for principal, (name, roles) in (people or PEOPLE).items():
        keys[principal] = make_key(principal)
        add_person(root, principal, name, roles, keys[principal])
    set_policy(root, **{"approver_roles": APPROVER_ROLES, **policy})
    return Committee(root, keys)


def keys_of(root: Path, people: dict[str, tuple[str, list[str]]] | None = None) -> Committee:
    """The keys `committee` gave `root`'s people (keys are made once per run and name)."""
    return Committee(root, {p: make_key(p) for p in (people or PEOPLE)})


def maintained(root: Path, monkeypatch: pytest.MonkeyPatch, **policy: object) -> Committee:
    """`committee(root, **policy)` with $FORMULA_SIGNING_KEY set to the author's key (subprocesses inherit it)."""
    from registry.governance.deciding import KEY_ENV

    c = committee(root, **policy)
    monkeypatch.setenv(KEY_ENV, str(c.keys["author"]))
    return c


def solo(root: Path, monkeypatch: pytest.MonkeyPatch) -> Committee:
    """A registry whose policy lets its signed maintainer release at once (four eyes off, any role approves):
    for tests about something other than approval; `formula fix` signs with $FORMULA_SIGNING_KEY."""
    return maintained(root, monkeypatch, four_eyes=False, approver_roles=[])
