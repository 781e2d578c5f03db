"""Supplied formula texts: jinja2 templates rendered over a calculator's registry entry.

A text names its numbers through three objects, so that a number is written once (in the
registry) and the completeness audit can see, from the template's syntax tree, what a text uses:

    {{ c.female_factor }}             a constant's value (units are the writer's words)
    {{ t.weight_rule }}               a table, rendered in full (every band or weight)
    {{ i["creatinine"] }}             an input: its name and canonical unit or options
    {{ calc.name }}, {{ calc.unit }}  the calculator's name and output unit
    {{ i["creatinine"].molar_mass }}  the molar mass its conversions use
    {{ d["ideal-body-weight"].c.male_base_weight }}   the same, of a calculator it depends on
    {{ u.weight.lbs }}                shared unit factors (formulas/units.yaml)
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import jinja2
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.runtime import LoopContext
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer
from pydantic import BaseModel

from registry.render_time import RENDER_SECONDS, TEXTS_SECONDS, Stopwatch, gc_timed
from registry.schema import Band, Calculator, Input, InputKind, Table, UnitsFile, Version

TEXTS_DIR = "texts"
INDEX_FILE = "index.json"
INDEX_FORMAT = 1


def fmt_number(x: Any) -> str:
    """Numbers as a person writes them: 0.85, 140, 1e-05 only where unavoidable."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if x.is_integer() and abs(x) < 1e15:
            return str(int(x))
        text = repr(x)
        return text
    return str(x)


def band_condition(b: Band) -> str:
    """A band's bounds in words, e.g. '≥ 18.5 and ≤ 24.9'."""
    parts = []
    if b.ge is not None:
        parts.append(f"≥ {fmt_number(b.ge)}")
    if b.gt is not None:
        parts.append(f"> {fmt_number(b.gt)}")
    if b.lt is not None:
        parts.append(f"< {fmt_number(b.lt)}")
    if b.le is not None:
        parts.append(f"≤ {fmt_number(b.le)}")
    return " and ".join(parts) if parts else "any value"


@dataclass(frozen=True)
class TableView:
    """A table as a text shows it: one line per band, weight or option."""

    name: str
    table: Table

    def __str__(self) -> str:
        t = self.table
        unit = f" {t.unit}" if t.unit else ""
        lines: list[str] = []
        if t.bands is not None:
            var = t.variable or self.name
            for b in t.bands:
                if t.labels_only and b.label:
                    lines.append(f"- {var} {band_condition(b)}{unit}: {b.label}")
                    continue
                label = f" ({b.label})" if b.label else ""
                lines.append(f"- {var} {band_condition(b)}{unit}: {fmt_number(b.value)}{label}")
            if t.default is not None:
                lines.append(f"- any other value: {fmt_number(t.default)}")
        else:
            mapping = t.points if t.points is not None else t.lookup
            assert mapping is not None
            for key, val in mapping.items():
                lines.append(f"- {key}: {fmt_number(val)}")
            if t.default is not None:
                lines.append(f"- anything else: {fmt_number(t.default)}")
        return "\n".join(lines)


@dataclass(frozen=True)
class InputView:
    """An input as a text names it: its key and canonical unit, or its options."""

    spec: Input
    molar_mass: float | None = None  # the effective molar mass for its conversions, g/mol
    valence: int | None = None

    def __str__(self) -> str:
        s = self.spec
        if s.options:
            return f"{s.name} (one of: {', '.join(s.options)})"
        if s.kind == InputKind.boolean:
            return f"{s.name} (yes/no)"
        if s.kind == InputKind.date:
            return f"{s.name} (a date, MM/DD/YYYY)"
        if s.kind == InputKind.age:
            return f"{s.name} (years)"
        if s.unit:
            return f"{s.name} ({s.unit})"
        return s.name

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def unit(self) -> str:
        return self.spec.unit or ""


# ---------------------------------------------------------------------- the sandbox
#
# Registry files come from pull requests, so a template is untrusted. It is checked statically
# (`template_problems`) before it is compiled, and rendered by an immutable sandbox that reads only
# data: the fields of registry models, the views below, and dict lookups.

NAMES = frozenset({"c", "t", "i", "calc", "d", "u", "label"})  # what `render_context` offers
FILTERS = frozenset({"abs", "round", "int", "float", "string", "lower", "upper", "title", "capitalize", "trim",
                     "join", "length", "count", "first", "last", "min", "max", "sum", "sort", "list", "default",
                     "unique", "reverse"})
