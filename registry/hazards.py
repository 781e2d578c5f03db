"""The hazard log and its risk matrix: registry data under `formulas/safety/` (schema, reading, risk lookup).

A hazard names what can go wrong with a calculator's answer, how badly and how likely, and the controls that
stand between it and a patient. Its risk and residual risk are looked up in the risk matrix (itself data,
with its source and a `verified` flag), never typed: the file has no field for them. The validation rules
(cross references, coverage) are `registry.hazard_rules`; the computed case is `audit.safety_case`.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from registry.schema import Slug, Strict
from registry.yamlio import YamlError, line_of, load_file

SAFETY_DIR = Path("safety")  # under formulas/
HAZARDS_FILE = SAFETY_DIR / "hazards.yaml"
MATRIX_FILE = SAFETY_DIR / "risk_matrix.yaml"
CASE_FILE = SAFETY_DIR / "case.yaml"
SIGNOFFS_FILE = SAFETY_DIR / "signoffs.yaml"
ALL = "all"  # a registry-wide hazard's `calculators`

HazardId = Field(pattern=r"^H-\d{3}$")
ControlId = Field(pattern=r"^C-\d{3}$")
Status = Literal["open", "mitigated", "accepted", "closed"]
ControlKind = Literal["design", "test", "training", "process"]
EvidenceKind = Literal["rule", "plausibility", "input_ranges", "reference_cases", "differential", "completeness",
                       "deviation", "router_abstention", "executor_policy", "default_variant", "signatures",
                       "test", "document"]


class Level(Strict):
    name: str = Field(min_length=1, max_length=40)
    meaning: str = Field(min_length=1)


class RiskMatrix(Strict):
    """`formulas/safety/risk_matrix.yaml`: severity x likelihood -> a rating 1..5."""

    source: str = Field(min_length=1, description="where the matrix comes from")
    verified: bool = Field(default=False, description="true only when a person checked it against the source")
    severities: list[Level] = Field(min_length=5, max_length=5, description="least to most severe")
    likelihoods: list[Level] = Field(min_length=5, max_length=5, description="least to most likely")
    ratings: dict[int, str] = Field(description="rating -> what it means")
    matrix: dict[str, list[int]] = Field(description="likelihood -> the rating per severity, in severities' order")
    acceptable_residual: int = Field(default=2, ge=1, le=5, description="highest residual rating the case accepts")

    @model_validator(mode="after")
    def _complete(self) -> RiskMatrix:
        names = [x.name for x in self.likelihoods]
        if sorted(self.matrix) != sorted(names):
            raise ValueError(f"matrix must have one row per likelihood ({', '.join(names)})")
        for row, cells in self.matrix.items():
            if len(cells) != len(self.severities) or any(c not in self.ratings for c in cells):
                raise ValueError(f"matrix row {row!r} needs one rating (of {sorted(self.ratings)}) per severity")
        return self

    def rating(self, severity: str, likelihood: str) -> int:
        col = [x.name for x in self.severities].index(severity)
        return self.matrix[likelihood][col]


class Evidence(Strict):
    """What stands behind a control: a kind, and what it names (a rule code, `slug#id`, a test file...)."""

    kind: EvidenceKind
    ref: str | None = Field(default=None, max_length=300)
    note: str | None = None


class Control(Strict):
    id: str = ControlId
    kind: ControlKind
    description: str = Field(min_length=1)
    evidence: list[Evidence] = Field(min_length=1)


class Hazard(Strict):
    id: str = HazardId
    title: str = Field(min_length=1, max_length=200)
    cause: str = Field(min_length=1)
    effect: str = Field(min_length=1)
    harm: str = Field(min_length=1)
    calculators: list[Slug] | Literal["all"]
    severity: str
    likelihood: str
    controls: list[str] = Field(default_factory=list)
    residual_severity: str
    residual_likelihood: str
    status: Status
    raised: dt.date
    closed: dt.date | None = None
    note: str | None = None


class NotApplicable(Strict):
    id: str = HazardId
    title: str = Field(min_length=1)
    why: str = Field(min_length=1)


class HazardFile(Strict):
    """`formulas/safety/hazards.yaml`."""

    controls: list[Control] = Field(default_factory=list)
    hazards: list[Hazard] = Field(default_factory=list)
    not_applicable: list[NotApplicable] = Field(default_factory=list)


class Purpose(Strict):
    """`formulas/safety/case.yaml`: what the case argues about (document control's fixed parts)."""

    title: str
    intended_purpose: str
    intended_users: str
    not_intended: str
    residual_statement: str = Field(description="the officer's words on the residual risk, beside the computed one")


@dataclass
class Log:
    """The hazard log as read: the files' models, their raw data (for lines) and the problems found."""

    matrix: RiskMatrix | None = None
    entries: HazardFile | None = None
    purpose: Purpose | None = None
    raw: dict[str, Any] = field(default_factory=dict)  # file (relative to the root) -> raw data with lines
    problems: list[tuple[str, int, str, str]] = field(default_factory=list)  # path, line, field, problem
    digest: str = ""  # sha256 of the log's two files, as read

    def risk(self, severity: str, likelihood: str) -> int | None:
        try:
            return self.matrix.rating(severity, likelihood) if self.matrix else None
        except (ValueError, KeyError):
            return None


def _field(loc: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else ("." if i else "") + str(p) for i, p in enumerate(loc)) or "(file)"


def _model(log: Log, root: Path, rel: Path, model: type[BaseModel], required: bool) -> Any:
    path, name = root / "formulas" / rel, f"formulas/{rel.as_posix()}"
    if not path.is_file():
        if required:
            log.problems.append((name, 1, "(file)", "missing: the hazard log needs it (`formula init` ships one)"))
        return None
    try:
        data = load_file(path)
    except YamlError as bad:
        log.problems.append((name, bad.line, "(file)", bad.problem))
        return None
    log.raw[name] = data
    if not isinstance(data, dict):
        log.problems.append((name, 1, "(file)", "expected a mapping of fields at the top level"))
        return None
    try:
        return model.model_validate(data)
    except ValidationError as err:
        for e in err.errors(include_url=False):
            loc = tuple(p for p in e["loc"] if not (isinstance(p, str) and p.startswith(("function-", "literal["))))
            msg = "unknown field" if e["type"] == "extra_forbidden" else (
                "required field is missing" if e["type"] == "missing" else e["msg"])
            log.problems.append((name, line_of(data, loc), _field(loc), msg))
        return None


def read_log(root: Path) -> Log | None:
    """The hazard log of the registry at `root`; None when it has no formulas/safety/ folder at all."""
    if not (root / "formulas" / SAFETY_DIR).is_dir():
        return None
    log = Log()
    log.matrix = _model(log, root, MATRIX_FILE, RiskMatrix, True)
    log.entries = _model(log, root, HAZARDS_FILE, HazardFile, True)
    log.purpose = _model(log, root, CASE_FILE, Purpose, False)
    h = hashlib.sha256(b"formula-registry hazard log 1\0")
    for rel in (MATRIX_FILE, HAZARDS_FILE):
        p = root / "formulas" / rel
        h.update(rel.as_posix().encode() + b"\0" + (p.read_bytes() if p.is_file() else b"") + b"\0")
    log.digest = "sha256:" + h.hexdigest()
    return log


def hazard_json(log: Log, h: Hazard) -> dict[str, Any]:
    """One hazard with the field names of the issue, its risks looked up and its controls spelled out."""
    controls = {c.id: c for c in (log.entries.controls if log.entries else [])}
    out = h.model_dump(mode="json", exclude_none=True)
    out["risk"] = log.risk(h.severity, h.likelihood)
    out["residual_risk"] = log.risk(h.residual_severity, h.residual_likelihood)
    out["controls"] = [controls[c].model_dump(mode="json", exclude_none=True) for c in h.controls if c in controls]
    return out


def hazard_hash(log: Log, h: Hazard) -> str:
    """A hazard's own digest (what a sign-off records, so a change to one hazard is named)."""
    body = json.dumps(hazard_json(log, h), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


def open_hazards(root: Path, slug: str) -> list[tuple[str, str, int | None, int | None, bool]]:
    """(id, title, risk, residual risk, registry-wide) of each open hazard naming `slug`, read without building
    the models (a warm `formula show` would pay ~60 ms for them): for a registry that passed validation."""
    try:
        data = load_file(root / "formulas" / HAZARDS_FILE)
        matrix = load_file(root / "formulas" / MATRIX_FILE)
        sev = [x["name"] for x in matrix["severities"]]

        def rating(s: Any, li: Any) -> int | None:
            return matrix["matrix"][li][sev.index(s)] if s in sev and li in matrix["matrix"] else None

        return [(h["id"], h["title"], rating(h["severity"], h["likelihood"]),
                 rating(h["residual_severity"], h["residual_likelihood"]), h["calculators"] == ALL)
                for h in data.get("hazards") or [] if h.get("status") == "open"
                and (h["calculators"] == ALL or slug in h["calculators"])]
    except (OSError, YamlError, KeyError, TypeError, AttributeError, IndexError):
        return []


def names(h: Hazard, slug: str) -> bool:
    """Whether hazard `h` applies to calculator `slug` (a registry-wide hazard applies to all)."""
    return h.calculators == ALL or slug in h.calculators


__all__ = ["ALL", "CASE_FILE", "HAZARDS_FILE", "MATRIX_FILE", "SAFETY_DIR", "SIGNOFFS_FILE", "Control", "Evidence",
           "Hazard", "HazardFile", "Log", "NotApplicable", "Purpose", "RiskMatrix", "hazard_hash", "hazard_json",
           "names", "open_hazards", "read_log"]
