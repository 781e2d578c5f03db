"""OpenSSH signatures for registry decisions: `ssh-keygen -Y sign` / `-Y verify`, and the allowed_signers file.

No cryptography here: ssh-keygen signs and verifies. This module only reads what is public (the
allowed_signers lines and the public key an SSHSIG blob names) to say *why* a signature fails in
words a committee understands (unknown key, expired key, another person's key), runs ssh-keygen with
a timeout, and remembers good verifications in the registry cache so that `formula validate` stays
fast (a verification result depends only on the bytes keyed below).
"""
from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from registry import jsontext

NAMESPACE = "formula-registry"
SIGNERS_FILE = Path("policy") / "allowed_signers"
TIMEOUT_S = 20  # one ssh-keygen run; a hung key prompt or agent must not hang a command
_ARMOUR = re.compile(r"-----BEGIN SSH SIGNATURE-----\s*([A-Za-z0-9+/=\s]+?)\s*-----END SSH SIGNATURE-----")
_TIME_RE = re.compile(r"^\d{8}(\d{4}(\d{2})?)?Z?$")
_KEY_TYPES = re.compile(r"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com|"
                        r"sk-ecdsa-sha2-nistp256@openssh\.com)$")
_OPTIONS = {"namespaces", "valid-after", "valid-before"}


class SigningError(Exception):
    """A key cannot sign, or ssh-keygen is missing or failed: the message says what to do."""


@dataclasses.dataclass(frozen=True)
class Signer:
    """One line of allowed_signers: a principal, its key and the dates the key is valid between."""

    principal: str
    keytype: str
    key: str  # base64 of the public key blob
    valid_after: str | None
    valid_before: str | None
    line: int

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(base64.b64decode(self.key))

    def valid_on(self, day: dt.date) -> bool:
        """Whether the key was valid at noon UTC on `day` (the moment a dated decision is checked at)."""
        at = verify_time(day)
        return ((self.valid_after is None or _stamp(self.valid_after) <= at)
                and (self.valid_before is None or at <= _stamp(self.valid_before)))

    def window(self) -> str:
        parts = ([f"valid-after {self.valid_after}"] if self.valid_after else []) + \
                ([f"valid-before {self.valid_before}"] if self.valid_before else [])
        return ", ".join(parts) or "no expiry"


