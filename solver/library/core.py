"""The library's engine: reads a gold-variable block against a calculator's registry entry.

`compute` finds the calculator's function (`solver.library.functions`), checks the keys, runs
the function on a `Context` (`solver.library.context`), applies output rounding and records
provenance in the `Result` (`solver.library.result`).
"""
from __future__ import annotations

from typing import Any, Literal

from registry.loader import Registry, get_registry
from registry.plausibility import implausible, implausible_inputs
from registry.schema import Calculator
from registry.validate import validate
from registry.versions import active_hash
from solver.library import calculators  # noqa: F401  (importing it registers every calculator function)
from solver.library.calculator_plan import Plan, plan
from solver.library.context import Context
from solver.library.errors import (
    BadValue,
    CalculatorError,
    MissingInput,
    OutOfRange,
    RegistryInvalid,
    UnknownCalculator,
    UnknownInput,
)
from solver.library.functions import FUNCTIONS, calculator
from solver.library.result import InputRecord, Result, Value, new_tuple
from solver.library.rounding import NotFinite, finish
from solver.library.working import WorkingContext, finish_working

# the engine's public names; Context, calculator, FUNCTIONS, InputRecord and Result live in their own modules
__all__ = ["FUNCTIONS", "VARIANTS", "Context", "InputRecord", "Result", "Value", "Variant", "calculator", "compute",
           "get_registry", "resolve"]

Variant = Literal["benchmark", "published"]
VARIANTS: tuple[str, ...] = ("benchmark", "published")

# ---------------------------------------------------------------------- entry points


def resolve(ref: str | int, reg: Registry | None = None) -> Calculator:
    reg = reg or get_registry()
    try:
        return reg.get(ref)
    except KeyError:
        from registry.broken_files import blocking_for
        from registry.suggest import did_you_mean

        broken = blocking_for(reg, ref) if reg.validated else []
        if broken:  # perhaps the calculator whose file a hand edit broke: say so rather than "unknown"
            raise RegistryInvalid(str(ref), None, f"{broken[0]}: this calculator's file does not load, so it cannot "
                                  "be computed; fix the file (`formula validate`)") from None
        raise UnknownCalculator(str(ref), None, "unknown calculator" + did_you_mean(ref, reg.calculators)
                                + ": give a benchmark id (e.g. 2) or a registry slug (see `formula list`)") from None


