"""Validation gates before computing (MedCalc-Pro's order): completeness -> type -> enum -> unit -> range.

The arguments are checked against the calculator's generated JSON Schema with a maintained
validator (`jsonschema`, draft 2020-12). Every violation is sorted into the gate it belongs to,
and the first gate that fails is reported with all its findings, each naming the input, so an
agent can fix the call in one step.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from registry.loader import Registry, get_registry
from registry.schema import Calculator
from registry.suggest import closest
from solver.library.unit_hints import unit_hint

GATES: tuple[str, ...] = ("completeness", "type", "enum", "unit", "range")


@dataclass(frozen=True)
class Finding:
    gate: str
    variable: str | None
    message: str

    def __str__(self) -> str:
        return f"{self.variable!r}: {self.message}" if self.variable else self.message


class GateError(ValueError):
    """The first gate that failed, with every finding of that gate."""

    def __init__(self, calculator: str, gate: str, findings: list[Finding]):
        self.calculator = calculator
        self.gate = gate
        self.findings = findings
        super().__init__(f"{calculator}: {gate} check failed: " + "; ".join(map(str, findings)))


@cache
def _validator(slug: str, root: str, version: str):  # cache key includes the registry root and version
    from jsonschema import Draft202012Validator

    from solver.tools.schema import calculator_schema

    reg = get_registry()
    return Draft202012Validator(calculator_schema(reg.calculators[slug], reg))


def validator(reg: Registry, slug: str):
    """A compiled validator of a calculator's schema (cached per registry root and version)."""
    from jsonschema import Draft202012Validator

    from solver.tools.schema import calculator_schema

    if reg is get_registry():
        return _validator(slug, str(reg.root), reg.calculators[slug].active.version)
    return Draft202012Validator(calculator_schema(reg.calculators[slug], reg))


def _gate(err: Any) -> str:
    kw = err.validator
    path = list(err.absolute_path)
    if kw == "required" or kw == "additionalProperties":
        return "completeness"
    if kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return "range"
    if kw in ("enum", "const"):
        if not isinstance(err.instance, (str, bool)):
            return "type"
        # a later position of an array ([value, unit], [name, amount, unit], age pairs) is a unit
        return "unit" if path and isinstance(path[-1], int) and path[-1] > 0 else "enum"
    return "type"  # type, prefixItems, minItems, maxItems, pattern, items


def _typed_unit(arguments: Any, path: list[Any]) -> str:
    """' lbs' for the number of a [value, unit] input given as [1500, 'lbs']; '' otherwise."""
    given = arguments.get(path[0]) if isinstance(arguments, dict) and path else None
    if len(path) == 2 and path[1] == 0 and isinstance(given, list) and len(given) == 2 and isinstance(given[1], str):
        return f" {given[1]}"
    return ""


def _message(err: Any, arguments: Any = None) -> tuple[str | None, str]:
    path = list(err.absolute_path)
    if err.validator == "required":
        missing = err.message.split("'")[1] if "'" in err.message else err.message
        return missing, "required input is missing"
    if err.validator == "additionalProperties":
        return None, f"unknown input(s): {err.message.split('(')[-1].rstrip(')')}"
    var = str(path[0]) if path else None
    where = "".join(f"[{p}]" for p in path[1:])
    if err.validator == "enum":
        allowed = ", ".join(repr(x) for x in err.validator_value)
        what = "unit" if path and isinstance(path[-1], int) else "value"
        near = unit_hint(err.instance, [str(x) for x in err.validator_value]) if what == "unit" else ""
        return var, f"{what}{where} {err.instance!r} is not one of: {allowed}{near}"
    if err.validator == "const":
        return var, f"{where} must be {err.validator_value!r}, got {err.instance!r}"
    if err.validator in ("minimum", "maximum"):
        typed = _typed_unit(arguments, path)  # the schema's range of a [value, unit] input is in the unit given
        bound = "at least" if err.validator == "minimum" else "at most"
        return var, (f"value{where} {err.instance!r}{typed} is outside the plausible range ({bound} "
                     f"{err.validator_value:.6g}{typed})")
    hint = shape_hint(err.schema, err.instance) if err.validator == "type" else None
    return var, f"{where + ': ' if where else ''}{err.message}" + (f"; give it as {hint}" if hint else "")


