"""The working behind an answer: the steps a kernel took, recorded by the reader it runs on.

A kernel reads its inputs, constants, tables and dependencies through a reader (`Context` for one patient,
`vectorised.Columns` for arrays). `WorkingContext` is the same reader with a recorder: each accessor does
exactly what `Context`'s does and then writes a step (an input as used, a unit conversion, a criterion's points
with the running total, a dependency's own working, an intermediate rounding). The plain `Context` is untouched,
so `compute` without working pays nothing; and since the numbers come from the very calls the kernel makes,
there is one formula and the working cannot disagree with it. A kernel may add a step of its own through
`ctx.step(label, value)` (the plain readers return the value unchanged).
"""
from __future__ import annotations

import math
import string
import threading
from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple

from registry.schema import Calculator
from solver.library.context import Context
from solver.library.units import Converter

_FORMATTER = string.Formatter()
# step kinds: what a clinician checks on each line
INPUT, CONVERSION, POINTS, CATEGORY, TERM, BOUND, ROUNDING, SUB, NOTE, ANSWER = (
    "input", "conversion", "points", "category", "term", "bound", "rounding", "sub", "note", "answer")


class Step(NamedTuple):
    """One line of working: a label a clinician reads, its value and unit, and what it came from."""

    step: str
    value: Any
    unit: str | None
    sources: tuple[str, ...]  # "input NAME", "constant NAME", "table NAME", "step N", "calculator SLUG"
    kind: str
    total: float | None = None  # the running total of a points score after this criterion

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.step, "value": plain(self.value), "unit": self.unit,
                               "from": list(self.sources), "kind": self.kind}
        if self.total is not None:
            out["total"] = self.total
        return out


def plain(v: Any) -> Any:
    """A value as JSON carries it (a date as ISO text, weeks and days as a list)."""
    if hasattr(v, "isoformat"):
        return v.isoformat()
    if isinstance(v, tuple):
        return list(v)
    return v


def fmt(v: Any) -> str:
    """A number as a clinician reads it: no float noise, at most 5 decimals."""
    if isinstance(v, tuple) and len(v) == 2:  # a gestational age
        return f"{v[0]} weeks {v[1]} days"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(plain(v))
    if isinstance(v, float) and math.isfinite(v):
        if v == int(v) and abs(v) < 1e15:
            return str(int(v)) if abs(v) >= 1 or v == 0 else f"{v:g}"
        return repr(round(v, 5)) if abs(v) >= 1e-4 else f"{v:.3g}"
    return str(v)


def _unit(u: str | None) -> str:
    return f" {u}" if u else ""


