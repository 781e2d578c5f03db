"""Write imported logs as a run folder: the same `results.jsonl` and `manifest.json` `formula run` writes.

Everything is read, checked and re-scored before a byte is written; the folder is written under its
lock, each file atomically. Re-importing the same files into the same folder replaces the run;
a folder holding any other run is refused.
"""
from __future__ import annotations

import hashlib
import json
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from registry import jsontext
from solver.importers import IMPORTERS, ImportFailure, SourceFile
from solver.importers.common import RULE, SEED, Built, Difference, build_rows, check_rows, safe_label
from solver.plugins import UnknownPlugin
from solver.runner import manifest as mf
from solver.runner.results import rewrite


@dataclass
class Imported:
    out: Path
    arm: str
    model: str | None
    dataset: str
    rows: int
    correct: int
    differences: list[Difference] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {"dir": str(self.out), "arm": self.arm, "model": self.model, "dataset": self.dataset,
                "rows": self.rows, "correct": self.correct,
                "accuracy": 100.0 * self.correct / self.rows if self.rows else 0.0,
                "differences": [d.as_dict() for d in self.differences], "warnings": self.warnings}


def read_sources(fmt: str, files: Sequence[Path], dataset: str | None = None) -> list[SourceFile]:
    try:
        importer = IMPORTERS.get(fmt)
    except UnknownPlugin as e:
        raise ImportFailure(str(e)) from None
    return [_read_one(importer, Path(f), dataset) for f in files]


def _read_one(importer: Any, path: Path, dataset: str | None) -> SourceFile:
    """One file through its importer; whatever a hostile file makes the reading raise becomes an ImportFailure
    naming the file (a lying zip directory, a number past Python's digit limit, nesting past the stack)."""
    try:
        return importer.read(path, dataset=dataset)
    except ImportFailure:
        raise
    except RecursionError:
        raise ImportFailure(f"{path}: nested too deeply to be an evaluation log; check that it is the right "
                            "file") from None
    except (OSError, ValueError, OverflowError, EOFError, LookupError, TypeError, AttributeError,
            NotImplementedError, zipfile.BadZipFile, struct.error) as e:
        raise ImportFailure(f"{path}: not a readable log ({type(e).__name__}: {str(e)[:200]}); check that it is "
                            "the right file and format") from None


def _digest(obj: Any) -> str:
    return "sha256:" + hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def default_arm(src: SourceFile) -> str:
    style = (safe_label(src.prompt_style) or "imported").replace("_", "-")
    return f"{src.format}-{style}"


def _manifest(sources: Sequence[SourceFile], built: Built, reg: Any, arm: str, model: str | None,
              fmt: str) -> mf.Manifest:
    from solver.records import registry_digest

    first = sources[0]
    ds = first.dataset
    gold = sorted((r["row_number"], r["calculator_id"], json.dumps(r["ground_truth"])) for r in built.rows)
    definition = {
        "name": arm, "version": "imported", "kind": "imported", "importer": fmt,
        "title": f"imported: {IMPORTERS.get(fmt).title}", "prompt_style": first.prompt_style,
        "formula_access": "none: no formula text of this registry was shown to the model",
        "variable_access": "extracted by the model from the note", "scoring": RULE,
    }
    slugs = sorted({r["calculator"] for r in built.rows})
    now = mf.now()
    correct = sum(1 for r in built.rows if r["correct"])
    return mf.Manifest(
        arm=arm, arm_version="imported", arm_digest=_digest(definition), arm_definition=definition, model=model,
        engine_info={"importer": fmt}, seeds=sorted({r["seed"] for r in built.rows}) or [SEED],
        dataset=mf.DatasetInfo(path=ds.source or ds.key, sha256=_digest(gold), rows=len(built.rows), kind=ds.key,
                               name=ds.title),
        registry_lock_digest=registry_digest(reg), git=mf.git_info(), packages=mf.packages(),
        started_at=now, finished_at=now, status="complete", rows_expected=len(built.rows),
        rows_done=len(built.rows), correct=correct,
        source={
            "format": fmt, "prompt_style": first.prompt_style, "dataset": ds.title, "dataset_key": ds.key,
            "formula_text_shown": False, "scoring": RULE,
            "files": [{"path": mf.display_path(s.path), "name": s.path.name, "sha256": s.sha256, "rows": len(s.rows),
                       **s.provenance} for s in sources],
            "differences": [d.as_dict() for d in built.differences],
        },
        audit_groups={s: reg.get(s).audit_group for s in slugs},
    )


def _check_folder(out: Path, shas: list[str]) -> None:
    mpath, rpath = out / "manifest.json", out / "results.jsonl"
    if not mpath.exists():
        if rpath.exists() and rpath.stat().st_size:
            raise ImportFailure(f"{rpath} exists without a manifest.json; import into a new --out folder")
        return
    try:
        old = jsontext.read_file(mpath, what="run manifest")
        old_shas = [f["sha256"] for f in (old.get("source") or {}).get("files", [])]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        old_shas = []
    if old_shas != shas:
        raise ImportFailure(f"{out} holds another run; import into a new --out folder")


def import_run(fmt: str, files: Sequence[Path], out: Path, *, model: str | None = None, arm: str | None = None,
               dataset: str | None = None, provenance: dict[str, str] | None = None) -> Imported:
    """Read, re-score and write one run folder from one or more log files of one run; `provenance`
    (repository, commit, licence, ...) is recorded with every file."""
    from filelock import FileLock, Timeout

    from registry.loader import get_registry

    if not files:
        raise ImportFailure("give at least one file")
    sources = read_sources(fmt, files, dataset)
    check_rows(sources)
    reserved = sorted(set(provenance or {}) & {"path", "name", "sha256", "rows"})
    if reserved:
        raise ImportFailure(f"--provenance {reserved[0]}=...: that key is the importer's own; choose another name")
    for s in sources:
        s.provenance.update(provenance or {})
    reg = get_registry()
    models = sorted({s.model for s in sources if s.model})
    use_model = model or (models[0] if len(models) == 1 else None)
    if model is None and len(models) > 1:
        raise ImportFailure(f"the files name different models ({', '.join(models)}); give --model, or import them "
                            "as separate runs")
    use_arm = arm or default_arm(sources[0])
    built = Built(rows=[])
    for s in sources:
        b = build_rows(s, reg, arm=use_arm, model=use_model)
        built.rows += b.rows
        built.differences += b.differences
        built.warnings += s.warnings + b.warnings
    built.rows.sort(key=lambda r: r["row_number"])
    man = _manifest(sources, built, reg, use_arm, use_model, fmt)
    out.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(out / ".lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise ImportFailure(f"another command is writing {out}") from None
    try:
        _check_folder(out, [s.sha256 for s in sources])
        rewrite(out / "results.jsonl", built.rows)
        mf.write(out / "manifest.json", man)
    finally:
        lock.release()
    return Imported(out=out, arm=use_arm, model=use_model, dataset=sources[0].dataset.title, rows=len(built.rows),
                    correct=man.correct, differences=built.differences, warnings=built.warnings)
