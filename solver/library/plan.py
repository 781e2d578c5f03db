"""What `compute` works out once per calculator entry rather than once per call.

A plan holds the calculator's inputs indexed by name, its active version, the names it accepts and
requires: `compute` and `Context` read these instead of searching the entry's input list on
every access. Plans are keyed by the entry object itself (a reloaded or edited registry makes new
entries, hence new plans), so they can never describe content other than the entry in hand.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from registry.schema import Calculator, Input, InputKind
from solver.library.rounding import result_rule

MAX_PLANS = 4096  # edited copies of entries (tests, what-if runs) make new plans; start again past this many


@dataclass(frozen=True)
class Plan:
    calc: Calculator
    inputs: list[Input]  # the entry's input list this plan was made from (checked on every use)
    passthrough: bool  # the calculator takes any entity (a `*` input)
    specs: dict[str, Input]
    known: frozenset[str]
    required: tuple[str, ...]
    required_set: frozenset[str]
    versions: list[Any]  # the entry's version list the active version was found in (checked on every use)
    version: str | None  # the active version (None: the entry has none; `compute` then reports that)
    output: Any  # the entry's output block the unit was read from (checked on every use)
    slug: str
    unit: str | None  # the output's unit
    # per input name: (spec, its accepted units as a set, canonical unit, range): what the typed accessors check
    fields: dict[str, tuple[Input, frozenset[str], str | None, tuple[float, float] | None]]
    plausibility: list[Any]  # the entry's plausibility rules the two flags were read from (checked on every use)
    output_rules: tuple[tuple[float, float], ...]  # the ranges of the rules on the result
    input_rules: bool  # a rule on two inputs (a `difference`)
    rounding: Any  # the output's rounding, and the publication's rule each variant follows (None: none)
    rules: dict[str, Any]
    constants: dict[str, Any]  # the entry's constants and tables the two maps below were read from (checked)
    tables: dict[str, Any]
    consts: dict[str, Any]  # constant name -> its value
    bands: dict[str, tuple[tuple[Any, Any, Any, Any, Any], ...]]  # banded table -> its bands' (ge, gt, le, lt, value)
    maps: dict[str, dict[str, Any]]  # table -> its lookup (or else its points) mapping
    depends_on: list[str]  # the entry's dependencies (checked on every use)
    plain_rounding: frozenset[str]  # the variants whose numeric result `round_number` rounds (no published rule)
    whole: frozenset[str]  # the variants whose numeric result is rounded to a whole number (`integer`, no published rule)
    hash_key: tuple[str, str]  # (slug, active version): the key of its content hash in `Registry.hashes`
    # the `difference` rules: (minuend, subtrahend, low, high); a break is worded by registry.plausibility
    differences: tuple[tuple[str, str, float, float], ...]
    # optional inputs whose default reads as a flag (True, False or None): what `flag` reads when one is absent
    absent_flags: dict[str, bool]


_PLANS: dict[int, Plan] = {}


def plan(calc: Calculator) -> Plan:
    """The plan of this entry (made on first use)."""
    p = _PLANS.get(id(calc))
    if p is not None and p.calc is calc:
        d = calc.__dict__  # the model's fields, read as a dict: quicker than its attributes
        if p.inputs is d["inputs"] and p.versions is d["versions"] and p.output is d["output"] and p.slug is d["slug"] \
                and p.plausibility is d["plausibility"] and p.constants is d["constants"] \
                and p.tables is d["tables"] and p.depends_on is d["depends_on"]:
            return p
    if len(_PLANS) >= MAX_PLANS:
        _PLANS.clear()
    specs: dict[str, Input] = {}
    for i in calc.inputs:
        specs.setdefault(i.name, i)  # the first declaration wins, as `Calculator.input` finds it
    try:
        version: str | None = calc.active.version
    except (ValueError, StopIteration, LookupError):
        version = None
    p = Plan(calc, calc.inputs,
             any(i.kind == InputKind.special and i.name == "*" for i in calc.inputs), specs,
             frozenset(specs), tuple(i.name for i in calc.inputs if i.required),
             frozenset(i.name for i in calc.inputs if i.required), calc.versions, version,
             calc.output, calc.slug, calc.output.unit,
             {n: (i, frozenset(i.accepted_units), i.unit, i.range) for n, i in specs.items()},
             calc.plausibility, tuple((r.range[0], r.range[1]) for r in calc.plausibility if r.quantity == "output"),
             any(r.quantity == "difference" for r in calc.plausibility),
             calc.output.rounding, {v: result_rule(calc, v) for v in ("benchmark", "published")},
             calc.constants, calc.tables, {n: c.value for n, c in calc.constants.items()},
             {n: tuple((b.ge, b.gt, b.le, b.lt, b.value) for b in t.bands) for n, t in calc.tables.items() if t.bands},
             {n: t.lookup if t.lookup is not None else (t.points or {}) for n, t in calc.tables.items()
              if t.lookup is not None or t.points is not None},
             calc.depends_on,
             frozenset(v for v in ("benchmark", "published")
                       if result_rule(calc, v) is None and calc.output.rounding == "round_number"),
             frozenset(v for v in ("benchmark", "published")
                       if result_rule(calc, v) is None and calc.output.rounding == "integer"),
             (calc.slug, version or ""),
             tuple((r.inputs[0], r.inputs[1], r.range[0], r.range[1]) for r in calc.plausibility
                   if r.quantity == "difference" and r.inputs is not None),
             {n: bool(i.default) for n, i in specs.items()
              if not i.required and (i.default is None or i.default is True or i.default is False)})
    _PLANS[id(calc)] = p
    return p