@dataclass(frozen=True)
class TracingConverter(Converter):
    """The converter the library uses, noting each intermediate of a conversion as it rounds it (the benchmark's
    chain: mmol to mol, mol to g by the molar mass, g to mg, per L to per dL): (value, unit or None)."""

    trace: list[tuple[float, str | None]] = field(default_factory=list, init=False, compare=False)
    depth: list[int] = field(default_factory=list, init=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        for sv in self.volumes:  # the volume factors worked out now, so that a trace holds only the case's numbers
            for tv in self.volumes:
                self.concentration(1.0, f"g/{sv}", f"g/{tv}", None, None)
        self.trace.clear()

    def _same(self, value: float, src: str, tgt: str) -> float:
        if src == tgt:
            return value
        self.depth.append(1)
        try:
            out = super()._same(value, src, tgt)
        finally:
            self.depth.pop()
        self.trace.append((out, tgt))
        return out

    def r(self, x: float) -> float:
        out = super().r(x)
        if not self.depth:
            self.trace.append((out, None))
        return out


_TRACERS = threading.local()  # per thread: (unit data, exact) -> its tracing converter, made once (its volume factors
# worked out once; each read clears the trace before it converts and reads it right after, nested contexts included)


def _tracer(units: Any, exact: bool) -> TracingConverter:
    made: dict[tuple[int, bool], TracingConverter] = getattr(_TRACERS, "made", None) or {}
    _TRACERS.made = made
    c = made.get((id(units), exact))
    if c is None or c.units is not units:
        if len(made) > 16:
            made.clear()
        c = made[(id(units), exact)] = TracingConverter(units, exact)
    return c


def _chain_units(trace: list[tuple[float, str | None]], given_unit: str, unit: str, conv: Converter) -> list[str]:
    """The unit of each intermediate of a traced concentration conversion: a leg between two units of one table
    names its own; the others follow from the one before (a mass divided by the molar mass is an amount, an
    amount times it a mass, an amount times the valence milliequivalents, milliequivalents over it millimoles);
    the last is the target unit."""
    prev = given_unit.split("/")[0]
    out = []
    for i, (_, u) in enumerate(trace):
        if u is None:
            if i == len(trace) - 1:
                u = unit
            else:
                fam = conv._family(prev) if prev != "mEq" else "eq"
                target = unit.split("/")[0]
                tfam = conv._family(target) if target != "mEq" else "eq"
                u = {"g": "mol", "eq": "mmol"}.get(fam) or ("g" if tfam in ("g", "eq") and tfam != "eq" else "mEq")
        out.append(u)
        prev = u.split("/")[0]
    return out


class WorkingContext(Context):
    """`Context` with a recorder: the same reads, each written down as a step."""

    __slots__ = ("steps", "_pending", "_seen", "_additive", "_fresh", "_last_input")
    recording = True

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.conv = _tracer(self.units, not self.benchmark)
        self.steps: list[Step] = []
        self._pending: list[str] = []  # constants and tables read since the last step: its sources
        self._seen: set[str] = set()
        self._additive = _is_score(self.calc)
        self._fresh: list[int] = []  # the steps of the table reads just made, with nothing read since (see `where`)
        self._last_input: tuple[str, Any, str | None] | None = None  # the input read last: (name, value, unit)

    # ------------------------------------------------------------------ writing steps
    def _add(self, label: str, value: Any, unit: str | None, kind: str, sources: Iterable[str] = ()) -> Any:
        src = tuple(dict.fromkeys([*sources, *self._pending]))
        self._pending.clear()
        self._fresh.clear()
        self.steps.append(Step(label, value, unit, src, kind))
        return value

    def step(self, label: str, value: Any, unit: str | None = None, *args: Any) -> Any:  # type: ignore[override]
        """A step the kernel names itself: an intermediate term, or a criterion's points (`unit` "points"). In the
        label "{}" is filled with `args` and "{name}" with the registry constant `name` (formatted only here, so the
        plain readers format and read nothing)."""
        names = [f for _, f, _, _ in _FORMATTER.parse(label) if f and not f.isdigit()]
        if args or names:  # "{}" from `args`, "{name}" the registry constant of that name
            label = label.format(*(fmt(a) for a in args), **{n: fmt(self._consts[n]) for n in names})
            self._pending += [f"constant {n}" for n in names]
        steps = self.steps
        if steps and steps[-1].kind in (ROUNDING, BOUND) and steps[-1].value is value:  # just shown, now named
            self._pending[:0] = steps.pop().sources
        if unit == "points":
            return self._add(f"{label}: {_points(value)}", value, unit, POINTS)
        return self._add(f"{label}: {fmt(value)}{_unit(unit)}", value, unit, TERM)

    def const(self, name: str) -> Any:
        v = super().const(name)
        self._pending.append(f"constant {name}")
        self._fresh.clear()
        return v

    # ------------------------------------------------------------------ inputs
    def _input(self, name: str) -> None:
        if name in self._seen:
            return
        self._seen.add(name)
        rec = self.record.get(name)
        if rec is None:
            return
        given, value, unit = rec
        self._last_input = (name, value, unit)
        if isinstance(given, (list, tuple)) and len(given) == 2 and isinstance(given[1], str):
            number, gunit = given
            if gunit != (unit or "") and not (isinstance(value, (int, float)) and value == number):
                self._add(f"{name}: {fmt(number)} {gunit} = {fmt(value)}{_unit(unit)}", value, unit, CONVERSION,
                          [f"input {name}"])
                return
            label = f"{name}: {fmt(number)}{_unit(unit or gunit)}"
        elif isinstance(given, (list, tuple)):
            label = f"{name}: {' '.join(map(str, given))} = {fmt(value)}{_unit(unit)}"
            self._add(label, value, unit, CONVERSION, [f"input {name}"])
            return
        else:
            label = f"{name}: {fmt(value)}{_unit(unit)}"
        self._add(label, value, unit, INPUT, [f"input {name}"])

    def date(self, name: str) -> Any:
        v = super().date(name)
        if name not in self._seen:
            self._seen.add(name)
            self._add(f"{name}: {v:%m/%d/%Y}", v, None, INPUT, [f"input {name}"])
        return v

    def choice(self, name: str) -> str | None:
        self._fresh.clear()  # (a read between a table read and a `where` or `select`: that read is not theirs)
        return super().choice(name)

    def flag(self, name: str) -> bool:
        self._fresh.clear()
        return super().flag(name)

    def flags(self, names: Iterable[str]) -> dict[str, bool]:
        self._fresh.clear()
        return super().flags(names)

    def quantity(self, name: str) -> float:
        trace = self.conv.trace
        trace.clear()
        v = super().quantity(name)
        if len(trace) > 1 and name not in self._seen:
            self._chain(name, list(trace))
        self._input(name)
        return v

    def _chain(self, name: str, trace: list[tuple[float, str | None]]) -> None:
        """The intermediates of a unit conversion, each a step (the last, the value used, is the input's)."""
        given, _, unit = self.record[name]
        if all(x == given[0] for x, _ in trace):  # mmol to mEq of a monovalent ion: nothing to show
            return
        units = _chain_units(trace, given[1], unit or "", self.conv)
        before = f"{fmt(given[0])} {given[0 + 1].split('/')[0]}"
        for (x, _), u in zip(trace[:-1], units[:-1]):
            self._add(f"{name}: {before} = {fmt(x)} {u}", x, u, CONVERSION, [f"input {name}"])
            before = f"{fmt(x)} {u}"

    def measurement(self, name: str) -> float:
        v = super().measurement(name)
        self._input(name)
        return v

    def number(self, name: str) -> float:
        v = super().number(name)
        self._input(name)
        return v

    def age(self, name: str = "age") -> float:
        v = super().age(name)
        self._input(name)
        return v

    def weight(self, name: str = "weight") -> float:
        v = super().weight(name)
        self._input(name)
        return v

    def height(self, name: str = "height", unit: str = "m") -> float:
        v = super().height(name, unit)
        self._input(name)
        return v

    def temperature(self, name: str) -> float:
        v = super().temperature(name)
        self._input(name)
        return v

    def count_per_litre(self, name: str) -> float:
        v = super().count_per_litre(name)
        self._input(name)
        return v

    # ------------------------------------------------------------------ points and categories
    def band(self, name: str, x: float) -> float | int:
        v = super().band(name, x)
        t = self.calc.tables[name]
        what = t.variable or t.description
        label = next((b.label for b in t.bands or () if b.value == v and b.label and b.holds(x)), None)
        if t.labels_only or not self._additive:
            shown = f" ({label})" if label else ""
            value: Any = label if t.labels_only and label else v
            self._add(f"{what} {fmt(x)}{_unit(t.unit)}: {fmt(value)}{shown if value is v else ''}", value, None,
                      CATEGORY, [f"table {name}"])
        else:
            self._add(f"{what} {fmt(x)}{_unit(t.unit)}: {_points(v)}", v, "points", POINTS, [f"table {name}"])
        return v

    def lookup(self, name: str, key: str | None) -> float | int:
        fresh = list(self._fresh)
        v = super().lookup(name, key)
        t = self.calc.tables[name]
        what = f"{t.variable} {key}" if t.variable else str(key)
        if self._additive:
            self._add(f"{what}: {_points(v)}", v, "points", POINTS, [f"table {name}"])
        else:  # a factor read by key: named by its table (mme_conversion_factor: "OxyCODONE mme conversion factor")
            self._add(f"{key} {name.replace('_', ' ')}: {fmt(v)}", v, None, CATEGORY, [f"table {name}"])
        self._fresh[:] = [*fresh, len(self.steps) - 1]
        return v

    def points(self, met: dict[str, bool], table: str = "points") -> float:
        total = super().points(met, table)
        mapping = self._pl.maps.get(table) or {}
        for name, yes in met.items():
            w = (mapping[name] if name in mapping else Context.lookup(self, table, name)) if yes else 0
            self._add(f"{name}: {'yes' if yes else 'no'}, {_points(w)}", w, "points", POINTS,
                      [f"table {table}"] if yes else [])
        return total

    def where(self, cond: Any, yes: Any, no: Any) -> Any:  # type: ignore[override]
        """`Context.where`. Both sides are read before the choice, so a criterion's points read by key for the side
        not taken, as the very last reads, are taken back: `where(met, lookup, 0)` shows the criterion as not met,
        `where(c, lookup_a, lookup_b)` drops the one not chosen. The working never adds points the kernel did not."""
        steps, fresh = self.steps, self._fresh
        chosen = yes if cond else no
        if len(fresh) >= 2 and steps[fresh[-2]].value == yes and steps[fresh[-1]].value == no:
            steps.pop(fresh[-1] if cond else fresh[-2])
        elif fresh and not cond and steps[fresh[-1]].value == yes and yes is not no and yes != no:
            last = steps[fresh[-1]]
            steps[fresh[-1]] = last._replace(step=f"{last.step.rsplit(':', 1)[0]}: not met, {_points(no)}", value=no)
        fresh.clear()
        return chosen

    def select(self, cases: Iterable[tuple[Any, Any]], default: Any) -> Any:  # type: ignore[override]
        """`Context.select`, in its order and as lazily; the table reads made for the values not chosen (read
        before the choice, as the very last reads) are taken back, as in `where`."""
        cases = list(cases)
        fresh, steps = list(self._fresh), self.steps
        eager = [v for _, v in cases if not callable(v)] + ([] if callable(default) else [default])
        chosen: Any = default
        for cond, value in cases:
            if cond() if callable(cond) else cond:
                chosen = value
                break
        if eager and len(fresh) >= len(eager) and [steps[i].value for i in fresh[-len(eager):]] == eager:
            keep = next((i for i, v in zip(fresh[-len(eager):], eager) if v is chosen), None)
            for i in sorted(fresh[-len(eager):], reverse=True):
                if i != keep:
                    steps.pop(i)
        return chosen() if callable(chosen) else chosen

    # ------------------------------------------------------------------ terms
    def _bound(self, x: Any, out: Any, words: str, other: str) -> Any:
        """A bound the kernel applied (`clip`, `maximum`, `minimum`), named after the input it bounds when `x` is the
        input just read ("Sodium, 125 to 137 mEq/L: 137"), else by its operands."""
        if isinstance(out, (int, float)) and not isinstance(out, bool):
            last = self._last_input
            if last is not None and last[1] is x:
                self._add(f"{last[0]}, {words}{_unit(last[2])}: {fmt(out)}{_unit(last[2])}", out, last[2], BOUND)
            else:
                self._add(f"{other}: {fmt(out)}", out, None, BOUND)
        return out

    def clip(self, x: Any, lo: Any, hi: Any) -> Any:  # type: ignore[override]
        return self._bound(x, Context.clip(x, lo, hi), f"{fmt(lo)} to {fmt(hi)}", f"{fmt(x)} within {fmt(lo)} to {fmt(hi)}")

    def maximum(self, a: Any, b: Any) -> Any:  # type: ignore[override]
        return self._bound(a, Context.maximum(a, b), f"at least {fmt(b)}", f"the larger of {fmt(a)} and {fmt(b)}")

    def minimum(self, a: Any, b: Any) -> Any:  # type: ignore[override]
        return self._bound(a, Context.minimum(a, b), f"at most {fmt(b)}", f"the smaller of {fmt(a)} and {fmt(b)}")

    def r(self, x: float) -> float:
        v = super().r(x)
        if self.benchmark and isinstance(x, float) and v != x:
            self._add(f"an intermediate, rounded as the benchmark rounds: {fmt(v)}", v, None, ROUNDING)
        return v

    def sub(self, slug: str) -> float:
        v = super().sub(slug)
        if slug in self._seen:
            return v
        self._seen.add(slug)
        res = self._cache.get(slug) if self._cache else None
        name = self.reg.calculators[slug].name
        if res is not None:
            for s in res.working[:-1]:
                if s.kind == ROUNDING and s.step.startswith("unrounded"):
                    continue
                if s.kind in (INPUT, CONVERSION) and s.sources and s.sources[0][6:] in self._seen \
                        and self.record.get(s.sources[0][6:], (0, None))[1] == s.value:
                    continue
                if s.kind in (INPUT, CONVERSION) and s.sources:
                    self._seen.add(s.sources[0][6:])
                self.steps.append(s._replace(step=f"{name}: {s.step}", kind=s.kind if s.kind != POINTS else TERM))
        self._add(f"{name} = {fmt(v)}{_unit(res.unit if res else None)}", v, res.unit if res else None, SUB,
                  [f"calculator {slug}"])
        return v


def _points(v: Any) -> str:
    n = fmt(v)
    word = "point" if v in (1, -1) else "points"
    return f"+{n} {word}" if isinstance(v, (int, float)) and v > 0 else f"{n} {word}"


def _is_score(calc: Calculator) -> bool:
    """A points score (its output counted in points or criteria met): its working keeps a running total."""
    return calc.output.unit in ("points", "criteria")


def finish_working(ctx: WorkingContext, raw: Any, value: Any, unit: str | None, calc: Calculator,
                   variant: str) -> tuple[Step, ...]:
    """The kernel's steps, closed by the result: the unrounded value where rounding changed it, the running totals
    kept only where they add up to the answer (a kernel that takes a maximum or a product is not a plain sum), the
    deviations from the benchmark that the published variant applied, and the answer."""
    steps = ctx.steps
    if ctx._additive:  # a running total where the criteria's points add up to the answer
        totals: list[float] = []
        running: float = 0
        for s in steps:
            if s.kind == POINTS and isinstance(s.value, (int, float)):
                running += s.value
                totals.append(running)
        if totals and isinstance(raw, (int, float)) and totals[-1] == raw:
            it = iter(totals)
            steps = [s._replace(total=next(it)) if s.kind == POINTS and isinstance(s.value, (int, float)) else s
                     for s in steps]
    numeric = isinstance(raw, (int, float)) and not isinstance(raw, bool)
    if numeric and fmt(raw) != fmt(value):
        steps.append(Step(f"unrounded result: {raw:.10g}", raw, unit, tuple(ctx._pending), ROUNDING))
        ctx._pending.clear()
    if variant == "published":
        used = set(ctx.record)
        for dev in calc.deviations:
            if not dev.inputs or used.intersection(dev.inputs):
                steps.append(Step(f"as published, not as the benchmark ({dev.id}): {dev.published}", None, None,
                                  (f"deviation {dev.id}",), NOTE))
    src = tuple(dict.fromkeys([*ctx._pending, *(f"step {len(steps)}",) * bool(steps)]))
    steps.append(Step(f"{calc.name} = {fmt(value)}{_unit(unit)}", value, unit, src, ANSWER))
    return tuple(steps)


def missing_working(message: str) -> tuple[Step, ...]:
    """The working of an abstention: what was missing (or wrong), and no number."""
    return (Step(f"no answer: {message}", None, None, (), NOTE),)
