"""The answer record: what every answer of the solver carries, so it can be checked and rebuilt.

One record per answer, whichever route produced it (the verified library, a model-written
program run by the executor, or an abstention). It names the exact content it was computed from
(calculator, formula version and that version's content hash, the registry lock digest) and
holds everything needed to recompute it without a model (inputs as given, program source).
The router (`formula solve`), the MCP tools and `formula replay` all speak this one format.
"""
from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from registry.loader import Registry
from registry.schema import Calculator, Version, VersionStatus
from registry.versions import active_hash, content_hash, lock_digest, read_snapshot

if TYPE_CHECKING:
    from solver.library.spelling import Cleaned

RECORD_FORMAT = 1
Route = Literal["library", "program", "abstain"]


class InputUsed(BaseModel):
    """One input as the caller gave it and as the formula used it (canonical unit)."""

    model_config = ConfigDict(extra="forbid")
    given: Any
    value: Any
    unit: str | None = None


class ReadAs(BaseModel):
    """One input written other than the registry spells it, as given and as read (solver.library.spelling): a name
    in another case, a unit alias, a choice's code, a yes/no written as a word or a number."""

    model_config = ConfigDict(extra="forbid")
    input: str
    given: Any
    read: Any
    what: str  # name, unit, option, yes/no


class SubResult(BaseModel):
    """The result of a calculator this one depends on (APACHE II's GCS, Cockcroft-Gault's BMI)."""

    model_config = ConfigDict(extra="forbid")
    calculator: str
    version: str
    content_hash: str
    value: Any
    unit: str | None = None


class CrossCheck(BaseModel):
    """Library and program computed the same case: both values and whether they agree."""

    model_config = ConfigDict(extra="forbid")
    library_value: Any = None
    program_value: Any = None
    tolerance: str  # "exact" or "relative 0.05"
    agree: bool


class AnswerRecord(BaseModel):
    """A self-describing answer; `formula replay RECORD.json` recomputes it from this alone."""

    model_config = ConfigDict(extra="forbid")
    format_version: int = RECORD_FORMAT
    calculator: str  # registry slug
    medcalc_id: int | None = None
    version: str  # formula version computed with
    content_hash: str  # the content hash of that version (registry.versions)
    registry_lock_digest: str | None = None
    variant: str = "benchmark"
    route: Route
    value: Any = None  # number, ISO date, [weeks, days]; None when abstaining
    unit: str | None = None
    abstained: bool = False
    reason: str | None = None  # why it abstained, or why this route was taken
    entities: dict[str, Any] = Field(default_factory=dict)  # the inputs as read, in the registry's spelling
    read_as: list[ReadAs] = Field(default_factory=list)  # each input written otherwise: as given and as read
    inputs: dict[str, InputUsed] = Field(default_factory=dict)  # as converted
    constants: dict[str, Any] = Field(default_factory=dict)  # the constants of the version used
    sub_results: list[SubResult] = Field(default_factory=list)
    # the steps behind the value, the last one the answer (`solver.library.working.Step.to_json`: step, value, unit,
    # from, kind, total); an abstention's says what was missing
    working: list[dict[str, Any]] = Field(default_factory=list)
    program: str | None = None  # program source, for the program route
    executor_outcome: dict[str, Any] | None = None  # the executor's Outcome as JSON
    executor_policy: str | None = None
    warnings: list[str] = Field(default_factory=list)  # e.g. "replaced by CKD-EPI 2021 (KDIGO ...)"
    requested_route: str | None = None  # what the caller asked for (auto, library, program); replay repeats it
    cross_check: CrossCheck | None = None  # library against program, when both ran
    timestamp: str = Field(default_factory=lambda: dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))


def cleaned(reg: Registry, calc: Calculator, entities: Any) -> Cleaned:
    """The entities in the registry's spelling (`solver.library.spelling.clean`): what the command line, the
    tools and `solve()` compute with. Raises `AmbiguousValue` for a spelling with two readings."""
    from solver.library.context import converter
    from solver.library.spelling import clean

    assert reg.units is not None
    return clean(calc, converter(reg.units, True), entities)


def as_given(rec: AnswerRecord, found: Cleaned) -> AnswerRecord:
    """`rec` computed from `found.entities`, with every reading made (as given and as read) and each input's
    `given` as it was typed."""
    rec.read_as = [ReadAs(input=r.input, given=r.given, read=r.read, what=r.what) for r in found.readings]
    for r in found.readings:
        if r.what != "name" and r.input in rec.inputs:
            rec.inputs[r.input].given = r.given
    rec.warnings[:0] = [w for w in found.warnings() if w not in rec.warnings]
    return rec


def version_hash(reg: Registry, calc: Calculator, version: Version | None = None) -> str:
    """The content hash of one version (the active one by default), as the lock file records it."""
    v = version or calc.active
    if v.status == VersionStatus.active:
        return active_hash(reg, calc.slug)
    snap = read_snapshot(reg.formulas_dir, calc.slug, v.version)  # an older version is what its snapshot holds
    if snap is None:
        raise ValueError(f"{calc.slug} {v.version} has no snapshot in formulas/history/")
    return content_hash(snap)


def registry_digest(reg: Registry) -> str | None:
    return lock_digest(reg.lock_path) if reg.lock_path.exists() else None


def _plain(v: Any) -> Any:
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, tuple):
        return list(v)
    return v


def library_record(reg: Registry, calculator: str | int | Calculator, entities: dict[str, Any], *,
                   variant: str = "published") -> AnswerRecord:
    """Compute with the verified library and return the full record (raises `CalculatorError`). `calculator`
    may be the registry's entry (resolved once by the caller). The sub-results are those of the computation
    itself: the dependencies its formula used, as it used them (one it did not need is neither computed nor
    listed, so it can never refuse an answer that does not depend on it)."""
    from solver.library import compute  # the library imports this package's siblings only

    res = compute(calculator, entities, variant=variant, registry=reg, working=True)
    calc = calculator if isinstance(calculator, Calculator) else reg.calculators[res.calculator]
    subs = [SubResult(calculator=sub.calculator, version=sub.version, content_hash=sub.content_hash,
                      value=_plain(sub.value), unit=sub.unit) for sub in res.subs]
    return AnswerRecord(
        calculator=calc.slug, medcalc_id=calc.medcalc_id, version=res.version,
        content_hash=res.content_hash, registry_lock_digest=registry_digest(reg), variant=variant,
        route="library", value=_plain(res.value), unit=res.unit, entities=entities,
        inputs={k: InputUsed(given=r.given, value=_plain(r.value), unit=r.unit) for k, r in res.inputs.items()},
        constants={k: c.model_dump(mode="json").get("value") for k, c in calc.constants.items()},
        sub_results=subs, working=[s.to_json() for s in res.working],
        warnings=list(getattr(res, "warnings", [])),
    )
