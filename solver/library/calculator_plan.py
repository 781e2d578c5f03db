"""What `compute` works out once per calculator entry rather than once per call.

A plan holds the calculator's inputs indexed by name, its active version, the names it accepts and
requires: `compute` and `Context` read these instead of searching the entry's input list on
every access. Plans are keyed by the entry object itself (a reloaded or edited registry makes new
entries, hence new plans), so they can never describe content other than the entry in hand.

A plan is made once per entry, as the entry's content hash is worked out once (memoised on the registry),
and it can never go stale: the registry's models are frozen (`registry.schema.Strict`, pydantic's
`frozen=True`), so assigning a field of an entry, or of any model inside it, raises a ValidationError.
An edit is a copy (`model_copy(update=...)`), a new entry and so a new plan, with its own content hash.
(Checking nine fields of the entry on every call cost 4,500 machine instructions, 9 % of a two-input case.)

Pydantic's freezing is shallow: the lists and dicts a model holds (a calculator's `inputs`, `constants`,
`tables`, `versions`, `depends_on`; a table's `bands`, `points` or `lookup`; an input's `accepted_units`
and `options`; the unit data's factor tables) are plain containers that could still be changed in place,
and a plan shares some of them (`maps`, `depends_on`). Nothing in the code does so, and nothing may: an
edit builds new containers (`{**calc.tables, name: table}`, `[*calc.inputs, extra]`) in the copy. An
edited copy put into a registry under its slug and version needs that registry's hash memo fresh too
(`dataclasses.replace(reg, calculators=..., hashes={})`): the memo is keyed by slug and version.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from registry.schema import Calculator, Input, InputKind
from registry.spellings import accepted_parts
from solver.library.rounding import Finishing, finishing

MAX_PLANS = 4096  # edited copies of entries (tests, what-if runs) make new plans; start again past this many


@dataclass(frozen=True, kw_only=True, slots=True)
class Plan:
    """One field per fact of the entry."""

    calc: Calculator
    slug: str
    medcalc_id: int | None  # the benchmark's id of the calculator (None: a successor)
    version: str | None  # the active version (None: the entry has none; `compute` then reports that)
    hash_key: tuple[str, str]  # (slug, active version): the key of its content hash in `Registry.hashes`
    unit: str | None  # the output's unit
    finishing: dict[str, Finishing]  # variant -> how its result is rounded (solver.library.rounding owns this)
    passthrough: bool  # the calculator takes any entity (a `*` input)
    specs: dict[str, Input]  # input name -> its declaration (the first, as `Calculator.input` finds it)
    # the input names as a set: the engine's key check (`known.issuperset(entities)`) measured 45 ns faster per
    # computation than `specs.keys() >= entities.keys()`
    known: frozenset[str]
    required: tuple[str, ...]  # the required inputs, in order (the first missing one is named)
    required_set: frozenset[str]  # the same names, as a set for the engine's one check
    # per input name: (spec, its accepted units as a set, canonical unit, range): what the typed accessors check
    fields: dict[str, tuple[Input, frozenset[str], str | None, tuple[float, float] | None]]
    options: dict[str, frozenset[str]]  # input name -> its options as a set (inputs that have options)
    # input name -> its accepted units in `registry.spellings.accepted_parts`'s order (a joined 'ft+in' also as 'ft' and
    # 'in'): what a multi-part value's units are read against (inputs that accept units)
    parts: dict[str, list[str]]
    chemistry: dict[str, tuple[float | None, str | None]]  # input name -> (its own molar mass, its analyte)
    absent_flags: dict[str, bool]  # optional inputs whose default reads as a flag: what `flag` reads when absent
    consts: dict[str, Any]  # constant name -> its value
    bands: dict[str, tuple[tuple[Any, Any, Any, Any, Any], ...]]  # banded table -> its bands' (ge, gt, le, lt, value)
    maps: dict[str, dict[str, Any]]  # table -> its lookup (or else its points) mapping
    depends_on: list[str]  # the entry's dependencies
    output_rules: tuple[tuple[float, float], ...]  # the ranges of the plausibility rules on the result
    input_rules: bool  # a plausibility rule on two inputs (a `difference`)
    # the `difference` rules: (minuend, subtrahend, low, high); a break is worded by registry.plausibility
    differences: tuple[tuple[str, str, float, float], ...]


_PLANS: dict[int, Plan] = {}


def plan(calc: Calculator) -> Plan:
    """The plan of this entry (made on its first use)."""
    p = _PLANS.get(id(calc))
    if p is not None and p.calc is calc:
        return p
    if len(_PLANS) >= MAX_PLANS:
        _PLANS.clear()
    p = _PLANS[id(calc)] = _make(calc)
    return p


def _make(calc: Calculator) -> Plan:
    specs: dict[str, Input] = {}
    for i in calc.inputs:
        specs.setdefault(i.name, i)  # the first declaration wins, as `Calculator.input` finds it
    try:
        version: str | None = calc.active.version
    except (ValueError, StopIteration, LookupError):
        version = None
    required = tuple(i.name for i in calc.inputs if i.required)
    return Plan(
        calc=calc, slug=calc.slug, medcalc_id=calc.medcalc_id, version=version, hash_key=(calc.slug, version or ""), unit=calc.output.unit,
        finishing={v: finishing(calc, v) for v in ("benchmark", "published")},
        passthrough=any(i.kind == InputKind.special and i.name == "*" for i in calc.inputs),
        specs=specs, known=frozenset(specs), required=required, required_set=frozenset(required),
        fields={n: (i, frozenset(i.accepted_units), i.unit, i.range) for n, i in specs.items()},
        options={n: frozenset(i.options) for n, i in specs.items() if i.options},
        parts={n: accepted_parts(i) for n, i in specs.items() if i.accepted_units},
        chemistry={n: (i.molar_mass, i.analyte) for n, i in specs.items()},
        absent_flags={n: bool(i.default) for n, i in specs.items()
                      if not i.required and (i.default is None or i.default is True or i.default is False)},
        consts={n: c.value for n, c in calc.constants.items()},
        bands={n: tuple((b.ge, b.gt, b.le, b.lt, b.value) for b in t.bands) for n, t in calc.tables.items() if t.bands},
        maps={n: t.lookup if t.lookup is not None else (t.points or {}) for n, t in calc.tables.items()
              if t.lookup is not None or t.points is not None},
        depends_on=calc.depends_on,
        output_rules=tuple((r.range[0], r.range[1]) for r in calc.plausibility if r.quantity == "output"),
        input_rules=any(r.quantity == "difference" for r in calc.plausibility),
        differences=tuple((r.inputs[0], r.inputs[1], r.range[0], r.range[1]) for r in calc.plausibility
                          if r.quantity == "difference" and r.inputs is not None),
    )
