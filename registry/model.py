"""What a loaded registry is: its files as validated models, and the problems found in them.

Kept apart from the loader so that the validation rules (registry.validate) can use these types
without importing the loader, which runs them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from registry.schema import Calculator, Guideline, UnitsFile

LOCK_FILE = "REGISTRY.lock"


@dataclass(frozen=True)
class Problem:
    """One validation finding, printed as `path:line: field: problem [CODE]`.

    `code` names the rule (see `registry.codes`); callers select problems by code, never by
    matching the message text.
    """

    path: str
    line: int
    field: str
    problem: str
    code: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.field}: {self.problem} [{self.code}]"


@dataclass
class Registry:
    root: Path
    calculators: dict[str, Calculator] = field(default_factory=dict)
    guidelines: dict[str, Guideline] = field(default_factory=dict)
    units: UnitsFile | None = None
    raw: dict[str, Any] = field(default_factory=dict)  # slug -> raw YAML data (with lines)
    paths: dict[str, Path] = field(default_factory=dict)  # slug -> file
    problems: list[Problem] = field(default_factory=list)
    validated: bool = False  # set by registry.validate.validate: `problems` then holds every rule's findings
    hashes: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)  # (slug, version) -> content hash
    _ids: dict[int, Calculator] = field(default_factory=dict, repr=False, compare=False)  # by_id's index (checked on use)
    # the trust files (policy, signers, history recorded before signing) as read for this registry: see
    # registry.trust.decisionlog.trust_of; kept in the validated snapshot, so a warm read-only command reads none of them
    trust_memo: Any = field(default=None, repr=False, compare=False)
    # dumps a warm command would otherwise make, stored with the snapshot: (kind, source object, value); see
    # registry.snapshot_extras (empty on a registry loaded from its files)
    derived: list[tuple[str, Any, Any]] = field(default_factory=list, repr=False, compare=False)

    @property
    def formulas_dir(self) -> Path:
        return self.root / "formulas"

    @property
    def lock_path(self) -> Path:
        return self.formulas_dir / LOCK_FILE

    def by_id(self, medcalc_id: int) -> Calculator:
        c = self._ids.get(medcalc_id)
        if c is not None and c.medcalc_id == medcalc_id and self.calculators.get(c.slug) is c:
            return c
        for c in self.calculators.values():
            if c.medcalc_id == medcalc_id:
                self._ids[medcalc_id] = c
                return c
        raise KeyError(medcalc_id)

    def get(self, ref: str | int) -> Calculator:
        """A calculator by slug or benchmark id (int or digit string)."""
        if isinstance(ref, int) or (isinstance(ref, str) and ref.isdigit()):
            return self.by_id(int(ref))
        return self.calculators[ref]

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)
