"""JSON Schema (draft 2020-12) of one calculator's inputs, generated from its registry entry.

The schema describes the benchmark's entity format (`../shared/medcalc/VOCAB.md`): a mapping of
entity names to a bare value or a `[value, "unit"]` pair. Units, options, plausible ranges,
required inputs and defaults come from the registry; ranges in units other than the canonical
one are converted exactly with the shared unit data (formulas/units.yaml), so no number is
written here. Each property carries annotations for people and agents: `x-kind`,
`x-canonical-unit`, and the concept's definition with its source where the registry has one.

`tool_definition(calc, "openai"|"mcp")` wraps the schema as a tool definition whose description
and metadata name the formula version and its content hash.
"""
from __future__ import annotations

from typing import Any, Literal

from registry.loader import Registry, get_registry
from registry.schema import Calculator, Input, InputKind
from solver.library.units import ConversionError, Converter
from solver.records import version_hash

DRAFT = "https://json-schema.org/draft/2020-12/schema"
Format = Literal["jsonschema", "openai", "mcp"]
FORMATS: tuple[str, ...] = ("jsonschema", "openai", "mcp")
AGE_UNITS = ("years", "months", "weeks", "days")  # the library's age units (solver/library/units.py)
TEMPERATURE_UNITS = ("degrees celsius", "degrees fahrenheit")
FT_IN = "ft+in"  # the registry's name for the four-part [ft, "ft", in, "in"] height


def _num(x: float) -> float | int:
    """A range bound as JSON: whole numbers as integers, others to 12 significant digits."""
    y = float(f"{x:.12g}")
    return int(y) if y.is_integer() and abs(y) < 2**53 else y


def _unit_range(reg: Registry, spec: Input, unit: str) -> tuple[float, float] | None:
    """The input's plausible range expressed in `unit` (exact conversion), or None when unknown."""
    if spec.range is None:
        return None
    lo, hi = spec.range
    units = reg.units
    assert units is not None
    kind = spec.kind
    try:
        if kind == InputKind.quantity:
            conv = Converter(units, exact=True)
            src = spec.unit
            if src is None:  # the schema gives every quantity input its canonical unit
                return None
            mm = spec.molar_mass
            val = None
            if spec.analyte and spec.analyte in units.analytes:
                analyte = units.analytes[spec.analyte]
                mm = mm if mm is not None else analyte.molar_mass
                val = analyte.valence
            f = lambda x: conv.concentration(x, src, unit, mm, val)  # noqa: E731
        elif kind == InputKind.weight:
            f = lambda x: x / units.weight[unit]  # noqa: E731
        elif kind == InputKind.height:
            if unit not in units.height:
                return None
            f = lambda x: x / units.height[unit]  # noqa: E731  (ranges of heights are in metres)
        elif kind == InputKind.temperature:
            t = units.temperature
            f = (lambda x: x) if "celsius" in unit else (lambda x: x * t.fahrenheit_per_celsius + t.fahrenheit_offset)
        elif kind == InputKind.count_per_volume:
            f = lambda x: x * units.volume[unit] / units.volume["L"]  # noqa: E731  (ranges are per litre)
        elif kind == InputKind.age:
            if unit != "years":
                return None
            f = lambda x: x  # noqa: E731
        elif kind == InputKind.special and spec.unit is not None and spec.unit in units.mass and unit in units.mass:
            src_mass = units.mass[spec.unit]
            f = lambda x: x * src_mass / units.mass[unit]  # noqa: E731
        else:
            f = lambda x: x  # noqa: E731  (measurements: the unit names the canonical one)
        a, b = sorted((f(lo), f(hi)))
    except (ConversionError, KeyError, TypeError, ZeroDivisionError):
        return None
    return _num(a), _num(b)