TESTS = frozenset({"defined", "undefined", "none", "number", "string", "mapping", "sequence", "iterable", "boolean",
                   "true", "false", "integer", "float", "even", "odd", "divisibleby", "eq", "ne", "lt", "le", "gt",
                   "ge", "in", "sameas", "lower", "upper"})
_FORBIDDEN_NODES = {nodes.Import: "an {% import %}", nodes.FromImport: "an {% from ... import %}",
                    nodes.Include: "an {% include %}", nodes.Extends: "an {% extends %}", nodes.Macro: "a {% macro %}",
                    nodes.CallBlock: "a {% call %} block", nodes.Block: "a {% block %}",
                    nodes.FilterBlock: "a {% filter %} block", nodes.ScopedEvalContextModifier: "an {% autoescape %}"}
_DICT_METHODS = frozenset({"values", "keys", "items", "get"})
# The work a render may do. Every value a template makes is weighed as it is made (its tree size:
# characters, items of every nesting level, digits of an integer; a shared part counts each time it
# would be printed) and must stay within MAX_SIZE; each weighing, loop iteration, call, comparison,
# integer product and printed character is charged to one budget of RENDER_BUDGET steps, and a render
# prints at most MAX_OUTPUT characters. So no template does more than a few million steps of real work,
# whatever it nests or repeats (the shipped texts use under 2% of the budget).
MAX_SIZE = 100_000  # the largest value (characters, items, digits) an operator, literal or filter may make
MAX_INT_BITS = 16_384  # the largest integer a template may make (a YAML integer holds up to 4,300 digits)
MAX_PRECISION = 100  # the largest magnitude of round's precision (round(-10**9) would build 10**10**9)
MAX_DEPTH = 32  # the deepest nesting of lists and mappings a template may make or print
MAX_OUTPUT = 100_000  # characters a render may print (the longest shipped text has about 6,000)
RENDER_BUDGET = 1_000_000  # steps of work a render may do
# Steps are not time, so a render also has a wall-clock budget and a whole set of texts (validate's and `texts
# render`'s, one `texts_budget`) one more: registry.render_time says how that time is counted. The clock is read
# once per CLOCK_EVERY steps.
CLOCK_EVERY = 256
_set_watch: ContextVar[Stopwatch | None] = ContextVar("registry_texts_watch", default=None)


@contextmanager
def texts_budget(seconds: float = TEXTS_SECONDS) -> Iterator[None]:
    """Every render inside shares one budget of `seconds` from now, beside each render's own."""
    with gc_timed():
        token = _set_watch.set(Stopwatch(seconds))
        try:
            yield
        finally:
            _set_watch.reset(token)


class _Work:
    """What one render has left to spend, and the printed sizes of the registry objects it has weighed."""

    def __init__(self) -> None:
        self.left = RENDER_BUDGET
        self.opaque: dict[int, tuple[Any, int]] = {}  # id -> (object, size); the object is kept so ids stay unique
        self.watch = Stopwatch(RENDER_SECONDS)
        self.shared = _set_watch.get()
        self.ticks = CLOCK_EVERY - 1  # the first step reads the clock: a set of texts past its time stops at once

    def on_time(self) -> None:
        if self.shared is not None and self.shared.over():
            raise SecurityError(f"the registry's texts together take more than their {self.shared.budget:g} s to "
                                "render: this one was cut off")
        if self.watch.over():
            raise SecurityError(f"the template takes more than {RENDER_SECONDS * 1000:.0f} ms to render: not a "
                                "registry text")


_work: ContextVar[_Work | None] = ContextVar("registry_text_work", default=None)


def _current() -> _Work:
    work = _work.get()
    if work is None:  # rendered outside `_run` (a test compiling by hand): a budget of its own
        work = _Work()
        _work.set(work)
    return work


def _charge(n: int) -> None:
    work = _current()
    work.left -= max(n, 1)
    if work.left < 0:
        raise SecurityError(f"the template does more than {RENDER_BUDGET:,} steps of work: not a registry text")
    work.ticks += 1
    if work.ticks % CLOCK_EVERY == 0:
        work.on_time()


def _too_big(what: str) -> SecurityError:
    return SecurityError(f"{what} larger than {MAX_SIZE:,} (characters, items or digits) is not allowed in a "
                         "registry text")


_VIEWS: tuple[type, ...] = (type({}.keys()), type({}.values()), type({}.items()))
_SEQUENCES: tuple[type, ...] = (list, tuple, set, frozenset, *_VIEWS)


