"""Helpers shared by tests in every folder: a private copy of the registry, and running the command line."""
from __future__ import annotations

import atexit
import dataclasses
import os
import shutil
import subprocess
import sys
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


# ---------------------------------------------------------------------- a committee's own registry

# the people of the guide's walkthroughs (docs/guide): principal -> (name, roles); their keys lie in ~/.ssh/<principal>_ed25519
WALKTHROUGH_PEOPLE: dict[str, tuple[str, list[str]]] = {
    "maintainer": ("R. Maintainer", ["clinical informatician"]),
    "chair": ("Dr A. Chair", ["chair"]),
    "pharmacist": ("B. Pharmacist", ["renal pharmacist"]),
}
GIT_ID = ["-c", "user.name=Committee", "-c", "user.email=committee@example.org", "-c", "commit.gpgsign=false"]


def walkthrough_home(tmp_path: Path) -> Path:
    """A home folder whose ~/.ssh holds each walkthrough person's key (each person makes theirs once, elsewhere)."""
    home = tmp_path / "home"
    for principal in WALKTHROUGH_PEOPLE:
        make_key(f"{principal}_ed25519", home / ".ssh")
    return home


def committee_registry(tmp_path: Path) -> Path:
    """A committee's own registry, made as the user guide makes it (docs/guide/getting-started.md): `formula init DIR --key
    ~/.ssh/maintainer_ed25519.pub --principal maintainer --name 'R. Maintainer' --role 'clinical informatician'`
    (the shipped calculators with their history before signing, a policy with require_signatures: true, the
    first person's key and role, a git repository), with it all committed on main."""
    home = walkthrough_home(tmp_path)
    root = tmp_path / "committee"
    name, roles = WALKTHROUGH_PEOPLE["maintainer"]
    made = subprocess.run([sys.executable, "-m", "cli", "init", str(root), "--key",
                           str(home / ".ssh" / "maintainer_ed25519.pub"), "--principal", "maintainer", "--name", name,
                           *[a for r in roles for a in ("--role", r)], "--no-git"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in os.environ.items() if k != "FORMULA_REGISTRY_ROOT"})
    assert made.returncode == 0, made.stderr
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "A committee registry"]):
        subprocess.run(["git", *GIT_ID, *args], cwd=root, check=True, capture_output=True, timeout=60)
    return root


# ---------------------------------------------------------------------- a real terminal


def in_terminal(argv: list[str], columns: int, *, env: dict[str, str] | None = None, cwd: Path | None = None,
                timeout: float = 120) -> tuple[int, str]:
    """Run `argv` in a pseudo-terminal `columns` wide (TIOCSWINSZ, as `stty cols` sets it; $COLUMNS unset), so
    the command sees what a person's terminal gives it: (exit status, what it printed, with '\\n' line ends)."""
    import fcntl
    import os
    import pty
    import select
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in (os.environ if env is None else env).items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    try:
        while select.select([master], [], [], timeout)[0]:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the command closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
        code = proc.wait(timeout=timeout)
    return code, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