def _pair(reg: Registry, spec: Input, units: list[str], value: dict[str, Any] | None = None) -> dict[str, Any]:
    """`[value, unit]`, with the plausible range per unit as if/then clauses."""
    schema: dict[str, Any] = {
        "type": "array",
        "prefixItems": [value or {"type": "number"}, {"type": "string", "enum": units}],
        "minItems": 2,
        "maxItems": 2,
    }
    clauses = []
    for u in units:
        rng = _unit_range(reg, spec, u)
        if rng is not None:
            clauses.append({"if": {"prefixItems": [True, {"const": u}]},
                            "then": {"prefixItems": [{"minimum": rng[0], "maximum": rng[1]}]}})
    if clauses:
        schema["allOf"] = clauses
    return schema


def _lookup_keys(calc: Calculator, spec: Input) -> list[str] | None:
    for t in calc.tables.values():
        if t.variable == spec.name and t.lookup:
            return list(t.lookup)
    return None


def input_schema(reg: Registry, calc: Calculator, spec: Input) -> dict[str, Any]:  # noqa: C901  one case per input kind
    # long: one JSON Schema branch per input kind
    """The schema of one input's value (a property of the calculator's schema)."""
    k = spec.kind
    units = list(spec.accepted_units)
    if k == InputKind.boolean:
        s: dict[str, Any] = {"type": ["boolean", "string"], "enum": [True, False, "True", "False"]}
    elif k == InputKind.choice:
        s = {"type": "string", "enum": list(spec.options)}
    elif k == InputKind.date:
        s = {"type": "string", "pattern": r"^\d{1,2}/\d{1,2}/\d{4}$"}
    elif k in (InputKind.number, InputKind.count):
        s = {"type": "integer" if k == InputKind.count else "number"}
        if spec.range is not None:
            s["minimum"], s["maximum"] = _num(spec.range[0]), _num(spec.range[1])
    elif k == InputKind.age:
        au = [u for u in AGE_UNITS if not units or u in units or u == "days"]
        s = {"type": "array", "minItems": 2, "maxItems": 6,
             "prefixItems": [{"type": "number"}, {"type": "string", "enum": au}] * 3}
        rng = _unit_range(reg, spec, "years")
        if rng is not None:
            s["allOf"] = [{"if": {"prefixItems": [True, {"const": "years"}]},
                           "then": {"prefixItems": [{"minimum": rng[0], "maximum": rng[1]}]}}]
    elif k == InputKind.height:
        simple = [u for u in units if u != FT_IN] or list(reg.units.height)  # type: ignore[union-attr]
        s = _pair(reg, spec, simple)
        s["maxItems"] = 4
        s["prefixItems"] = s["prefixItems"] + [{"type": "number", "minimum": 0}, {"type": "string", "const": "in"}]
        s.setdefault("allOf", []).append({"if": {"minItems": 3},
                                          "then": {"minItems": 4, "prefixItems": [True, {"const": "ft"}]}})
    elif k == InputKind.weight:
        s = _pair(reg, spec, units or list(reg.units.weight))  # type: ignore[union-attr]
    elif k == InputKind.temperature:
        s = _pair(reg, spec, units or list(TEMPERATURE_UNITS))
    elif k == InputKind.count_per_volume:
        s = _pair(reg, spec, units or list(reg.units.volume))  # type: ignore[union-attr]
    elif k in (InputKind.quantity, InputKind.measurement):
        s = _pair(reg, spec, units or [spec.unit])  # type: ignore[list-item]
    else:  # special: [amount, unit], or [name, amount, unit] when a lookup table is keyed by this input
        keys = _lookup_keys(calc, spec)
        s = _pair(reg, spec, units) if units else {"type": "array"}
        if keys is not None and units:
            pair = s
            s = {"type": "array", "minItems": 3, "maxItems": 3,
                 "prefixItems": [{"type": "string", "enum": keys}, *pair["prefixItems"]]}
            if "allOf" in pair:  # shift the range clauses one position right
                s["allOf"] = [{"if": {"prefixItems": [True, True, c["if"]["prefixItems"][1]]},
                               "then": {"prefixItems": [True, *c["then"]["prefixItems"]]}} for c in pair["allOf"]]
    s["x-kind"] = k.value
    if spec.unit:
        s["x-canonical-unit"] = spec.unit
    if FT_IN in units:
        s["x-also"] = "[feet, 'ft', inches, 'in']"
    if spec.range is not None:
        s["x-plausible-range"] = [_num(spec.range[0]), _num(spec.range[1])]
    if not spec.required and spec.default is not None:
        s["default"] = spec.default
    desc = _describe(spec)
    if desc:
        s["description"] = desc
    if spec.definition is not None:
        d = spec.definition
        s["x-definition"] = {"text": d.text, "source": d.source, "seen_in": d.seen_in, "verified": d.verified}
    return s