def _weight(value: Any, limit: int = MAX_SIZE) -> int:
    """A value's tree size, shared parts counted each time they occur; refused past `limit` (or MAX_DEPTH).

    Weighing costs at most what it returns: a part shared n times is walked once and counted n times.
    """
    work = _current()
    seen: dict[int, int] = {}
    total = [0]

    def size(x: Any, depth: int) -> int:
        if isinstance(x, str):
            n = len(x) + 1
        elif x is None or isinstance(x, (bool, float)):
            n = 1
        elif isinstance(x, int):
            n = x.bit_length() // 3 + 1  # at least its decimal digits
        elif id(x) in seen:
            n = seen[id(x)]
        elif isinstance(x, (list, tuple, set, frozenset, dict, *_VIEWS)):
            if depth >= MAX_DEPTH:
                raise SecurityError(f"nesting deeper than {MAX_DEPTH} levels is not allowed in a registry text")
            items: Iterable[Any] = [*x.keys(), *x.values()] if isinstance(x, dict) else x  # type: ignore[assignment]
            n = 1 + sum(size(item, depth + 1) for item in items)
            seen[id(x)] = n
        else:  # a registry model, view, loop or undefined: as long as it prints
            known = work.opaque.get(id(x))
            if known is None or known[0] is not x:
                try:
                    known = (x, len(repr(x)) + 1)
                except Exception:  # an undefined name prints as an error elsewhere
                    known = (x, 1)
                work.opaque[id(x)] = known
            n = known[1]
        total[0] += 1
        if n > limit or total[0] > limit:
            raise _too_big("a value")
        return n

    return size(value, 0)


def _made(value: Any) -> Any:
    """A value the template has just made: weighed (and refused past MAX_SIZE), its size charged."""
    _charge(_weight(value))
    return value


def _repeated(seq: str | list[Any] | tuple[Any, ...], n: int) -> int:
    """The weight of `seq * n`, known before it is built."""
    return len(seq) * n + 1 if isinstance(seq, str) else (_weight(seq) - 1) * n + 1


