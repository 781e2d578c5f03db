"""A loaded, validated registry kept on disk, so a one-case command skips parsing every YAML file.

The snapshot is the pickled `Registry` that passed every validation rule, stored under a name made
of `loader.validation_key` (every byte of formulas/ and guidelines/, the registry code, the parsing
libraries' versions), the root folder and the Python version: a changed file makes a new name, so a
snapshot never stands for content other than what is on disk. It is written atomically, read with an
unpickler that builds only the registry's model classes and plain standard-library types, and anything wrong
with it (missing, truncated, foreign, another root) makes the caller load the files as usual.
"""
from __future__ import annotations

import hashlib
import io
import pickle
import sys
from pathlib import Path
from typing import Any

FORMAT = b"formula-registry snapshot 2\0"  # 2: the registry carries `derived`
KEEP = 8  # snapshots kept in the cache folder (each edit of a registry makes a new one); the oldest go first

# what a snapshot may build: classes (never functions) of the registry's model modules, and plain types
_MODEL_MODULES = frozenset({"registry.model", "registry.schema", "registry.yamlio",  # and the trust files':
                            "registry.trust.decisionlog", "registry.trust.policy",
                            "registry.trust.sshsig"})
_ALLOWED = {
    "builtins": {"dict", "list", "tuple", "set", "frozenset", "str", "int", "float", "bool", "bytes", "complex"},
    "pathlib": {"Path", "PosixPath", "WindowsPath", "PurePath", "PurePosixPath", "PureWindowsPath"},
    "datetime": {"date", "datetime", "time", "timedelta", "timezone"},
    "decimal": {"Decimal"},
}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if name in _ALLOWED.get(module, ()):
            return super().find_class(module, name)
        if module in _MODEL_MODULES:
            obj = super().find_class(module, name)
            if isinstance(obj, type) and obj.__module__ == module:  # a class defined there, not an imported helper
                return obj
        raise pickle.UnpicklingError(f"a registry snapshot does not build {module}.{name}")


def path_for(folder: Path, key: str, root: str) -> Path:
    h = hashlib.sha256(FORMAT + key.encode() + b"\0" + root.encode() + b"\0" + sys.version.encode())
    return folder / f"registry-{h.hexdigest()}.pickle"


def read(path: Path, root: str) -> Any | None:
    """The registry stored at `path`, or None when there is none or it is not a clean one of `root`."""
    from registry.model import Registry

    try:
        blob = path.read_bytes()
    except OSError:
        return None
    if not blob.startswith(FORMAT):
        return None
    try:
        reg = _Unpickler(io.BytesIO(blob[len(FORMAT):])).load()
    except Exception:  # noqa: BLE001 - a corrupt or foreign snapshot only costs a full load
        return None
    if not isinstance(reg, Registry) or not reg.validated or reg.problems or str(reg.root) != root:
        return None
    return reg


def write(path: Path, reg: Any) -> None:
    """Store a clean registry (atomically); a cache that cannot be written only costs the next start a load."""
    from registry.atomic import atomic_write

    try:
        blob = FORMAT + pickle.dumps(reg, protocol=pickle.HIGHEST_PROTOCOL)
        atomic_write(path, blob)
        _prune(path.parent, path)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        pass


def _prune(folder: Path, keep: Path) -> None:
    """Remove all but the `KEEP` newest snapshots (a snapshot removed only costs its registry a full load)."""
    old = sorted((p for p in folder.glob("registry-*.pickle") if p != keep),
                 key=lambda p: p.stat().st_mtime, reverse=True)[KEEP - 1:]
    for p in old:
        try:
            p.unlink()
        except OSError:
            pass