def shape_hint(schema: Any, value: Any) -> str | None:
    """The shape a bare value should take, from the schema that wants an array: `[63, "years"]` for an age,
    `[70, "kg"]` for a measurement (its canonical unit, else the first one the schema allows)."""
    import json

    if not isinstance(schema, dict) or schema.get("type") != "array" or isinstance(value, (list, dict)):
        return None
    items = schema.get("prefixItems") or []
    if len(items) < 2 or not isinstance(items[1], dict):
        return None
    units = [items[1]["const"]] if "const" in items[1] else list(items[1].get("enum") or [])
    unit = schema.get("x-canonical-unit") if schema.get("x-canonical-unit") in units else (units[0] if units else None)
    if unit is None:
        return None
    return json.dumps([value, unit], ensure_ascii=False)


def unknown_inputs(calc: Calculator, arguments: Any) -> list[Finding]:
    """One finding per name `arguments` gives that the calculator does not declare, with the nearest declared
    names (difflib, without case) where one is close."""
    if not isinstance(arguments, dict):
        return []
    names = {i.name for i in calc.inputs}
    declared = {n.casefold(): n for n in names}
    out = []
    for key in arguments:
        if key in names:
            continue
        near = [declared[c] for c in closest(key, declared)]
        hint = f" (did you mean {' or '.join(repr(n) for n in near)}?)" if near else " (not an input of this calculator)"
        out.append(Finding("completeness", str(key), "unknown input" + hint))
    return out


def completeness(reg: Registry, calculator: str | int, arguments: Any) -> list[Finding]:
    """Every unknown input (in the order given) and then every required input missing (sorted), in one list."""
    calc = reg.get(calculator)
    missing = [Finding("completeness", n, "required input is missing") for n in missing_inputs(reg, calc.slug, arguments)]
    return unknown_inputs(calc, arguments) + missing


def summary(findings: list[Finding]) -> str:
    """Completeness findings in one sentence: "2 unknown inputs: 'agee' (did you mean 'age'?), ...; 1 required
    input is missing: 'creatinine'"."""
    if len(findings) == 1:  # "'height': required input is missing", as the library words one
        return str(findings[0])
    unknown = [f for f in findings if f.message.startswith("unknown input")]
    missing = [f.variable for f in findings if f not in unknown]
    parts = []
    if unknown:
        parts.append(f"{len(unknown)} unknown input{'s' if len(unknown) > 1 else ''}: "
                     + ", ".join(f"{f.variable!r}{f.message[len('unknown input'):]}" for f in unknown))
    if missing:
        parts.append(f"{len(missing)} required input{'s are' if len(missing) > 1 else ' is'} missing: "
                     + ", ".join(repr(m) for m in missing))
    return "; ".join(parts)


def check(reg: Registry, calculator: str | int, arguments: Any) -> None:
    """Raise `GateError` for the first failing gate; return quietly when the arguments pass all five."""
    calc = reg.get(calculator)
    if not isinstance(arguments, dict):
        raise GateError(calc.slug, "type", [Finding("type", None, "arguments must be an object of entity names")])
    by_gate: dict[str, list[Finding]] = {}
    for err in validator(reg, calc.slug).iter_errors(arguments):
        # an if/then range clause reports the inner minimum/maximum; allOf wrappers add nothing
        errs = [err] if err.validator not in ("allOf", "anyOf", "oneOf") else list(err.context or [err])
        for e in errs:
            if e.validator in ("enum", "const") and not isinstance(e.instance, (str, bool)):
                continue  # the value's type error is reported instead
            g = _gate(e)
            var, msg = _message(e, arguments)
            by_gate.setdefault(g, []).append(Finding(g, var, msg))
    if "completeness" in by_gate:  # every unknown name with its did-you-mean, then every missing one
        raise GateError(calc.slug, "completeness", completeness(reg, calc.slug, arguments))
    for g in GATES:
        if g in by_gate:
            raise GateError(calc.slug, g, sorted(by_gate[g], key=lambda f: (f.variable or "", f.message)))


def missing_inputs(reg: Registry, calculator: str | int, arguments: Any) -> list[str]:
    """Every required input `arguments` lacks (conditional ones included), sorted: the completeness gate's
    findings alone, for callers that check types and ranges their own way (`formula solve`)."""
    calc = reg.get(calculator)
    if not isinstance(arguments, dict):
        return []
    out = set()
    for err in validator(reg, calc.slug).iter_errors(arguments):
        for e in [err] if err.validator not in ("allOf", "anyOf", "oneOf") else list(err.context or [err]):
            if e.validator == "required":
                var, _ = _message(e)
                if var:
                    out.add(var)
    return sorted(out)