def _int_cost(x: Any) -> int:
    return abs(x).bit_length() // 64 + 1 if isinstance(x, int) else 1


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse an operation before it builds something too large; charge what it costs."""
    ints = isinstance(left, int) and isinstance(right, int)
    if operator == "%" and isinstance(left, str):
        raise SecurityError("string formatting with % is not allowed in a registry text")
    if operator == "*":
        for seq, n in ((left, right), (right, left)):
            if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and n > 0 and _repeated(seq, n) > MAX_SIZE:
                raise _too_big("a repetition")
        if ints and abs(left).bit_length() + abs(right).bit_length() > MAX_INT_BITS:
            raise SecurityError(f"an integer of more than {MAX_INT_BITS:,} bits is not allowed in a registry text")
    if operator == "**" and ints and right > 0 and abs(left) > 1 and right * abs(left).bit_length() > MAX_INT_BITS:
        raise SecurityError(f"a power of more than {MAX_INT_BITS:,} bits is not allowed in a registry text")
    if operator == "+" and not ints and _weight(left) + _weight(right) > MAX_SIZE:
        raise _too_big("a result")
    if ints:
        bits = right * abs(left).bit_length() if operator == "**" and right > 0 else 0
        _charge(_int_cost(left) * _int_cost(right) + (bits // 64) ** 2)  # schoolbook cost, an upper bound


def _view_fields() -> dict[type, frozenset[str]]:
    return {InputView: frozenset({"spec", "name", "unit", "molar_mass", "valence"}),
            TableView: frozenset({"name", "table"}),
            LoopContext: frozenset({"index", "index0", "revindex", "revindex0", "first", "last", "length"})}


class RegistrySandbox(ImmutableSandboxedEnvironment):
    """jinja2's immutable sandbox, narrowed to data (model fields, view fields, dict lookups) and to bounded work."""

    intercepted_binops = frozenset({"*", "**", "+", "-", "/", "//", "%"})

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if attr.startswith("_"):
            return False
        if isinstance(obj, BaseModel):
            return attr in type(obj).model_fields
        if isinstance(obj, dict):
            return attr in _DICT_METHODS
        for kind, allowed in _view_fields().items():
            if isinstance(obj, kind):
                return attr in allowed
        return False

    def wrap_str_format(self, value: Any) -> None:
        return None  # no str.format / format_map: their field syntax reaches attributes

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _check_binop(operator, left, right)
        return _made(super().call_binop(context, operator, left, right))

    def getitem(self, obj: Any, argument: Any) -> Any:
        _charge(1)
        value = super().getitem(obj, argument)
        return _made(value) if isinstance(argument, slice) else value

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (jinja2's names)
        _charge(1)
        if isinstance(__obj, LoopContext):  # a recursive loop's `loop(...)`: its items are charged like a for's
            args = tuple(_loop(a) for a in args)
        return super().call(__context, __obj, *args, **kwargs)


def _loop(value: Any) -> Iterator[Any]:
    """What a `{% for %}` (or a recursive `loop(...)`) iterates, charged item by item."""
    for item in value:
        _charge(1)
        yield item


@jinja2.pass_context
def _loop_filter(context: Any, value: Any) -> Iterator[Any]:
    return _loop(value)


@jinja2.pass_context
def _tick(context: Any, value: Any) -> Any:
    """One step of a loop body or loop condition (recursive calls included)."""
    _charge(1)
    return value


@jinja2.pass_context
def _weighed(context: Any, value: Any) -> Any:
    """An operand of a comparison: comparing reads it all."""
    _charge(_weight(value))
    return value


@jinja2.pass_context
def _made_filter(context: Any, value: Any) -> Any:
    return _made(value)


@jinja2.pass_context
def _out(context: Any, value: str) -> str:
    """Literal text a template prints (inside loops it prints once per iteration)."""
    _charge(len(value))
    return value


@jinja2.pass_context
def _concat(context: Any, parts: list[Any]) -> str:
    """`a ~ b`, bounded like `+`."""
    for p in parts:
        _weight(p)
    text = "".join(str(p) for p in parts)
    if len(text) > MAX_SIZE:
        raise _too_big("a result")
    return _made(text)


def _finalize(value: Any) -> Any:
    """Every `{{ ... }}` printed: weighed and charged, numbers written as a person writes them."""
    _charge(_weight(value))
    return fmt_number(value) if isinstance(value, (int, float)) else value


@jinja2.pass_environment
def _sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
    """`sum`, each addition checked and charged like `+` (adding lists one by one is quadratic)."""
    get = jinja2.filters.make_attrgetter(environment, attribute) if attribute is not None else (lambda x: x)
    total = start
    for item in iterable:
        total = environment.call_binop(None, "+", total, get(item))
    return total


def _printed(x: Any, depth: int = 0) -> int:
    """An upper bound of len(str(x)) for a value already weighed (so walking it is bounded): a float prints in up
    to 24 characters, a string inside a container escaped up to 4 a character, every item with its separator."""
    if isinstance(x, str):
        return len(x) if depth == 0 else 4 * len(x) + 2
    if x is None or isinstance(x, bool):
        return 5
    if isinstance(x, float):
        return 24
    if isinstance(x, int):
        return x.bit_length() * 31 // 100 + 2  # decimal digits and a sign
    if isinstance(x, dict):
        return 2 + sum(_printed(k, depth + 1) + _printed(v, depth + 1) + 4 for k, v in x.items())
    if isinstance(x, _SEQUENCES):
        seq: Iterable[Any] = x  # type: ignore[assignment]  # one of _SEQUENCES
        return 2 + sum(_printed(item, depth + 1) + 2 for item in seq)
    known = _current().opaque.get(id(x))
    return known[1] if known is not None and known[0] is x else _weight(x)


def _predict(name: str, environment: Any, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse a string-building filter before it builds past MAX_SIZE, and `int` past the bit cap."""
    if name == "join":
        sep = kwargs.get("d", args[0] if args else "")
        attribute = kwargs.get("attribute", args[1] if len(args) > 1 else None)
        if not isinstance(value, (str, dict, *_SEQUENCES)):
            return  # jinja2 raises for what it cannot iterate
        items: list[Any] = list(value)  # type: ignore[call-overload]  # a str, dict or one of _SEQUENCES
        if attribute is not None:
            get = jinja2.filters.make_attrgetter(environment, attribute)
            items = [get(i) for i in items]
        if len(items) * _printed(sep) + sum(_printed(i) for i in items) > MAX_SIZE:
            raise _too_big("a join")
    elif name == "string" and _printed(value) > MAX_SIZE:
        raise _too_big("a string")
    elif name == "int" and isinstance(value, str):
        base = kwargs.get("base", args[1] if len(args) > 1 else 10)
        if isinstance(base, int) and 2 <= base <= 36 and len(value.strip()) * math.log2(base) > MAX_INT_BITS:
            raise SecurityError(f"an integer of more than {MAX_INT_BITS:,} bits is not allowed in a registry text")


def _checked_args(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for a in (*args, *kwargs.values()):
        if isinstance(a, int) and abs(a).bit_length() > MAX_INT_BITS:
            raise SecurityError(f"a filter argument of more than {MAX_INT_BITS:,} bits is not allowed")
        _weight(a)
    if name == "round":
        precision = kwargs.get("precision", args[0] if args else 0)
        if isinstance(precision, (int, float)) and abs(precision) > MAX_PRECISION:
            raise SecurityError(f"round's precision may be at most {MAX_PRECISION} places either way")


def _charged(name: str, f: Any) -> Any:
    """A filter or test that first weighs what it reads (value and arguments), then weighs what it makes.

    Every wrapped filter takes the context, so jinja2 never runs it while compiling (constant folding).
    """
    pass_arg = getattr(getattr(f, "jinja_pass_arg", None), "name", None)

    @jinja2.pass_context
    @functools.wraps(f)
    def run(context: Any, value: Any = None, *args: Any, **kwargs: Any) -> Any:
        size = _weight(value)
        _checked_args(name, args, kwargs)
        _charge(size * (2 + size.bit_length()) if name in ("sort", "unique", "min", "max") else size)
        _predict(name, context.environment, value, args, kwargs)
        lead = {"context": (context,), "eval_context": (context.eval_ctx,),
                "environment": (context.environment,)}.get(pass_arg or "", ())
        out = f(*lead, value, *args, **kwargs)
        if isinstance(out, Iterator):
            out = list(_loop(out))
        return _made(out)
    return run


class _Bound(NodeTransformer):
    """Route the template's work through the budget (applied to the checked tree, so its names never clash):
    loops and their bodies, literals, comparisons, `~` and everything printed."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = _call("_loop", node.iter)
        node.body.insert(0, nodes.Output([_call("_tick", nodes.Const(""))], lineno=node.lineno))
        if node.test is not None:
            node.test = nodes.And(_call("_tick", nodes.Const(True)), node.test, lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return _call("_concat", nodes.List(node.nodes, lineno=node.lineno))

    def visit_Compare(self, node: nodes.Compare) -> nodes.Node:
        self.generic_visit(node)
        node.expr = _call("_weighed", node.expr)
        for op in node.ops:
            op.expr = _call("_weighed", op.expr)
        return node

    def visit_List(self, node: nodes.List) -> nodes.Node:
        self.generic_visit(node)
        return _call("_made", node)

    def visit_Dict(self, node: nodes.Dict) -> nodes.Node:
        self.generic_visit(node)
        return _call("_made", node)

    def visit_Tuple(self, node: nodes.Tuple) -> nodes.Node:
        self.generic_visit(node)
        return _call("_made", node) if node.ctx == "load" else node

    def visit_Output(self, node: nodes.Output) -> nodes.Node:
        self.generic_visit(node)
        node.nodes = [_call("_out", nodes.Const(n.data)) if isinstance(n, nodes.TemplateData) else n
                      for n in node.nodes]
        return node


def _call(name: str, node: nodes.Node) -> nodes.Filter:
    return nodes.Filter(node, name, [], [], None, None, lineno=getattr(node, "lineno", 1) or 1)


def environment() -> jinja2.Environment:
    env = RegistrySandbox(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
        optimized=False,
    )
    env.globals.clear()  # no range, dict, lipsum, cycler, joiner or namespace
    filters = {k: v for k, v in env.filters.items() if k in FILTERS}
    filters["sum"] = _sum
    env.filters = {k: _charged(k, v) for k, v in filters.items()}
    # reachable only through `_Bound` (the check refuses underscored names)
    env.filters.update(_loop=_loop_filter, _tick=_tick, _weighed=_weighed, _made=_made_filter, _out=_out,
                       _concat=_concat)
    env.tests = {k: _charged(k, v) for k, v in env.tests.items() if k in TESTS}
    return env


_ENV = environment()


def template_problems(source: str) -> list[tuple[int, str]]:
    """(template line, problem) for everything a registry template may not do; empty when it may be rendered.

    Syntax errors are reported here too, so nothing is compiled before the check.
    """
    return list(_problems(source))


_PARSED: dict[str, nodes.Template] = {}  # checked trees waiting for `_template`, which takes them (no second parse)


@lru_cache(maxsize=4096)
def _problems(source: str) -> tuple[tuple[int, str], ...]:
    """A template's problems, checked once per process (validate checks every text, then renders the active ones)."""
    try:
        tree = _ENV.parse(source)
    except jinja2.TemplateSyntaxError as e:
        return ((e.lineno, f"template syntax error: {e.message}"),)
    found = tuple(_tree_problems(tree))
    if not found and len(_PARSED) < 4096:
        _PARSED[source] = tree
    return found


def _tree_problems(tree: nodes.Template) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    stored = {n.name for n in tree.find_all(nodes.Name) if n.ctx in ("store", "param")}
    stored |= {"loop"} if any(True for _ in tree.find_all(nodes.For)) else set()
    for node in tree.find_all(nodes.Node):
        line = getattr(node, "lineno", 1) or 1
        kind = next((what for cls, what in _FORBIDDEN_NODES.items() if isinstance(node, cls)), None)
        if kind:
            out.append((line, f"{kind} is not allowed in a registry text"))
        elif isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
            out.append((line, f"attribute {node.attr!r} is not allowed (no underscored names)"))
        elif (isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str)
              and node.arg.value.startswith("_")):
            out.append((line, f"item {node.arg.value!r} is not allowed (no underscored names)"))
        elif isinstance(node, nodes.Name) and node.ctx == "load" and node.name not in NAMES | stored:
            out.append((line, f"unknown name {node.name!r}: a text can use {', '.join(sorted(NAMES))}"))
        elif isinstance(node, nodes.Name) and node.name.startswith("_"):
            out.append((line, f"name {node.name!r} is not allowed (no underscored names)"))
        elif isinstance(node, nodes.Filter) and node.name not in FILTERS:
            out.append((line, f"filter {node.name!r} is not allowed: use one of {', '.join(sorted(FILTERS))}"))
        elif isinstance(node, nodes.Test) and node.name not in TESTS:
            out.append((line, f"test {node.name!r} is not allowed"))
        elif (isinstance(node, nodes.Keyword) and isinstance(node.value, nodes.Const)
              and isinstance(node.value.value, str) and any(p.startswith("_") for p in node.value.value.split("."))):
            out.append((line, f"{node.key}={node.value.value!r} is not allowed (no underscored names)"))
    return sorted(set(out))


class UnsafeTemplate(ValueError):
    """A registry template that does something a text may not (see `template_problems`)."""

    def __init__(self, problems: list[tuple[int, str]]):
        super().__init__("; ".join(f"template line {n}: {p}" for n, p in problems))
        self.problems = problems


@lru_cache(maxsize=4096)
def _template(source: str) -> jinja2.Template:
    """Check, then compile the checked tree (compiling dominates rendering; a source compiles once per process).

    The tree the check parsed is taken from `_PARSED` and bound in place: one parse, no copy (a copy cost
    35 ms of a cold `formula validate`'s 1.05 s)."""
    found = _problems(source)
    if found:
        raise UnsafeTemplate(list(found))
    tree = _PARSED.pop(source, None) or _ENV.parse(source)  # parsed again only when the check's tree was not kept
    return _ENV.from_string(_Bound().visit(tree))


def _inputs(calc: Calculator, units: UnitsFile | None) -> dict[str, InputView]:
    out = {}
    for inp in calc.inputs:
        a = units.analytes.get(inp.analyte) if (units and inp.analyte) else None
        mm = inp.molar_mass if inp.molar_mass is not None else (a.molar_mass if a else None)
        out[inp.name] = InputView(inp, mm, a.valence if a else None)
    return out


def _own(calc: Calculator, units: UnitsFile | None) -> dict[str, Any]:
    return {
        "c": {k: v.value for k, v in calc.constants.items()},
        "label": {k: v.label for k, v in calc.constants.items() if v.label},  # a variant's name beside its number
        "t": {k: TableView(k, v) for k, v in calc.tables.items()},
        "i": _inputs(calc, units),
        "calc": {"name": calc.name, "unit": calc.output.unit or "", "slug": calc.slug,
                 "published_rounding": rounding_words(calc)},
    }


def rounding_words(calc: Calculator) -> str:
    """The publication's rounding rule (output.published_rounding) in words, for `{{ calc.published_rounding }}`."""
    rule = calc.output.published_rounding
    if rule is None:
        return "the precision the result is reported to"
    to = "the nearest whole number" if rule.decimals == 0 else (
        f"{rule.decimals} decimal place{'s' if rule.decimals > 1 else ''}")
    tie = "x.5" if rule.decimals == 0 else "a final 5"
    how = "goes up (away from zero)" if rule.mode == "half_up" else "goes to the even neighbour"
    return f"{to}; a tie ({tie}) {how}"


def dependencies(calc: Calculator, calcs: Mapping[str, Calculator]) -> list[Calculator]:
    """Every calculator `calc` uses, directly or through another, each once."""
    seen: dict[str, Calculator] = {}
    stack = list(calc.depends_on)
    while stack:
        s = stack.pop(0)
        if s in seen or s not in calcs:
            continue
        seen[s] = calcs[s]
        stack.extend(calcs[s].depends_on)
    return list(seen.values())


def render_context(calc: Calculator, calcs: Mapping[str, Calculator] | None = None,
                   units: UnitsFile | None = None) -> dict[str, Any]:
    ctx = _own(calc, units)
    ctx["d"] = {dep.slug: _own(dep, units) for dep in dependencies(calc, calcs or {})}
    ctx["u"] = plain_units(units) if units is not None else {}
    return ctx


def plain_units(units: UnitsFile) -> dict[str, Any]:
    """The units file as plain data for `{{ u.… }}`, dumped once per units object (registry.model_memo, registry.snapshot_extras);
    the templates that read it run in an immutable sandbox, so one dict serves every render."""
    from registry.model_memo import kept

    return kept("units", units, lambda u: u.model_dump())


class TextError(ValueError):
    """A template that does not parse or names something the registry entry lacks."""


_RUNTIME = (jinja2.TemplateError, TypeError, ValueError, ArithmeticError, LookupError, RecursionError, MemoryError)


def _generate(source: str, ctx: dict[str, Any]) -> str:
    """Render, refusing output past MAX_OUTPUT characters as it is made."""
    parts: list[str] = []
    size = 0
    template = _template(source)  # compiling is bounded by the source's size, and not the render's to pay for
    _current().watch = Stopwatch(RENDER_SECONDS)
    for chunk in template.generate(**ctx):
        size += len(chunk)
        if size > MAX_OUTPUT:
            raise SecurityError(f"the template prints more than {MAX_OUTPUT:,} characters: not a registry text")
        parts.append(chunk)
    return "".join(parts)


def _run(source: str, ctx: dict[str, Any], where: str) -> str:
    """Render a checked template; whatever goes wrong is a TextError naming `where`, never a traceback."""
    token = _work.set(_Work())
    try:
        with gc_timed():
            return _generate(source, ctx)
    except UnsafeTemplate as e:
        raise TextError(f"{where}: {e}") from None
    except jinja2.TemplateSyntaxError as e:
        raise TextError(f"{where}: template syntax error at line {e.lineno}: {e.message}") from None
    except jinja2.UndefinedError as e:
        raise TextError(f"{where}: the text names something the registry entry lacks: {e.message}") from None
    except SecurityError as e:
        raise TextError(f"{where}: not allowed in a registry text: {e}") from None
    except (RecursionError, MemoryError) as e:
        raise TextError(f"{where}: not allowed in a registry text: the template needs more "
                        f"{'nesting' if isinstance(e, RecursionError) else 'memory'} than a text may use") from None
    except _RUNTIME as e:
        raise TextError(f"{where}: the template fails when rendered: {type(e).__name__}: {e}") from None
    finally:
        _work.reset(token)


def render(calc: Calculator, version: Version | None = None, *, calcs: Mapping[str, Calculator] | None = None,
           units: UnitsFile | None = None) -> str:
    """Render a version's text (default: the active one) over the calculator and its dependencies."""
    version = version or calc.active
    return _run(version.text, render_context(calc, calcs, units), f"{calc.slug} {version.version}").strip() + "\n"


def render_expression(calc: Calculator, *, calcs: Mapping[str, Calculator] | None = None,
                      units: UnitsFile | None = None) -> str:
    """The one-line formula of `formula.expression`, a template over the same registry numbers."""
    if not calc.formula.expression:
        return ""
    return _run(calc.formula.expression, render_context(calc, calcs, units), f"{calc.slug}: formula.expression").strip()


def text_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------- static analysis


@dataclass(frozen=True)
class References:
    constants: frozenset[str]
    tables: frozenset[str]
    inputs: frozenset[str]
    dependency: frozenset[tuple[str, str, str]]  # (calculator slug, "c"|"t"|"i", name)
    other: frozenset[str]  # references the audit cannot attribute (e.g. c[some_variable])
    labels: frozenset[str] = frozenset()  # constants whose label the text shows ({{ label.NAME }})
    literal: str = ""  # the template's own words, outside every {{ }} and {% %}


def _path(node: nodes.Node) -> list[str] | None:
    """`d["x"].c.y` -> ["d", "x", "c", "y"]; None when a part is computed."""
    if isinstance(node, nodes.Name):
        return [node.name]
    if isinstance(node, nodes.Getattr):
        base = _path(node.node)
        return None if base is None else base + [node.attr]
    if isinstance(node, nodes.Getitem):
        base = _path(node.node)
        if base is None or not (isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str)):
            return None
        return base + [node.arg.value]
    return None


def references(source: str) -> References:
    """What a template refers to, read from jinja2's own syntax tree (no rendering)."""
    tree = _ENV.parse(source)
    found: dict[str, set[str]] = {"c": set(), "t": set(), "i": set(), "label": set()}
    dep: set[tuple[str, str, str]] = set()
    other: set[str] = set()
    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        path = _path(node)
        if path is None:
            root = node
            while isinstance(root, (nodes.Getattr, nodes.Getitem)):
                root = root.node
            if isinstance(root, nodes.Name) and root.name in ("c", "t", "i", "d", "label"):
                other.add(f"{root.name}[...]")
            continue
        if path[0] in found and len(path) >= 2:
            found[path[0]].add(path[1])
        elif path[0] == "d" and len(path) >= 4 and path[2] in found:
            dep.add((path[1], path[2], path[3]))
    literal = "".join(n.data for n in tree.find_all(nodes.TemplateData))
    return References(frozenset(found["c"]), frozenset(found["t"]), frozenset(found["i"]), frozenset(dep),
                      frozenset(other), frozenset(found["label"]), literal)


# ---------------------------------------------------------------------- catalogue


def catalogue_entry(calc: Calculator, text: str) -> dict[str, Any]:
    return {"slug": calc.slug, "medcalc_id": calc.medcalc_id, "name": calc.name, "version": calc.active.version,
            "file": f"{calc.slug}.md", "sha256": text_hash(text)}


def catalogue_files(calcs: Mapping[str, Calculator], units: UnitsFile | None) -> dict[str, str]:
    """The catalogue as file name -> content: one Markdown file per active text, plus index.json."""
    files: dict[str, str] = {}
    entries = []
    with texts_budget():
        for calc in sorted(calcs.values(), key=lambda c: c.slug):
            text = render(calc, calcs=calcs, units=units)
            files[f"{calc.slug}.md"] = text
            entries.append(catalogue_entry(calc, text))
    index = {"format": INDEX_FORMAT,
             "about": "Supplied formula texts rendered from the registry by `formula texts render`. Each entry: "
                      "calculator slug, benchmark id, active text version, file, and the SHA-256 of the rendered "
                      "text. Evaluation runs record (slug, version, sha256) per case to detect stale results.",
             "texts": entries}
    files[INDEX_FILE] = json.dumps(index, indent=2, ensure_ascii=False) + "\n"
    return files


def catalogue_changes(calcs: Mapping[str, Calculator], units: UnitsFile | None, changed: set[str],
                      index_text: str | None) -> dict[str, str]:
    """The catalogue files a change of `changed` calculators rewrites: their texts, the texts of calculators that
    depend on them (a text's inputs are its calculator, its dependencies and the unit data), and index.json with
    the other entries as the current index holds them. Every text is rendered when the index cannot be read or
    lacks a calculator (`catalogue_files`)."""
    try:
        index = json.loads(index_text or "")
        kept = {e["slug"]: e for e in index["texts"]}
    except (ValueError, KeyError, TypeError):
        return catalogue_files(calcs, units)
    if index.get("format") != INDEX_FORMAT or set(kept) - set(calcs) or set(calcs) - set(kept) - changed:
        return catalogue_files(calcs, units)
    redo = _with_dependants(calcs, changed)
    files: dict[str, str] = {}
    with texts_budget():
        for slug in sorted(redo & set(calcs)):
            files[f"{slug}.md"] = text = render(calcs[slug], calcs=calcs, units=units)
            kept[slug] = catalogue_entry(calcs[slug], text)
    index["texts"] = [kept[slug] for slug in sorted(calcs)]
    files[INDEX_FILE] = json.dumps(index, indent=2, ensure_ascii=False) + "\n"
    return files


def _with_dependants(calcs: Mapping[str, Calculator], changed: set[str]) -> set[str]:
    out = set(changed)
    grew = True
    while grew:
        more = {s for s, c in calcs.items() if s not in out and out & set(c.depends_on)}
        out |= more
        grew = bool(more)
    return out


def write_catalogue(calcs: Mapping[str, Calculator], units: UnitsFile | None, out_dir: Path) -> dict[str, Any]:
    """Render every active text into out_dir, one file each, plus index.json (each write atomic); returns the index."""
    from registry.atomic import atomic_write

    files = catalogue_files(calcs, units)
    for name, text in files.items():
        atomic_write(out_dir / name, text)
    index: dict[str, Any] = json.loads(files[INDEX_FILE])
    return index