def _describe(spec: Input) -> str:
    parts = []
    if spec.definition is not None:
        d = spec.definition
        flag = "" if d.verified else "; unverified"
        parts.append(f"{d.text} (definition: {d.source}{flag})")
    if spec.description:
        parts.append(spec.description)
    if not spec.used:
        parts.append("accepted but not used by the calculation")
    if not spec.required:
        parts.append("optional" + (f"; default {spec.default!r}" if spec.default is not None else "; absent counts as false/none"))
    return ". ".join(p.rstrip(".") for p in parts)


def calculator_schema(calc: Calculator | str | int, reg: Registry | None = None) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a calculator's entities mapping."""
    reg = reg or get_registry()
    if not isinstance(calc, Calculator):
        calc = reg.get(calc)
    version = calc.active.version
    passthrough = any(i.kind == InputKind.special and i.name == "*" for i in calc.inputs)
    props = {i.name: input_schema(reg, calc, i) for i in calc.inputs if i.name != "*"}
    return {
        "$schema": DRAFT,
        "$id": f"urn:formula-registry:{calc.slug}:{version}",
        "title": calc.name,
        "description": description(calc, reg),
        "type": "object",
        "properties": props,
        "required": [i.name for i in calc.inputs if i.required and i.name != "*"],
        "additionalProperties": passthrough,
        "x-calculator": calc.slug,
        "x-medcalc-id": calc.medcalc_id,
        "x-version": version,
        "x-content-hash": version_hash(reg, calc),
        "x-output": calc.output.model_dump(mode="json"),
    }


def _citation(calc: Calculator) -> str:
    p = calc.formula.publication
    first = p.authors[0] + (" et al." if len(p.authors) > 1 else "")
    return f"{first} {p.journal or p.body} {p.year}"


def warnings(calc: Calculator, reg: Registry | None = None) -> list[str]:
    """What a user of this formula must know: its literature concern and its successors."""
    reg = reg or get_registry()
    out = []
    for r in calc.replacements:
        verb = "replaced by" if r.kind == "replaced_by" else "alternative:"
        where = f"; calculator {r.successor}" if r.successor and r.successor in reg.calculators else ""
        out.append(f"{verb} {r.name} ({r.jurisdiction}, since {r.since}{where})")
    a = calc.literature_audit
    if a.concern.value != "none" and a.summary:
        out.append(f"{a.concern.value.replace('_', ' ')}: {a.summary}")
    return out


