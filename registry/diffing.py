"""What changed between two versions' content, item by item, with old and new values.

One `Change` per changed value: a constant's value, an input's unit, range or options, a table
band's bounds, points or label, a dependency, the shared unit data, the text. `scoring` says
whether the change can move a calculated answer (a source note or a band label cannot), so a
reviewer is told plainly when a version changes no score.
"""
from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

# fields that describe rather than compute: changing one never moves an answer
_DESCRIPTIVE = {
    "constant": {"description", "source", "label", "unit"},
    "input": {"description", "definition"},
    "table": {"description", "source", "unit", "labels_only", "label"},
    "output": set(),
}


class Change(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built when first used, not at import

    what: str  # constant, input, table, output, dependency, units, text, version
    name: str
    field: str | None = None
    old: Any = None
    new: Any = None
    unit: str | None = None
    scoring: bool = True

    def line(self) -> str:
        """One line for people: 'constant k: 0.024 -> 0.016 mEq/L per mg/dL', 'table t band 2 (...) label: ...'."""
        if self.what == "text":
            return "supplied text changed"
        if self.what == "version":
            return "first version"
        if self.what == "units":
            return "shared unit data changed" + (f" ({self.name}: {fmt(self.old)} -> {fmt(self.new)})"
                                                 if self.name != "*" else "")
        head = f"{self.what} {self.name}"
        if self.field == "added":
            return f"{head} added" + (f": {fmt(self.new)}" if self.new is not None else "")
        if self.field == "removed":
            return f"{head} removed" + (f" (was {fmt(self.old)})" if self.old is not None else "")
        if self.what == "constant" and self.field == "value":
            return f"{head}: {fmt(self.old)} -> {fmt(self.new)} {self.unit or ''}".rstrip()
        if self.what == "dependency" and self.field == "content":
            return f"dependency {self.name}: its content changed (released with it)"
        if self.what == "guideline":
            return f"cited guideline {self.name}: its file changed"
        if self.what == "field":
            if _records(self.old) and _records(self.new):
                return f"{self.name}: {_entries(self.old, self.new)}"
            return f"{self.name}: {fmt(self.old)} -> {fmt(self.new)}"
        return f"{head} {self.field}: {fmt(self.old)} -> {fmt(self.new)}"


SHOWN = 60  # characters: a changed field of an entry is quoted old -> new up to this long, else only named


def _records(x: Any) -> bool:
    return isinstance(x, list) and bool(x) and all(isinstance(v, dict) for v in x)


def _entries(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> str:
    """A list of records (deviations, plausibility rules) changed entry by entry, never a cut JSON dump: matched
    by id where every entry has one ('added x; removed y; z: published changed'), else by position ('entry 1:
    min 1 -> 2; entry 2 added'); a long field (a deviation's prose) is named, not quoted."""
    if all(isinstance(r.get("id"), str) for r in old + new):
        a, b = {r["id"]: r for r in old}, {r["id"]: r for r in new}
        parts = [f"added {k}" for k in b if k not in a] + [f"removed {k}" for k in a if k not in b]
        parts += [f"{k}: {_fields_changed(a[k], b[k])}" for k in b if k in a and a[k] != b[k]]
        moved = [k for k in b if k in a] != [k for k in a if k in b]
        return "; ".join(parts + (["reordered"] if moved else [])) or "reordered"
    parts = []
    for i in range(max(len(old), len(new))):
        if i >= len(old):
            parts.append(f"entry {i + 1} added")
        elif i >= len(new):
            parts.append(f"entry {i + 1} removed")
        elif old[i] != new[i]:
            parts.append(f"entry {i + 1}: {_fields_changed(old[i], new[i])}")
    return "; ".join(parts)


def _fields_changed(a: dict[str, Any], b: dict[str, Any]) -> str:
    keys = list(b) + [k for k in a if k not in b]
    shown = []
    for k in (k for k in keys if a.get(k) != b.get(k)):
        x, y = fmt(a.get(k)), fmt(b.get(k))
        shown.append(f"{k} {x} -> {y}" if len(x) <= SHOWN and len(y) <= SHOWN else f"{k} changed")
    return ", ".join(shown)


def fmt(x: Any) -> str:
    from registry.texts import fmt_number

    if x is None:
        return "none"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x):
        return "[" + ", ".join(fmt_number(v) for v in x) + "]"
    if isinstance(x, dict):  # a record for people, not JSON: "mode: half_up; source: ..."
        return "; ".join(f"{k}: {fmt(v)}" for k, v in sorted(x.items()))
    if isinstance(x, list):
        return json.dumps(x, ensure_ascii=False, sort_keys=True)
    return fmt_number(x) if isinstance(x, (int, float)) else str(x)


def diff(a: dict[str, Any] | None, b: dict[str, Any]) -> list[Change]:
    """Every change from content `a` to content `b` (None: `b` is a first version)."""
    if a is None:
        return [Change(what="version", name="first version", scoring=True)]
    out: list[Change] = []
    out += _constants(a.get("constants") or {}, b.get("constants") or {})
    out += _inputs(a.get("inputs") or [], b.get("inputs") or [])
    out += _tables(a.get("tables") or {}, b.get("tables") or {})
    out += _fields("output", "output", a.get("output") or {}, b.get("output") or {})
    out += _dependencies(a, b)
    out += _units(a.get("units"), b.get("units"))
    out += _other(a, b)
    if a.get("text") != b.get("text"):
        out.append(Change(what="text", name="text", old=a.get("text"), new=b.get("text"), scoring=False))
    return out


_HANDLED = {"constants", "inputs", "tables", "output", "depends_on", "dependencies", "units", "text", "version",
            "recorded_before_format"}
_SCORING_FIELDS = {"plausibility"}  # other content that can move an answer (the published variant refuses by it)


def _other(a: dict[str, Any], b: dict[str, Any]) -> list[Change]:
    """Every other shown field a version's content covers (formula, audits, citations, cited guidelines)."""
    out: list[Change] = []
    for key in sorted((set(a) & set(b)) - _HANDLED):  # a key one side lacks was not recorded then (older format)
        x, y = a.get(key), b.get(key)
        if x == y:
            continue
        if key == "guidelines" and isinstance(x, dict) and isinstance(y, dict):
            out += [Change(what="guideline", name=g, field="content", old=x.get(g), new=y.get(g), scoring=False)
                    for g in sorted(set(x) | set(y)) if x.get(g) != y.get(g)]
        elif isinstance(x, dict) and isinstance(y, dict):
            out += [Change(what="field", name=f"{key}.{k}", field="value", old=x.get(k), new=y.get(k),
                           scoring=key in _SCORING_FIELDS) for k in sorted(set(x) | set(y)) if x.get(k) != y.get(k)]
        else:
            out.append(Change(what="field", name=key, field="value", old=x, new=y, scoring=key in _SCORING_FIELDS))
    return out


def _constants(ca: dict[str, Any], cb: dict[str, Any]) -> list[Change]:
    out: list[Change] = []
    for name in sorted(set(ca) | set(cb)):
        x, y = ca.get(name), cb.get(name)
        if x == y:
            continue
        if x is None or y is None:
            val = (y or x or {}).get("value")
            unit = (y or x or {}).get("unit")
            shown = f"{fmt(val)} {unit or ''}".rstrip()
            out.append(Change(what="constant", name=name, field="added" if x is None else "removed",
                              old=None if x is None else shown, new=shown if x is None else None))
            continue
        if x.get("value") != y.get("value"):
            out.append(Change(what="constant", name=name, field="value", old=x["value"], new=y["value"],
                              unit=y.get("unit")))
        out += [c for c in _fields("constant", name, x, y) if c.field != "value"]
    return out


def _fields(what: str, name: str, x: dict[str, Any], y: dict[str, Any], skip: frozenset[str] = frozenset()) -> list[Change]:
    descriptive = _DESCRIPTIVE.get(what, set())
    return [Change(what=what, name=name, field=k, old=x.get(k), new=y.get(k), scoring=k not in descriptive)
            for k in sorted(set(x) | set(y)) if k not in skip and x.get(k) != y.get(k)]


def _inputs(la: list[dict[str, Any]], lb: list[dict[str, Any]]) -> list[Change]:
    ia, ib = {i["name"]: i for i in la}, {i["name"]: i for i in lb}
    out = [Change(what="input", name=n, field="added") for n in ib if n not in ia]
    out += [Change(what="input", name=n, field="removed") for n in ia if n not in ib]
    for n in [n for n in ib if n in ia and ia[n] != ib[n]]:
        out += _fields("input", n, ia[n], ib[n])
    return out


def _tables(ta: dict[str, Any], tb: dict[str, Any]) -> list[Change]:
    out: list[Change] = []
    for name in sorted(set(ta) | set(tb)):
        x, y = ta.get(name), tb.get(name)
        if x == y:
            continue
        if x is None or y is None:
            out.append(Change(what="table", name=name, field="added" if x is None else "removed"))
            continue
        out += _fields("table", name, x, y, skip=frozenset({"bands", "points", "lookup"}))
        out += _bands(name, x.get("bands"), y.get("bands"))
        for shape in ("points", "lookup"):
            pa, pb = x.get(shape) or {}, y.get(shape) or {}
            for key in [k for k in list(pa) + [k for k in pb if k not in pa] if pa.get(k) != pb.get(k)]:
                out.append(Change(what="table", name=f"{name}[{key}]", field=shape, old=pa.get(key), new=pb.get(key)))
    return out


def band_text(b: dict[str, Any] | None) -> str:
    from registry.schema import Band
    from registry.texts import band_condition

    if b is None:
        return "none"
    try:
        cond = band_condition(Band.model_validate(b))
    except ValueError:
        cond = json.dumps(b, sort_keys=True)
    label = f" '{b['label']}'" if b.get("label") else ""
    return f"{cond} -> {fmt(b.get('value'))}{label}"


def _bands(name: str, ba: list[dict[str, Any]] | None, bb: list[dict[str, Any]] | None) -> list[Change]:
    if ba == bb:
        return []
    ba, bb = ba or [], bb or []
    out: list[Change] = []
    if len(ba) != len(bb):
        return [Change(what="table", name=name, field="bands", old=[band_text(b) for b in ba],
                       new=[band_text(b) for b in bb])]
    for i, (x, y) in enumerate(zip(ba, bb), 1):
        if x == y:
            continue
        where = f"{name} band {i}"
        bounds = ("ge", "gt", "le", "lt")
        if any(x.get(k) != y.get(k) for k in bounds):
            out.append(Change(what="table", name=where, field="bounds", old=band_text({**x, "label": None}).split(" -> ")[0],
                              new=band_text({**y, "label": None}).split(" -> ")[0]))
        if x.get("value") != y.get("value"):
            out.append(Change(what="table", name=where, field="points", old=x.get("value"), new=y.get("value")))
        if x.get("label") != y.get("label"):
            out.append(Change(what="table", name=where, field="label", old=x.get("label"), new=y.get("label"),
                              scoring=False))
    return out


def _dependencies(a: dict[str, Any], b: dict[str, Any]) -> list[Change]:
    out: list[Change] = []
    da, db = a.get("depends_on") or [], b.get("depends_on") or []
    if da != db:
        out.append(Change(what="dependency", name="depends_on", field="list", old=da, new=db))
    ha, hb = a.get("dependencies") or {}, b.get("dependencies") or {}
    for d in sorted(set(ha) & set(hb)):
        if ha[d] != hb[d]:
            out.append(Change(what="dependency", name=d, field="content", old=ha[d], new=hb[d]))
    return out


def _units(ua: Any, ub: Any) -> list[Change]:
    if ua == ub:
        return []
    if not isinstance(ua, dict) or not isinstance(ub, dict):
        return [Change(what="units", name="*")]
    flat_a, flat_b = _flatten(ua), _flatten(ub)
    keys = [k for k in sorted(set(flat_a) | set(flat_b)) if flat_a.get(k) != flat_b.get(k)]
    if not keys or len(keys) > 3:
        return [Change(what="units", name="*", old=len(keys))]
    return [Change(what="units", name=k, old=flat_a.get(k), new=flat_b.get(k)) for k in keys]


def _flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(d, dict):
        return {prefix: d}
    out: dict[str, Any] = {}
    for k, v in d.items():
        out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def scoring_changes(changes: list[Change]) -> list[Change]:
    return [c for c in changes if c.scoring]
