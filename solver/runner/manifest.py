"""DIR/manifest.json: everything that produced a run, and the settings a resumed run must share."""
from __future__ import annotations

import datetime as dt
import json
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from registry.atomic import atomic_write

MANIFEST_FORMAT = 1
REPO = Path(__file__).resolve().parents[2]


class DatasetInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    sha256: str
    rows: int
    kind: str
    name: str | None = None  # the dataset as people name it (imported runs); runs on different names never pair


class GitInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    commit: str | None = None
    dirty: bool | None = None


class Manifest(BaseModel):
    """One run folder's record. `settings()` is what a resumed run must match exactly."""

    model_config = ConfigDict(extra="forbid")
    format_version: int = MANIFEST_FORMAT
    arm: str
    arm_version: str
    arm_digest: str
    arm_definition: dict[str, Any]
    model: str | None = None
    model_revision: str | None = None
    engine: str | None = None
    engine_info: dict[str, Any] = Field(default_factory=dict)
    decoding: dict[str, Any] = Field(default_factory=dict)
    send_seed: bool = False
    seeds: list[int]
    limit: int | None = None
    dataset: DatasetInfo
    one_shot: DatasetInfo | None = None
    registry_lock_digest: str | None = None
    executor: dict[str, Any] | None = None
    git: GitInfo = Field(default_factory=GitInfo)
    packages: dict[str, str | None] = Field(default_factory=dict)
    templates: dict[str, str] = Field(default_factory=dict)  # template file -> sha256
    formula_texts: dict[str, dict[str, str]] = Field(default_factory=dict)  # slug -> {version, sha256}
    started_at: str
    finished_at: str | None = None
    resumed_at: list[str] = Field(default_factory=list)
    status: str = "running"  # running | complete | stopped
    rows_expected: int = 0
    rows_done: int = 0
    correct: int = 0
    rescored_at: str | None = None
    # imported runs (`formula import`): the log files and how they were read; no formula text was shown
    source: dict[str, Any] | None = None
    audit_groups: dict[str, str] = Field(default_factory=dict)  # slug -> audit group when imported

    def settings(self) -> dict[str, Any]:
        return {
            "arm": self.arm, "arm_version": self.arm_version, "arm_digest": self.arm_digest, "model": self.model,
            "model_revision": self.model_revision, "engine": self.engine, "decoding": self.decoding,
            "send_seed": self.send_seed, "seeds": self.seeds, "limit": self.limit,
            "dataset_sha256": self.dataset.sha256, "one_shot_sha256": self.one_shot.sha256 if self.one_shot else None,
            "registry_lock_digest": self.registry_lock_digest,
            "executor_policy": (self.executor or {}).get("policy"),
            "formula_texts": self.formula_texts,
        }


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def git_info() -> GitInfo:
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True, timeout=10, check=True).stdout.strip())
        return GitInfo(commit=commit, dirty=dirty)
    except (OSError, subprocess.SubprocessError):
        return GitInfo()


def packages() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in ("formula-registry", "pydantic", "jinja2", "httpx", "pandas", "pyarrow", "vllm", "torch",
                 "transformers"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def display_path(path: Path) -> str:
    """A path inside this checkout as a relative path (manifests stay portable), others as given."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def read(path: Path) -> Manifest:
    from registry import jsontext

    return Manifest.model_validate(jsontext.read_file(path, what="run manifest"))


def write(path: Path, manifest: Manifest) -> None:
    atomic_write(path, json.dumps(manifest.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n")


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    out = []
    for k in sorted(set(old) | set(new)):
        if old.get(k) != new.get(k):
            a, b = json.dumps(old.get(k))[:80], json.dumps(new.get(k))[:80]
            out.append(f"{k}: {a} in the folder, {b} now")
    return out
