"""Importers: other tools' evaluation logs as run folders of this toolkit (`formula import FORMAT FILE...`).

An importer reads one log file into a `SourceFile` (its cases as `SourceRow`s, the dataset they were
scored on, the model and prompt style); `solver.importers.common` then re-scores every row with the
pinned scorer and writes `results.jsonl` and `manifest.json` exactly as `formula run` does. A new
format is one module in this package that registers a reader with `@IMPORTERS.register("name")`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from solver.plugins import Plugins


class ImportFailure(ValueError):
    """A log that cannot be imported; the message names the file, line and field."""


@dataclass(frozen=True)
class DatasetSpec:
    """The gold set a source was scored against: `key` identifies it for pairing, `title` is shown."""

    key: str  # e.g. "medcalc-bench-2024-test"; runs on different keys are never paired
    title: str  # e.g. "MedCalc-Bench 2024 test split, 1,047 rows"
    rows: int | None = None  # rows of the whole split, where known
    source: str | None = None  # where the gold comes from


@dataclass
class SourceRow:
    """One case of a log, as the log holds it (no patient note)."""

    line: int
    row_number: int
    calculator_id: int
    ground_truth: Any
    answer_text: Any = None  # what the source's own extractor read, or None
    reply: str | None = None  # the raw reply as the log keeps it
    calls: list[dict[str, Any]] = field(default_factory=list)  # model turns (no patient note)
    note_id: str | None = None
    category: str | None = None  # as the log names it, if it does
    source_verdict: bool | None = None  # the log's own verdict (MedCalc-Bench's `Result`)
    lower: Any = None  # limits, where the log carries them
    upper: Any = None
    seed: int = 0  # one answer per case; logs with several epochs store epoch - 1


@dataclass
class SourceFile:
    path: Path
    sha256: str
    format: str
    dataset: DatasetSpec
    rows: list[SourceRow]
    model: str | None = None
    prompt_style: str | None = None
    provenance: dict[str, Any] = field(default_factory=dict)  # repository, commit, licence where known
    warnings: list[str] = field(default_factory=list)


class Importer(Protocol):
    """Reads one log file; `dataset` names the gold set when the file cannot tell."""

    title: str

    def read(self, path: Path, *, dataset: str | None = None) -> SourceFile: ...


IMPORTERS: Plugins[Importer] = Plugins("importer", "solver.importers")