def _article(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word.replace("_", " ")


def description(calc: Calculator, reg: Registry | None = None) -> str:
    """One paragraph for a tool list: what it computes, from which formula, which version."""
    reg = reg or get_registry()
    unit = f" in {calc.output.unit}" if calc.output.unit else ""
    text = (f"{calc.name}: {calc.formula.name} ({_citation(calc)}); returns {_article(calc.output.kind.value)}{unit}. "
            f"Intended use: {calc.intended_use.value}. Formula version {calc.active.version}, content "
            f"{version_hash(reg, calc)}.")
    w = warnings(calc, reg)
    if w:
        text += " Warnings: " + "; ".join(w)
    return text


def tool_definition(calc: Calculator | str | int, fmt: Format = "jsonschema",
                    reg: Registry | None = None) -> dict[str, Any]:
    """The schema (`jsonschema`), or an OpenAI function tool (`openai`) or MCP tool (`mcp`) wrapping it."""
    reg = reg or get_registry()
    if not isinstance(calc, Calculator):
        calc = reg.get(calc)
    schema = calculator_schema(calc, reg)
    if fmt == "jsonschema":
        return schema
    meta = {"calculator": calc.slug, "medcalc_id": calc.medcalc_id, "version": calc.active.version,
            "content_hash": version_hash(reg, calc)}
    params = {k: v for k, v in schema.items() if k in ("type", "properties", "required", "additionalProperties")}
    if fmt == "openai":  # exactly OpenAI's function tool: the version and content hash are in the description
        return {"type": "function",
                "function": {"name": calc.slug, "description": description(calc, reg), "parameters": params}}
    if fmt == "mcp":
        return {"name": calc.slug, "title": calc.name, "description": description(calc, reg),
                "inputSchema": {"$schema": DRAFT, **params}, "_meta": {"formula-registry": meta}}
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


# ---------------------------------------------------------------------- OpenAI strict mode

_STRICT_DROP = ("prefixItems", "allOf", "if", "then", "else", "default", "$schema", "$id")


def _strict_value(s: dict[str, Any]) -> dict[str, Any]:
    """One input's schema in the subset OpenAI's strict mode accepts: positional items (`prefixItems`) become
    `items` allowing any of their kinds, the per-unit range clauses (`if`/`then`) go (the gates still check
    ranges when the call comes back), and the registry's own `x-` keys go."""
    out = {k: v for k, v in s.items() if not k.startswith("x-") and k not in _STRICT_DROP}
    if s.get("type") == ["boolean", "string"]:
        out = {"type": "boolean", **({"description": s["description"]} if "description" in s else {})}
    if s.get("type") == "array":
        kinds: list[dict[str, Any]] = []
        strings: list[Any] = []
        for item in s.get("prefixItems") or []:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "string" and ("enum" in item or "const" in item):
                strings += [x for x in (item.get("enum") or [item.get("const")]) if x not in strings]
            elif item.get("type") in ("number", "integer") and {"type": "number"} not in kinds:
                kinds.append({"type": "number"})
        if strings:
            kinds.append({"type": "string", "enum": strings})
        if not kinds:
            kinds = [{"type": "number"}, {"type": "string"}]
        out["items"] = kinds[0] if len(kinds) == 1 else {"anyOf": kinds}
    return out


def strict_tool(calc: Calculator | str | int, reg: Registry | None = None) -> dict[str, Any]:
    """An OpenAI function tool in strict mode: every property required (optional inputs nullable: null means
    absent), `additionalProperties: false`, no `prefixItems` or `if`. A call made to it is accepted back by the
    gates and the library once `strict_arguments` has dropped the nulls."""
    reg = reg or get_registry()
    if not isinstance(calc, Calculator):
        calc = reg.get(calc)
    schema = calculator_schema(calc, reg)
    required = set(schema["required"])
    props = {}
    for name, prop in schema["properties"].items():
        value = _strict_value(prop)
        props[name] = value if name in required else {"anyOf": [value, {"type": "null"}],
                                                      **({"description": value["description"]}
                                                         if "description" in value else {})}
    params = {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}
    return {"type": "function", "function": {"name": calc.slug, "description": description(calc, reg),
                                             "strict": True, "parameters": params}}


def strict_arguments(calc: Calculator, arguments: Any) -> Any:
    """A strict-mode call's arguments as the gates take them: an optional input given as null is absent."""
    if not isinstance(arguments, dict):
        return arguments
    optional = {i.name for i in calc.inputs if not i.required}
    return {k: v for k, v in arguments.items() if not (v is None and k in optional)}

