"""Pydantic models of the registry files.

Every model forbids unknown fields, so a typo in a YAML key is an error with a line number
rather than a silently ignored value. Field names follow FHIR's Library resource where one
exists (status, version, approval date, last review date, related artifacts). Every model is
frozen (see `Strict`): an edit is a copy, never a change in place.
"""
from __future__ import annotations

import datetime as dt
import math
import re
from enum import Enum
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_serializer, model_validator

SLUG_RE = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
SEMVER_RE = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$"
PARTIAL_DATE_RE = r"^\d{4}(-\d{2}(-\d{2})?)?$"

Slug = Annotated[str, Field(pattern=SLUG_RE, min_length=2, max_length=80)]
Number = Union[int, float]


class Strict(BaseModel):
    """The base of every registry model: unknown fields are errors, and a loaded model is frozen.

    Frozen (pydantic's `frozen=True`): assigning a field raises a ValidationError, so an entry is edited by
    copying it (`model_copy(update=...)`), never in place, and what was worked out from an entry (its plan,
    solver.library.calculator_plan; its content hash, registry.versions) keeps describing it. The freezing is shallow:
    the lists and dicts a model holds could still be changed in place, and no code may do so. Frozen models
    are hashable by their field values (one that holds a list or dict raises TypeError when hashed);
    equality is field by field, as before.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True, defer_build=True)


# --------------------------------------------------------------------------- enumerations


class Category(str, Enum):
    lab_test = "lab test"
    physical = "physical"
    risk = "risk"
    severity = "severity"
    diagnosis = "diagnosis"
    date = "date"
    dosage = "dosage"


class OutputKind(str, Enum):
    decimal = "decimal"
    integer = "integer"
    date = "date"
    gestational_age = "gestational_age"


class IntendedUse(str, Enum):
    diagnosis = "diagnosis"
    prognosis = "prognosis"
    screening = "screening"
    staging = "staging"
    dating = "dating"
    dosing = "dosing"
    allocation = "allocation"
    conversion = "conversion"
    arithmetic_identity = "arithmetic identity"


class InputKind(str, Enum):
    quantity = "quantity"  # [value, "unit"], converted to the canonical unit
    measurement = "measurement"  # [value, "unit"] read in its canonical unit (unit ignored by the benchmark)
    number = "number"  # a bare number
    count = "count"  # type: ignore[assignment]  # a bare whole number; the kind's name shadows str.count on purpose
    boolean = "boolean"
    choice = "choice"
    date = "date"  # "MM/DD/YYYY"
    age = "age"  # [n, "years"|"months"|"weeks"|"days"], possibly several pairs
    weight = "weight"
    height = "height"
    temperature = "temperature"
    count_per_volume = "count per volume"  # [count, "µL"]: count per that volume
    special = "special"  # a calculator-specific structure (steroid dose, MME drug list)


class VersionStatus(str, Enum):
    draft = "draft"
    active = "active"
    superseded = "superseded"
    retired = "retired"


class Relation(str, Enum):
    supports = "supports"
    replaces = "replaces"
    restricts = "restricts"
    competes = "competes"


class ConcernType(str, Enum):
    none = "none"
    replaced_by_guideline = "replaced_by_guideline"
    jurisdiction_dependent = "jurisdiction_dependent"
    use_specific_caveat = "use_specific_caveat"
    contested_coefficient = "contested_coefficient"
    newer_version_exists = "newer_version_exists"


class CompletenessStatus(str, Enum):
    complete = "complete"
    incomplete = "incomplete"
    wrong = "wrong"


# --------------------------------------------------------------------------- citations


class Citation(Strict):
    """A publication. Identifiers only where certain; `verified` says whether a person checked it."""

    authors: list[str] = Field(min_length=1)
    title: str
    journal: str | None = None
    body: str | None = None
    year: int = Field(ge=1800, le=2100)
    volume: str | None = None
    pages: str | None = None
    doi: str | None = Field(default=None, pattern=r"^10\.\d{4,9}/\S+$")
    pmid: str | None = Field(default=None, pattern=r"^\d{1,9}$")
    url: str | None = Field(default=None, pattern=r"^https://\S+$")
    verified: bool = False
    note: str | None = None

    @model_validator(mode="after")
    def _venue(self) -> "Citation":
        if not self.journal and not self.body:
            raise ValueError("a citation needs a journal or an issuing body")
        return self


# --------------------------------------------------------------------------- guidelines


class GuidelineKind(str, Enum):
    guideline = "guideline"
    consensus = "consensus"
    policy = "policy"
    scientific_statement = "scientific statement"
    study = "study"
    original_publication = "original publication"


class Guideline(Strict):
    """One guideline or source document (`guidelines/<slug>.yaml`)."""

    slug: Slug
    kind: GuidelineKind
    body: str
    title: str
    jurisdiction: str
    year: int = Field(ge=1800, le=2100)
    publication: Citation | None = None
    verified: bool = False
    summary: str | None = None


# --------------------------------------------------------------------------- inputs


class InputDefinition(Strict):
    """What an input means, where its meaning varies between sources (HAS-BLED's "labile INR").

    Shown to people and in tool descriptions, so it is part of a version's hashed content
    (registry/versions.py): adding or correcting one is released like any other edit.
    """

    text: str = Field(min_length=1, description="the concept's definition, in our words")
    source: str = Field(description="the publication that defines it (author, journal, year)")
    seen_in: str | None = Field(default=None, description="where we read the definition, when not the source itself")
    verified: bool = Field(default=False, description="true only when a person checked it against the source")


class Input(Strict):
    """One entity of the benchmark's gold-variable block."""

    name: str = Field(min_length=1, description="the benchmark's entity key, spelled exactly")
    kind: InputKind
    description: str | None = None
    unit: str | None = Field(default=None, description="canonical unit the calculation uses")
    accepted_units: list[str] = Field(default_factory=list)
    analyte: str | None = Field(default=None, description="key into units.yaml for molar mass/valence")
    molar_mass: float | None = Field(default=None, gt=0, description="overrides the analyte's molar mass")
    options: list[str] = Field(default_factory=list, description="allowed values of a choice")
    range: tuple[float, float] | None = Field(default=None, description="physiologically plausible range, canonical unit")
    required: bool = True
    default: Any = Field(default=None, description="value assumed when absent (optional inputs only)")
    used: bool = Field(default=True, description="false when the benchmark maps the key but never reads it")
    definition: InputDefinition | None = Field(default=None, description="the concept's definition and its source")
    # How an export may write an option of this choice ({code: option}), beside the shared codes of units.yaml
    # (`spellings.choices`). Not content: a code never changes a number computed from the option it reads as, and
    # the answer record keeps what was given and what it was read as (docs/guide/inputs.md).
    codes: dict[str, str] = Field(default_factory=dict, exclude=True,
                                  description="codes an export writes for this choice's options: {code: option}")

    @model_validator(mode="after")
    def _consistent(self) -> "Input":
        if self.kind == InputKind.choice and not self.options:
            raise ValueError("a choice input needs its options")
        if self.kind != InputKind.choice and self.options:
            raise ValueError("only a choice input has options")
        if self.range is not None and self.range[0] > self.range[1]:
            raise ValueError("range must be [low, high] with low <= high")
        if self.required and self.default is not None:
            raise ValueError("a required input cannot have a default")
        if self.kind in (InputKind.quantity, InputKind.measurement) and not self.unit:
            raise ValueError(f"a {self.kind.value} input needs its canonical unit")
        if self.codes and self.kind != InputKind.choice:
            raise ValueError("only a choice input has codes")
        wrong = sorted(o for o in self.codes.values() if o not in self.options)
        if wrong:
            raise ValueError(f"codes must read as options of the input; not options: {', '.join(map(repr, wrong))}")
        return self


# --------------------------------------------------------------------------- constants and tables


class Constant(Strict):
    value: Number | str
    unit: str | None = None
    description: str
    source: str | None = None
    applies_to: Literal["both", "benchmark", "published"] = Field(
        default="both", description="which variant uses it; supplied texts must state the benchmark's")
    label: str | None = Field(
        default=None, min_length=1, description="the name of the variant or factor this value is (e.g. 'Hillier "
        "factor'); texts show it as {{ label.NAME }}, so a fix that changes the value says what it is called")
    # The allowed range guards edits (`formula fix`, hand edits before release); it is not content,
    # so it is left out of dumps and never changes a released version's hash.
    min: float | None = Field(default=None, exclude=True, description="smallest allowed value (inclusive)")
    max: float | None = Field(default=None, exclude=True, description="largest allowed value (inclusive)")
    positive: bool = Field(default=False, exclude=True, description="the value must be greater than 0")
    type: Literal["integer", "number"] | None = Field(
        default=None, exclude=True, description="integer: only whole numbers (decimals, caps of integer scores)")

    @model_validator(mode="after")
    def _allowed(self) -> "Constant":
        problem = constant_problem(self, self.value)
        if problem:
            raise ValueError(problem)
        return self

    @model_serializer(mode="wrap")
    def _without_absent_label(self, handler: Any) -> Any:
        """No label, no key: constants written before labels existed keep their content (and hash)."""
        data = handler(self)
        if isinstance(data, dict) and data.get("label", "") is None:
            del data["label"]
        return data


def constant_problem(spec: "Constant", value: Any) -> str | None:
    """Why `value` is not allowed for this constant (None when it is): finite, and within its declared range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None if isinstance(value, str) else f"{value!r} is not a number"
    if not math.isfinite(value):
        return f"value {value!r} is not a finite number"
    if spec.type == "integer" and not float(value).is_integer():
        return f"value {value!r} is not a whole number (the constant has type integer)"
    if spec.positive and not value > 0:
        return f"value {value!r} must be greater than 0"
    if spec.min is not None and value < spec.min:
        return f"value {value!r} is below the allowed minimum {spec.min:g}"
    if spec.max is not None and value > spec.max:
        return f"value {value!r} is above the allowed maximum {spec.max:g}"
    return None


class Band(Strict):
    """One row of a banded table: the first band whose bounds hold gives `value`.

    Bounds are explicit about inclusion: `ge`/`gt` for the lower bound, `le`/`lt` for the upper.
    """

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    value: Number
    label: str | None = None

    @model_validator(mode="after")
    def _bounds(self) -> "Band":
        if self.ge is not None and self.gt is not None:
            raise ValueError("a band has at most one lower bound (ge or gt)")
        if self.le is not None and self.lt is not None:
            raise ValueError("a band has at most one upper bound (le or lt)")
        return self

    def holds(self, x: float) -> bool:
        if self.ge is not None and not x >= self.ge:
            return False
        if self.gt is not None and not x > self.gt:
            return False
        if self.le is not None and not x <= self.le:
            return False
        if self.lt is not None and not x < self.lt:
            return False
        return True


class Table(Strict):
    """A named table of the calculation.

    - `bands`: a numeric variable mapped to points or a value by ordered bands;
    - `points`: criteria (input names or named items) mapped to their weights;
    - `lookup`: an option, drug or category mapped to a number.
    """

    description: str
    variable: str | None = Field(default=None, description="the input or intermediate the table reads")
    unit: str | None = None
    bands: list[Band] | None = None
    points: dict[str, Number] | None = None
    lookup: dict[str, Number] | None = None
    default: Number | None = Field(default=None, description="value when no band or key matches")
    source: str | None = None
    applies_to: Literal["both", "benchmark", "published"] = "both"
    labels_only: bool = Field(default=False, description="band values are codes; texts show only the labels")

    @model_validator(mode="after")
    def _one_shape(self) -> "Table":
        shapes = [s for s in (self.bands, self.points, self.lookup) if s is not None]
        if len(shapes) != 1:
            raise ValueError("a table has exactly one of bands, points or lookup")
        if self.bands is not None and not self.bands:
            raise ValueError("bands must not be empty")
        return self

    def band(self, x: float) -> Number:
        assert self.bands is not None
        for b in self.bands:
            if b.holds(x):
                return b.value
        if self.default is None:
            raise LookupError(f"no band holds {x!r}")
        return self.default


# --------------------------------------------------------------------------- versions


class SignOff(Strict):
    who: str
    role: str
    date: dt.date
    reason: str | None = Field(default=None, description="why (an approval or rejection says why it was given)")


DECISIONS = ("release", "draft", "approve", "reject", "review", "emergency")


class Decision(Strict):
    """One signed decision on a version (registry.governance.signatures): the statement's fields and its SSHSIG signature.

    The statement signed is canonical JSON of these fields (less `signature`) with the calculator's slug,
    the version, its content hash and effective date, and the hash of the previous decision in the
    calculator's log; the principal is the one `formulas/policy/allowed_signers` gives the signing key.
    """

    decision: str = Field(pattern="^(" + "|".join(DECISIONS) + ")$")
    principal: str = Field(max_length=200)
    role: str = Field(max_length=200)
    name: str | None = Field(default=None, max_length=200, description="the decider's name in people: when they "
                             "signed (signed with it; absent in decisions made before it was recorded)")
    date: dt.date
    reason: str = Field(default="", max_length=4000)
    previous: str | None = Field(default=None, pattern="^sha256:[0-9a-f]{64}$",
                                 description="hash of the previous decision in this calculator's log")
    next_review: dt.date | None = Field(default=None, description="a review's next due date (signed with it)")
    signature: str = Field(max_length=4000, description="armoured SSHSIG text (ssh-keygen -Y sign)")


class Version(Strict):
    version: str = Field(pattern=SEMVER_RE)
    status: VersionStatus
    effective: dt.date
    text: str = Field(description="jinja2 template of the supplied formula text")
    changelog: str
    released_by: SignOff | None = Field(default=None, description="who made this version (fix/release --by/--role)")
    approved_by: SignOff | None = Field(default=None, description="who approved a draft (`formula approve`)")
    approved: dt.date | None = None
    last_review: dt.date | None = None
    next_review: dt.date | None = None
    signoffs: list[SignOff] = Field(default_factory=list)
    decisions: list[Decision] = Field(default_factory=list, max_length=50,  # each costs one ssh-keygen run
                                      description="signed decisions (registry.governance.signatures)")

    @property
    def key(self) -> tuple[int, int, int]:
        return semver_key(self.version)


def semver_key(v: str) -> tuple[int, int, int]:
    a, b, c = (int(p) for p in v.split("."))
    return (a, b, c)


# --------------------------------------------------------------------------- audit blocks


class GuidelineRef(Strict):
    guideline: Slug
    relation: Relation
    jurisdiction: str
    note: str | None = None


class LiteratureAudit(Strict):
    concern: ConcernType
    summary: str | None = None
    guidelines: list[Slug] = Field(default_factory=list)
    source: str | None = None

    @model_validator(mode="after")
    def _summary(self) -> "LiteratureAudit":
        if self.concern != ConcernType.none and not self.summary:
            raise ValueError("a concern needs a summary")
        return self


class Completeness(Strict):
    status: CompletenessStatus
    finding: str | None = Field(default=None, description="what was wrong or missing")
    change: str | None = Field(default=None, description="what the repair changed")
    source: str

    @model_validator(mode="after")
    def _finding(self) -> "Completeness":
        if self.status != CompletenessStatus.complete and not (self.finding and self.change):
            raise ValueError("an incomplete or wrong text needs its finding and change")
        return self


class Replacement(Strict):
    """A successor of this formula (FHIR relatedArtifact type `successor`)."""

    successor: Slug | None = Field(default=None, description="registry slug where we hold the successor")
    citation: Citation | None = Field(default=None, description="the successor's publication otherwise")
    name: str = Field(description="the successor formula's name")
    kind: Literal["replaced_by", "alternative"] = "replaced_by"
    guideline: Slug | None = None
    jurisdiction: str
    since: str = Field(pattern=PARTIAL_DATE_RE, description="YYYY, YYYY-MM or YYYY-MM-DD")
    note: str | None = None

    @model_validator(mode="after")
    def _target(self) -> "Replacement":
        if self.successor is None and self.citation is None:
            raise ValueError("a replacement names a registry successor or cites one")
        return self


class Deviation(Strict):
    """A place where the benchmark's reference departs from the published formula."""

    id: Slug
    benchmark: str = Field(description="what the benchmark's reference does")
    published: str = Field(description="what the publication or guideline says")
    citation: str = Field(description="where the published rule is stated")
    inputs: list[str] = Field(default_factory=list, description="inputs the difference affects")
    verified: bool = False


class Plausibility(Strict):
    """A cross-input plausibility rule: the range a derived quantity must fall in.

    Each input can be within its own range while their combination is impossible (0.3 kg and
    2.8 m give a BMI of 0.04). The `published` variant refuses such inputs; the `benchmark`
    variant computes and reports a warning.
    """

    id: Slug
    quantity: Literal["output", "difference"] = Field(
        default="output", description="what the rule reads: the calculator's result (weeks for a gestational "
        "age), refused as published; or `difference`, the first of `inputs` minus the second (each as the "
        "library converted it), warned about in both variants")
    inputs: list[str] | None = Field(default=None, description="for `difference`: the two inputs, minuend first")
    range: tuple[float, float]
    unit: str | None = None
    description: str
    source: str | None = Field(default=None, description="why the rule holds (physiology, a definition)")

    @model_validator(mode="after")
    def _operands(self) -> "Plausibility":
        if (self.quantity == "difference") != (self.inputs is not None and len(self.inputs) == 2):
            raise ValueError("a `difference` rule names exactly two inputs (minuend first); an `output` rule names none")
        return self

    @model_validator(mode="after")
    def _ordered(self) -> "Plausibility":
        if self.range[0] > self.range[1]:
            raise ValueError("range must be [low, high] with low <= high")
        return self


class ResultRounding(Strict):
    """How a published calculator rounds, as its source states it (applied by solver.library.rounding).

    `mode` applies to every rounding step the calculator's text names (MELD Na rounds twice); `decimals`
    is the result's. `half_up` sends ties away from zero (SAS/spreadsheet ROUND, the OPTN definitions);
    `half_even` is Python's `round`, the benchmark's reference code.
    """

    mode: Literal["half_up", "half_even"]
    decimals: int = Field(default=0, ge=0, le=10)
    source: str = Field(min_length=1, description="where the rounding rule is stated")
    verified: bool = Field(default=False, description="true once a person has read the rule in the source")


class Output(Strict):
    kind: OutputKind
    unit: str | None = None
    rounding: Literal["round_number", "integer", "none"] = Field(
        default="round_number", description="the benchmark's output rounding (its reference code, Python's round); "
        "the published variant uses it too unless `published_rounding` is given")
    range: tuple[float, float] | None = None
    published_rounding: ResultRounding | None = Field(
        default=None, description="the rounding the publication states (mode, decimals, source); the benchmark "
        "variant keeps `rounding` wherever a benchmark exists, a named deviation where the two differ")

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        """Leave `published_rounding` out when absent, so entries without it keep their released content."""
        data = handler(self)
        if isinstance(data, dict) and data.get("published_rounding") is None:
            data.pop("published_rounding", None)
        return data


class Formula(Strict):
    name: str
    publication: Citation
    expression: str | None = Field(default=None, description="the formula in one line, for people")


# --------------------------------------------------------------------------- calculator


class Calculator(Strict):
    """One calculator (`formulas/<slug>.yaml`)."""

    slug: Slug
    medcalc_id: Annotated[int, Field(strict=True, ge=1)] | None = Field(
        default=None, description="the benchmark's id (a whole number, never quoted); none for successors; "
        "fixed once released")
    name: str
    category: Category
    output: Output
    intended_use: IntendedUse
    formula: Formula
    inputs: list[Input] = Field(default_factory=list)
    constants: dict[str, Constant] = Field(default_factory=dict)
    tables: dict[str, Table] = Field(default_factory=dict)
    depends_on: list[Slug] = Field(default_factory=list)
    versions: list[Version] = Field(min_length=1)
    provenance: list[GuidelineRef] = Field(default_factory=list)
    literature_audit: LiteratureAudit
    completeness: Completeness | None = Field(default=None, description="audit of the supplied text")
    replacements: list[Replacement] = Field(default_factory=list)
    deviations: list[Deviation] = Field(default_factory=list)
    plausibility: list[Plausibility] = Field(
        default_factory=list, description="cross-input rules: ranges a derived quantity must fall in")

    @field_validator("constants", "tables")
    @classmethod
    def _names(cls, v: dict[str, Any]) -> dict[str, Any]:
        for k in v:
            if not re.fullmatch(r"[a-z][a-z0-9_]*", k):
                raise ValueError(f"name {k!r} must be lower_snake_case")
        return v

    # -- helpers used by the library and the reports
    @property
    def active(self) -> Version:
        return next(v for v in self.versions if v.status == VersionStatus.active)

    def input(self, name: str) -> Input:
        for i in self.inputs:
            if i.name == name:
                return i
        raise KeyError(name)

    @property
    def audit_group(self) -> str:
        c = self.literature_audit.concern
        if c == ConcernType.replaced_by_guideline:
            return "replaced"
        return "none" if c == ConcernType.none else "other"


# --------------------------------------------------------------------------- units


class Analyte(Strict):
    molar_mass: float | None = Field(default=None, gt=0, description="g/mol")
    valence: int | None = Field(default=None, ge=1)
    note: str | None = None


class RoundingRule(Strict):
    """The benchmark's `round_number`: fixed decimals, or significant digits for tiny magnitudes."""

    decimals: int = Field(ge=0)
    significant_digits: int = Field(ge=1)
    small_below: float = Field(gt=0)


class AgeRule(Strict):
    months_per_year: int
    weeks_per_year: int
    days_per_week: int


class LengthRule(Strict):
    """How heights are turned into inches: the foot, and the benchmark's rounded inches per metre."""

    inches_per_foot: float
    inches_per_metre: float = Field(description="the benchmark's rounded factor; the published variant "
                                    "converts exactly with 1 / height.in")


class TemperatureRule(Strict):
    fahrenheit_offset: float
    fahrenheit_per_celsius: float


class Spellings(Strict):
    """What real exports write for the registry's spellings (`units.yaml`, `spellings:`). Matching is without case;
    a spelling that could be read two ways for one input is refused with both readings, and `formula validate`
    refuses a table that makes one (docs/guide/inputs.md)."""

    units: dict[str, str] = Field(default_factory=dict, description="alias -> the registry's unit, or the part of "
                                  "one: 'lb' -> 'lbs'; 'umol' -> 'µmol' reads 'umol/L' as 'µmol/L'")
    choices: dict[str, str] = Field(default_factory=dict, description="code -> option, for every choice input that "
                                    "has that option: 'M' -> 'Male'")
    booleans: dict[str, bool] = Field(default_factory=dict, description="code -> true/false for yes/no inputs: "
                                      "'yes', 'y', '1' -> true")
    source: str | None = Field(default=None, description="where the spellings were seen")


class UnitsFile(Strict):
    """`formulas/units.yaml`: the conversion data and conventions every calculator shares."""

    rounding: RoundingRule
    age: AgeRule
    temperature: TemperatureRule
    deviations: list[Deviation] = Field(default_factory=list, description="benchmark-wide departures")

    mass: dict[str, float] = Field(description="mass units in grams")
    amount: dict[str, float] = Field(description="amount units in moles (and mEq, per valence)")
    volume: dict[str, float] = Field(description="volume units in litres")
    analytes: dict[str, Analyte]
    weight: dict[str, float] = Field(description="weight units in kilograms")
    height: dict[str, float] = Field(description="length units in metres")
    length: LengthRule
    spellings: Spellings = Field(default_factory=Spellings, description="aliases and codes real exports use")