def fingerprint_of(blob: bytes) -> str:
    """OpenSSH's SHA256 fingerprint of a public key blob (what `ssh-keygen -l` prints)."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def verify_time(day: dt.date) -> str:
    return day.strftime("%Y%m%d") + "120000Z"


def _stamp(t: str) -> str:
    """A valid-after/before stamp as a comparable YYYYMMDDHHMMSSZ (read as UTC: ssh-keygen runs with TZ=UTC)."""
    digits = t.rstrip("Z")
    return (digits + "000000")[:14] + "Z" if len(digits) == 8 else (digits + "00")[:14] + "Z"


def parse_signers(text: str) -> tuple[list[Signer], list[tuple[int, str]]]:
    """The signers of an allowed_signers text and (line, problem) for every line refused.

    Stricter than ssh-keygen on purpose (the file comes from pull requests): one literal principal per
    line (no patterns, which would let one key speak for anyone), only the options namespaces (which
    must be exactly formula-registry), valid-after and valid-before, and no certificate authorities.
    """
    from registry.trust.policy import PRINCIPAL_RE

    out: list[Signer] = []
    bad: list[tuple[int, str]] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = _split(line)
        if len(parts) < 3:
            bad.append((n, "expected: principal namespaces=\"formula-registry\" keytype base64-key"))
            continue
        principal, rest = parts[0], parts[1:]
        opts: dict[str, str] = {}
        if not _KEY_TYPES.match(rest[0]):
            opts, problem = _options(rest[0])
            if problem:
                bad.append((n, problem))
                continue
            rest = rest[1:]
        if len(rest) < 2 or not _KEY_TYPES.match(rest[0]):
            bad.append((n, f"unknown key type {rest[0] if rest else ''!r}"))
            continue
        if not re.match(PRINCIPAL_RE, principal):
            bad.append((n, f"principal {principal!r} must be one literal identity (no patterns or lists)"))
            continue
        if opts.get("namespaces") != NAMESPACE:
            bad.append((n, f'the key must be limited to namespaces="{NAMESPACE}"'))
            continue
        try:
            blob = base64.b64decode(rest[1], validate=True)
        except (binascii.Error, ValueError):
            bad.append((n, "the key is not base64"))
            continue
        if _string(blob, 0)[0] != rest[0].encode():
            bad.append((n, f"the key is not a {rest[0]} key"))
            continue
        out.append(Signer(principal, rest[0], rest[1], opts.get("valid-after"), opts.get("valid-before"), n))
    return out, bad


def _split(line: str) -> list[str]:
    """Space-separated fields; spaces inside double quotes (options) do not split."""
    return re.findall(r'(?:[^\s"]+|"[^"]*")+', line)


def _options(field: str) -> tuple[dict[str, str], str | None]:
    opts: dict[str, str] = {}
    for item in re.findall(r'(?:[^,"]+|"[^"]*")+', field):
        name, eq, value = item.partition("=")
        name = name.lower()
        if name not in _OPTIONS:
            return {}, f"option {name!r} is not accepted here (only namespaces, valid-after, valid-before)"
        if not eq or len(value) < 2 or not (value.startswith('"') and value.endswith('"')) or '"' in value[1:-1]:
            return {}, (f"{item}: OpenSSH reads an option's value only in double quotes: write "
                        f'{name}="{value.strip(chr(34))}"')
        value = value[1:-1]
        if name != "namespaces" and not _TIME_RE.match(value):
            return {}, f"{name}={value!r}: write a date YYYYMMDD (or YYYYMMDDHHMM[SS]), optionally ending in Z"
        opts[name] = value
    return opts, None


def _string(blob: bytes, at: int) -> tuple[bytes, int]:
    if at + 4 > len(blob):
        raise ValueError("truncated")
    n = int.from_bytes(blob[at:at + 4], "big")
    if at + 4 + n > len(blob):
        raise ValueError("truncated")
    return blob[at + 4:at + 4 + n], at + 4 + n


def signature_key(armoured: str) -> tuple[bytes, str]:
    """The public key blob an SSHSIG signature names and its namespace; ValueError when it is not SSHSIG."""
    m = _ARMOUR.search(armoured or "")
    if m is None:
        raise ValueError("not an armoured SSH signature (-----BEGIN SSH SIGNATURE-----)")
    try:
        blob = base64.b64decode("".join(m.group(1).split()), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the SSH signature is not base64") from None
    if blob[:6] != b"SSHSIG":
        raise ValueError("not an SSHSIG signature")
    key, at = _string(blob, 10)
    namespace, _ = _string(blob, at)
    return key, namespace.decode("utf-8", "replace")


def armour(text: str) -> str:
    """The signature as ssh-keygen reads it (the schema strips the stored text)."""
    return text.strip() + "\n"


# ---------------------------------------------------------------------- running ssh-keygen


def _keygen() -> str:
    exe = shutil.which("ssh-keygen")
    if exe is None:
        raise SigningError("ssh-keygen (OpenSSH) is not installed: install openssh-client to sign or verify decisions")
    return exe


def _run(args: list[str], data: bytes, *, agent: bool = False,
         cwd: str | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TZ": "UTC", "LC_ALL": "C"}
    if agent and os.environ.get("SSH_AUTH_SOCK"):
        env["SSH_AUTH_SOCK"] = os.environ["SSH_AUTH_SOCK"]
    try:
        return subprocess.run([_keygen(), *args], input=data, capture_output=True, timeout=TIMEOUT_S, env=env,
                              check=False, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise SigningError(f"ssh-keygen {args[0]} {args[1]} took longer than {TIMEOUT_S} s (a passphrase prompt? "
                           "use a key without one, or load it into ssh-agent)") from None


def key_problem(keytype: str, blob: str) -> str | None:
    """None when ssh-keygen itself reads `keytype blob` as a public key (`ssh-keygen -l`); else its words. A key
    that parses as base64 can still be no key (a truncated blob): every signature by it would fail."""
    with tempfile.TemporaryDirectory(prefix="formula-key-") as tmp:
        probe = Path(tmp) / "key.pub"
        probe.write_text(f"{keytype} {blob}\n", encoding="utf-8")
        r = _run(["-l", "-f", str(probe)], b"")
    if r.returncode == 0:
        return None
    why = r.stderr.decode("utf-8", "replace").strip().splitlines()
    return why[-1] if why else "not a key"


def public_key(key: Path) -> tuple[str, str]:
    """(keytype, base64 blob) of a signing key: a .pub file, or the public half of a private key."""
    if not key.is_file():
        raise SigningError(f"--key {key}: no such file")
    text = None
    if key.suffix == ".pub":
        text = key.read_text(encoding="utf-8", errors="replace")
    else:
        r = _run(["-y", "-P", "", "-f", str(key)], b"")
        if r.returncode == 0:
            text = r.stdout.decode("utf-8", "replace")
        elif Path(f"{key}.pub").is_file():
            text = Path(f"{key}.pub").read_text(encoding="utf-8", errors="replace")
    parts = (text or "").split()
    if len(parts) < 2 or not _KEY_TYPES.match(parts[0]):
        raise SigningError(f"--key {key}: not an OpenSSH key (make one with `ssh-keygen -t ed25519`)")
    return parts[0], parts[1]


def sign(key: Path, statement: bytes) -> str:
    """The armoured SSHSIG signature of `statement` by `key` (a private key, or a .pub whose key ssh-agent holds)."""
    r = _run(["-Y", "sign", "-q", "-f", str(key), "-n", NAMESPACE], statement, agent=True)
    out = r.stdout.decode("utf-8", "replace")
    if r.returncode != 0 or "BEGIN SSH SIGNATURE" not in out:
        why = r.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SigningError(f"ssh-keygen could not sign with {key}: {why[-1] if why else 'no signature written'}")
    return out


# A signature by a throwaway key (its private half was deleted when this was made) of PROBE_TEXT: `find-principals`
# reads every line of an allowed_signers file against it and names each line it cannot parse, as `verify` would.
PROBE_TEXT = b"formula-registry allowed_signers check\n"
PROBE_SIGNATURE = """-----BEGIN SSH SIGNATURE-----
U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAgAGEPIDzkrTrEYM63JCYEH7lWUu
t0cpFpbIXY6gp9+PsAAAAQZm9ybXVsYS1yZWdpc3RyeQAAAAAAAAAGc2hhNTEyAAAAUwAA
AAtzc2gtZWQyNTUxOQAAAEBwtHIZc5X1O/sOceFo2GcIXvpOC9uV7HXfuLX5RIYsQl7Gyq
PXa3wn2an1k/hfiK1JbDpxhvQm6iA1CzRlD88D
-----END SSH SIGNATURE-----
"""
_REFUSED_LINE = re.compile(r"^allowed_signers:(\d+): (.+)$")


def keygen_problems(signers_text: str) -> list[tuple[int, str]]:
    """(line, ssh-keygen's words) for every line of `signers_text` ssh-keygen itself cannot parse (cached like
    verifications); none when ssh-keygen is not installed (every decision then fails, saying so)."""
    if not any(line.strip() and not line.lstrip().startswith("#") for line in signers_text.splitlines()):
        return []
    h = hashlib.sha256(b"formula-registry find-principals 1\0" + signers_text.encode("utf-8"))
    key = h.hexdigest()
    cache = _cache()
    if key in cache:
        return [(int(n), why) for n, why in jsontext.loads(cache[key] or "[]")]
    try:
        with tempfile.TemporaryDirectory(prefix="formula-signers-") as tmp:
            signers, sig = Path(tmp) / "allowed_signers", Path(tmp) / "probe.sig"
            signers.write_text(signers_text, encoding="utf-8")
            sig.write_text(PROBE_SIGNATURE, encoding="utf-8")
            r = _run(["-Y", "find-principals", "-f", "allowed_signers", "-s", "probe.sig"], b"", cwd=tmp)
    except SigningError:
        return []
    found = []
    for line in r.stderr.decode("utf-8", "replace").splitlines():
        m = _REFUSED_LINE.match(line.strip())
        if m:
            found.append((int(m.group(1)), m.group(2)))
    _remember(key, json.dumps(found))
    return found


def verify(signers_text: str, principal: str, statement: bytes, signature: str, day: dt.date) -> str | None:
    """None when `signature` is `principal`'s valid signature of `statement` on `day`; else ssh-keygen's reason.

    Both are cached: the result is a function of the bytes keyed, so a refused signature costs no ssh-keygen
    run on the next validate either (100 wrong signatures cost 0.5 s a run before)."""
    key = _cache_key(signers_text, principal, statement, signature, day)
    cache = _cache()
    if key in cache:
        return cache[key] or None
    with tempfile.TemporaryDirectory(prefix="formula-verify-") as tmp:
        signers, sig = Path(tmp) / "allowed_signers", Path(tmp) / "decision.sig"
        signers.write_text(signers_text, encoding="utf-8")
        sig.write_text(armour(signature), encoding="utf-8")
        r = _run(["-Y", "verify", "-f", str(signers), "-I", principal, "-n", NAMESPACE, "-s", str(sig),
                  "-O", f"verify-time={verify_time(day)}"], statement)
    if r.returncode == 0:
        _remember(key, "")
        return None
    lines = (r.stderr or r.stdout).decode("utf-8", "replace").strip().splitlines()
    why = lines[-1] if lines else "ssh-keygen refused the signature"
    _remember(key, why)
    return why


# ---------------------------------------------------------------------- cache of verification results


_CACHE_FILE = "signatures-2.json"  # key -> "" (verified) or ssh-keygen's reason (refused); 1 held successes only
_CACHE_MAX = 20000
_memo: dict[str, dict[str, str]] = {}


def _cache_path() -> Path | None:
    from registry.cachedir import cache_folder

    folder = cache_folder()
    return folder / _CACHE_FILE if folder is not None else None


def _cache_key(signers_text: str, principal: str, statement: bytes, signature: str, day: dt.date) -> str:
    h = hashlib.sha256(b"formula-registry verification 1\0")
    for part in (signers_text.encode(), principal.encode(), statement, armour(signature).encode(),
                 verify_time(day).encode()):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()


def _cache() -> dict[str, str]:
    p = _cache_path()
    if p is None:
        return {}
    if str(p) not in _memo:
        try:
            data = jsontext.loads(p.read_text(encoding="utf-8"))
            _memo[str(p)] = ({k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}
                             if isinstance(data, dict) else {})
        except (OSError, ValueError):
            _memo[str(p)] = {}
    return _memo[str(p)]


def _remember(key: str, result: str) -> None:
    """Add a result ("" for verified); written atomically (a lost race only costs a later re-verification)."""
    p = _cache_path()
    if p is None:
        return
    known = _cache()
    known[key] = result
    while len(known) > _CACHE_MAX:  # the oldest first (dicts keep insertion order)
        known.pop(next(iter(known)))
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".signatures-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(known, f)
        os.replace(tmp, p)
    except OSError:
        pass  # a read-only cache only costs speed