def compute(calculator: str | int | Calculator, entities: dict[str, Any], *, variant: str = "published",
            registry: Registry | None = None, working: bool = False) -> Result:
    """Compute one calculator from a gold-variable block. Raises `CalculatorError` on bad input.

    `working`: the result also carries the steps behind its value (`Result.working`, `solver.library.working`),
    recorded from the same kernel; off, nothing is recorded.

    `calculator` is a benchmark id, a slug, or the registry's entry itself (a caller that has resolved it already,
    such as the router, passes the entry: the calculator is resolved once per answer)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    reg = registry or get_registry()
    t = type(calculator)
    pl = _RESOLVED.get(calculator) if t is int or t is str else None  # type: ignore[arg-type]
    # an id or slug resolved before, to the very entry the registry in hand holds, which passes validation
    if pl is None or reg.calculators.get(pl.slug) is not pl.calc or not reg.validated or reg.problems:
        pl = _resolve_plan(calculator, reg)
    if type(entities) is not dict and not isinstance(entities, dict):
        raise BadValue(pl.slug, None, f"entities must be a mapping of entity names to values, got {type(entities).__name__}")
    return _run(pl, entities, variant, reg, False, None, working)


# id or slug -> the plan of the entry it named last: `compute` goes from a reference to its plan in one lookup, checked
# against the registry in hand (measured 2,200 machine instructions per case fewer, 3 %, than the registry's index
# and then the plan's, through `_resolve_plan`); bounded, as digit strings with leading zeros name ids too. (It holds
# plans, not registries.)
_RESOLVED: dict[str | int, Plan] = {}
MAX_RESOLVED = 4096


def _resolve_plan(calculator: str | int | Calculator, reg: Registry) -> Plan:
    """The plan of the registry's entry that `calculator` names, once the registry is known to pass validation: an
    id or slug from the registry's index (`resolve` names a miss; the plan is kept for `compute`'s next lookup), an
    entry only if it is the registry's own. The index's entry is checked through its plan's copy of its id and slug
    (plain attributes; the model's measured 28 ns a read against 7 ns)."""
    t = type(calculator)
    if t is int or t is str:
        if not reg.validated or reg.problems:
            _require_valid(reg, calculator)  # type: ignore[arg-type]
        pl = _lookup_plan(calculator, reg)  # type: ignore[arg-type]
        if len(_RESOLVED) >= MAX_RESOLVED:
            _RESOLVED.clear()
        _RESOLVED[calculator] = pl  # type: ignore[index]
        return pl
    if not isinstance(calculator, Calculator):  # neither an id, a slug nor an entry: `resolve` names it
        if not reg.validated or reg.problems:
            _require_valid(reg, calculator)
        return _lookup_plan(calculator, reg)
    if not reg.validated or reg.problems:
        _require_valid(reg, calculator.slug)
    if reg.calculators.get(calculator.slug) is not calculator:  # not this registry's entry: refuse rather than mix content
        raise UnknownCalculator(calculator.slug, None, "this calculator entry is not the registry's; pass its slug")
    return plan(calculator)


def _lookup_plan(calculator: str | int, reg: Registry) -> Plan:
    """The plan of the entry an id or slug names in the registry's index (`resolve` names a miss)."""
    t = type(calculator)
    if t is int:
        calc = reg._ids.get(calculator)  # type: ignore[arg-type]
        if calc is not None:
            pl = plan(calc)
            if pl.medcalc_id == calculator and reg.calculators.get(pl.slug) is calc:
                return pl
    elif t is str and not calculator.isdigit():  # type: ignore[union-attr]
        calc = reg.calculators.get(calculator)  # type: ignore[arg-type]
        if calc is not None:
            return plan(calc)
    return plan(resolve(calculator, reg))


def _require_valid(reg: Registry, ref: str | int) -> None:
    """Refuse a registry that fails validation: its result could not honestly name a released version."""
    from registry.broken_files import blocking_for  # a broken file this calculator does not use does not block it

    if not reg.validated:
        validate(reg)
    problems = blocking_for(reg, ref)
    if problems:
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise RegistryInvalid(str(ref), None, f"the registry at {reg.root} fails validation, so a result could not "
                              f"name the content it was computed from: {first}{more}. Run `formula validate`; an "
                              "intended edit becomes a version with `formula release SLUG --reason ...`")


def _compute(calc: Calculator, entities: dict[str, Any], variant: str, reg: Registry, inner: bool = False,
             cache: dict[str, Result] | None = None) -> Result:
    """`compute` on a resolved entry. `inner`: a dependency (`Context.sub`), given its caller's entities, of which
    it reads only its own inputs (so only a missing one is an error); `cache`: the dependencies' results computed
    so far for these entities (each is computed once per computation)."""
    return _run(plan(calc), entities, variant, reg, inner, cache)


def _compute_working(calc: Calculator, entities: dict[str, Any], variant: str, reg: Registry, inner: bool = False,
                     cache: dict[str, Result] | None = None) -> Result:
    """`_compute` with the working recorded (a dependency of a computation asked for its working)."""
    return _run(plan(calc), entities, variant, reg, inner, cache, True)


def _run(pl: Plan, entities: dict[str, Any], variant: str, reg: Registry, inner: bool,
         cache: dict[str, Result] | None, working: bool = False) -> Result:
    """`_compute` on the entry's plan (`working`: through the recording reader, `solver.library.working`)."""
    calc = pl.calc
    fn = FUNCTIONS.get(pl.slug)
    if fn is None:
        raise UnknownCalculator(calc.slug, None, "no library function implements this calculator yet")
    if inner and pl.passthrough:  # a dependency taking any entity gets its declared ones only
        entities = {k: v for k, v in entities.items() if k in pl.specs}
    # every required input given (a dependency reads its own among its caller's entities), or else no unknown input
    # and every required one given (every input given: so every required one, without a second look)
    if not pl.passthrough and not (inner and entities.keys() >= pl.required_set) \
            and not (pl.known.issuperset(entities) and (len(entities) == len(pl.known)
                                                        or entities.keys() >= pl.required_set)):
        _name_the_bad_key(pl, entities, inner)
    ctx = Context(calc, entities, variant, reg, _compute, pl, cache) if not working else \
        WorkingContext(calc, entities, variant, reg, _compute_working, pl, cache)
    try:
        raw = fn(ctx)
    except CalculatorError:
        raise
    except ZeroDivisionError:
        raise OutOfRange(calc.slug, None, "the inputs lead to a division by zero; check for zero or missing values") from None
    except (ValueError, OverflowError) as e:
        raise OutOfRange(calc.slug, None, f"the inputs are outside what the formula can compute ({e})") from None
    try:
        value: Value = finish(raw, pl.finishing[variant], ctx.conv.number_rule)
    except NotFinite as e:
        raise OutOfRange(calc.slug, None, str(e)) from None
    record = ctx.record
    warnings: list[str] = []
    if pl.output_rules or pl.differences:  # the registry's plausibility rules: checked inline, worded when broken
        inside = type(value) is float
        for lo, hi in pl.output_rules if inside else ():
            if not lo <= value <= hi:  # type: ignore[operator]  # a float here
                inside = False
                break
        if not inside or not _differences_hold(pl.differences, record):
            warnings = _warnings(calc, pl, value, variant, record)
    subs = tuple(ctx.subs.values()) if ctx.subs else ()
    steps = () if not working else finish_working(ctx, raw, value, pl.unit, calc, variant)  # type: ignore[arg-type]
    content_hash = reg.hashes.get(pl.hash_key)
    if not content_hash or pl.version is None:
        version = pl.version if pl.version is not None else calc.active.version
        content_hash = reg.hashes.get((pl.slug, version)) or active_hash(reg, calc.slug)
        return new_tuple(Result, (value, pl.unit, pl.slug, version, variant, content_hash, record, warnings, subs, steps))
    return new_tuple(Result, (value, pl.unit, pl.slug, pl.version, variant, content_hash, record, warnings, subs, steps))


def _name_the_bad_key(pl: Plan, entities: dict[str, Any], inner: bool) -> None:
    """Raise for an unknown (unless `inner`) or a missing input: the first in order is named."""
    known = pl.specs
    for key in entities if not inner else ():
        if key not in known:
            raise UnknownInput(pl.slug, key, "unknown input; accepted: " + ", ".join(sorted(known)))
    for name in pl.required:
        if name not in entities:
            raise MissingInput(pl.slug, name, "required input is missing")


def _warnings(calc: Calculator, pl: Plan, value: Value, variant: str, record: dict[str, InputRecord]) -> list[str]:
    """The registry's own wording of the plausibility rules broken: on the result (refused as published, reported
    as benchmark) and on pairs of inputs (systolic above diastolic, say: warned in both variants)."""
    warnings = implausible(calc, value) if pl.output_rules else []
    if warnings and variant == "published":
        raise OutOfRange(calc.slug, None, warnings[0])
    if pl.input_rules and not _differences_hold(pl.differences, record):
        warnings += implausible_inputs(calc, {k: r.value for k, r in record.items()})
    return warnings


def _differences_hold(rules: tuple[tuple[str, str, float, float], ...], record: dict[str, InputRecord]) -> bool:
    """True when every `difference` rule holds on numbers used as plain ints and floats, or names an input not
    used; otherwise `implausible_inputs` decides (and words each warning)."""
    for a, b, lo, hi in rules:
        ra, rb = record.get(a), record.get(b)
        if ra is None or rb is None:
            continue
        x, y = ra.value, rb.value
        tx, ty = type(x), type(y)
        if not ((tx is float or tx is int) and (ty is float or ty is int) and lo <= float(x) - float(y) <= hi):
            return False
    return True
