"""Static analysis of a program before anything of it runs.

The checker is an allow-list over AST node types: a node type that is not
listed here rejects the program, so a Python release that adds syntax fails
closed.  It walks the tree iteratively (no recursion limit to hit) and the
caller compiles the very tree that was checked, so what runs is what was read.
Identifiers in the AST are already NFKC-normalised by the parser, so look-alike
spellings of underscored names are caught by the same rules.  What syntax is
accepted depends on the policy (`paper` or `clinical`, see policy.py).
"""
from __future__ import annotations

import ast
import string  # here, not in plain_format: the checker also runs in a child that cannot open files
import warnings

TYPE_CHECKING = False  # `typing` stays out of the fork server (see __init__)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Iterable

from solver.executor.policy import (
    ALL_ATTRIBUTES,
    ALLOWED_MODULES,
    CLINICAL,
    FORBIDDEN_NAMES,
    FORMAT_METHOD_ATTRIBUTES,
    MODULE_ATTRIBUTES,
    Policy,
)


class Rejected(Exception):
    """A program is not run; `reason` is the message reported as `detail`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# Node types that are allowed; some get extra checks below.
_ALLOWED_NODES: frozenset[type] = frozenset(
    {
        ast.Module, ast.FunctionDef, ast.Return, ast.Delete, ast.Assign, ast.AugAssign,
        ast.AnnAssign, ast.For, ast.While, ast.If, ast.Raise, ast.Try, ast.Assert,
        ast.Import, ast.ImportFrom, ast.Expr, ast.Pass, ast.Break, ast.Continue, ast.Match,
        ast.BoolOp, ast.NamedExpr, ast.BinOp, ast.UnaryOp, ast.Lambda, ast.IfExp, ast.Dict,
        ast.Set, ast.ListComp, ast.SetComp, ast.DictComp, ast.Compare, ast.Call, ast.Constant,
        ast.Attribute, ast.Subscript, ast.Starred, ast.Name, ast.List, ast.Tuple, ast.Slice,
        ast.arguments, ast.arg, ast.keyword, ast.alias, ast.comprehension, ast.ExceptHandler,
        ast.match_case, ast.MatchValue, ast.MatchSingleton, ast.MatchSequence,
        ast.MatchMapping, ast.MatchClass, ast.MatchStar, ast.MatchAs, ast.MatchOr,
        ast.Load, ast.Store, ast.Del,
        ast.And, ast.Or, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Mod, ast.Pow, ast.LShift,
        ast.RShift, ast.BitOr, ast.BitXor, ast.BitAnd, ast.FloorDiv, ast.MatMult,
        ast.Invert, ast.Not, ast.UAdd, ast.USub,
        ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In,
        ast.NotIn,
    }
)
_FORMATTING_NODES: frozenset[type] = frozenset({ast.JoinedStr, ast.FormattedValue})

# Node types with a specific reason (they would be rejected anyway as unknown).
_NAMED_REJECTIONS: dict[str, str] = {
    "AsyncFunctionDef": "async syntax is not allowed",
    "AsyncFor": "async syntax is not allowed",
    "AsyncWith": "async syntax is not allowed",
    "Await": "async syntax is not allowed",
    "Yield": "generators (yield) are not allowed",
    "YieldFrom": "generators (yield from) are not allowed",
    "GeneratorExp": "generator expressions are not allowed; use a list comprehension",
    "JoinedStr": "string formatting (f-strings) is not allowed",
    "FormattedValue": "string formatting (f-strings) is not allowed",
    "Global": "global statements are not allowed",
    "Nonlocal": "nonlocal statements are not allowed",
    "ClassDef": "class definitions are not allowed",
    "With": "with statements are not allowed",
    "TryStar": "except* is not allowed",
}


def parse(source: str) -> ast.Module:
    """Parse program text; a SyntaxWarning (say `"\\d"`) is not an error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source, filename="<program>", mode="exec")
    except SyntaxError as exc:
        raise Rejected(f"does not parse: {exc.msg} (line {exc.lineno})") from None
    except ValueError as exc:  # e.g. null bytes
        raise Rejected(f"does not parse: {exc}") from None
    except (RecursionError, MemoryError):
        raise Rejected("does not parse: too deeply nested to analyse") from None


def check(source: str, policy: Policy = CLINICAL, tree: ast.Module | None = None) -> ast.Module:
    """Parse (unless `tree` is already the parse of `source`) and check under
    `policy`; return the checked tree or raise Rejected."""
    if tree is None:
        tree = parse(source)
    try:
        check_tree(tree, policy)
    except (RecursionError, MemoryError):
        raise Rejected("too deeply nested to analyse") from None
    return tree


def check_tree(tree: ast.Module, policy: Policy = CLINICAL) -> None:
    """Apply every rule to a parsed module; raise Rejected on the first violation."""
    nodes = _nodes(tree)
    module_aliases = _module_aliases(nodes)
    for node in nodes:
        _check_node(node, module_aliases, policy)
    _check_solve(tree)


def _nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of the tree in source order (each node before its children,
    children in field order, as ast.iter_child_nodes gives them), walked once
    and iteratively, for both the alias pass and the rules."""
    order: list[ast.AST] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        order.append(node)
        children: list[ast.AST] = []
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                children.append(value)
            elif isinstance(value, list):
                children.extend([item for item in value if isinstance(item, ast.AST)])
        children.reverse()
        stack.extend(children)
    return order


def compile_checked(tree: ast.Module) -> object:
    """Compile a checked tree; a compiler failure rejects the program."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile(tree, "<program>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise Rejected(f"does not compile: {exc.msg} (line {exc.lineno})") from None
    except (RecursionError, MemoryError, ValueError, TypeError) as exc:
        raise Rejected(f"does not compile: {type(exc).__name__}") from None


# --- rules ------------------------------------------------------------------


def _check_solve(tree: ast.Module) -> None:
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "solve"]
    if not defs:
        raise Rejected("no top-level `def solve():` in the program")
    for fn in defs:
        a = fn.args
        if a.posonlyargs or a.args or a.vararg or a.kwonlyargs or a.kwarg:
            raise Rejected("`solve` must take no parameters")


def _module_aliases(nodes: list[ast.AST]) -> dict[str, str]:
    """Names that can only mean an allowed module, name -> module.

    A name bound by `import m [as n]` and by nothing else (no assignment, no
    `from m import n`, no def, parameter or capture of the same name, no second
    module) is a module everywhere; its attributes are checked against that
    module's own list.  Any other receiver gets the looser union check, and the
    module views enforce the exact lists at run time.
    """
    imported: dict[str, set[str]] = {}
    other: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                imported.setdefault(alias.asname or alias.name, set()).add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            other.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            other.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(node.name)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            other.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            other.add(node.rest)
    return {
        name: next(iter(modules))
        for name, modules in imported.items()
        if len(modules) == 1 and name not in other and next(iter(modules)) in ALLOWED_MODULES
    }


def _identifier(name: str | None, what: str, policy: Policy, load: bool = False) -> None:
    if name is None:
        return
    if name.startswith("_"):
        # `clinical` accepts `_` and `_x` (ordinary variables; the restricted
        # builtins hold no such name) and reading `__name__`; dunder names
        # (__builtins__, __import__, ...) stay out in every policy.
        ok = policy.underscore_names and (not name.startswith("__") or (load and name == "__name__"))
        if not ok:
            raise Rejected(f"{what} {name!r} starts with an underscore")
    reason = FORBIDDEN_NAMES.get(name)
    if reason is None and name == "format" and not policy.string_formatting:
        reason = "string formatting"
    if reason is not None:
        raise Rejected(f"{reason}: the name {name!r} is not allowed")


def plain_format(text: str) -> bool:
    """Whether every replacement field of a format string is plain: automatic, numbered or named (`{}`, `{0}`,
    `{x}`), with an optional `!r`/`!s` and a spec holding no nested field (`{:.2f}`, not `{:{w}}`). Attribute and
    index access (`{0.__class__}`, `{x[0]}`) is what makes `str.format` reach objects; a plain field cannot."""
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError:
        return False
    for _, field, spec, conversion in fields:
        if field is None:
            continue
        if not (field == "" or field.isdigit() or (field.isidentifier() and not field.startswith("_"))):
            return False
        if conversion not in (None, "r", "s") or (spec and ("{" in spec or "}" in spec)):
            return False
    return True


def _attribute(name: str, receiver: ast.AST | None, aliases: dict[str, str], policy: Policy) -> None:
    if name.startswith("_"):
        raise Rejected(f"attribute {name!r} starts with an underscore")
    if name == "format" and policy.string_formatting and isinstance(receiver, ast.Constant) and \
            isinstance(receiver.value, str):
        if plain_format(receiver.value):
            return
        raise Rejected("string formatting: `.format` on a string whose fields reach attributes or items, or "
                       "nest a field in a spec; use plain fields ({}, {0}, {x}, {:.2f}) or an f-string")
    if name in FORMAT_METHOD_ATTRIBUTES or (name == "strftime" and not policy.string_formatting):
        raise Rejected(f"string formatting: attribute {name!r} is not allowed")
    if isinstance(receiver, ast.Name) and receiver.id in aliases:
        module = aliases[receiver.id]
        if name not in MODULE_ATTRIBUTES[module]:
            raise Rejected(f"attribute {module}.{name} is not allowed")
        return
    if name not in ALL_ATTRIBUTES and name not in policy.attributes:
        raise Rejected(f"attribute {name!r} is not allowed")


def _import_names(names: Iterable[ast.alias], module: str | None, policy: Policy) -> None:
    for alias in names:
        if alias.name == "*":
            raise Rejected(f"`from {module} import *` is not allowed")
        if module is None:  # plain `import x`
            if alias.name not in policy.modules:
                raise Rejected(f"import of {alias.name!r} is not allowed")
        elif alias.name not in MODULE_ATTRIBUTES[module]:
            raise Rejected(f"attribute {module}.{alias.name} is not allowed")
        _identifier(alias.asname, "name", policy)


def _check_node(node: ast.AST, aliases: dict[str, str], policy: Policy) -> None:  # noqa: C901  one case per AST node kind
    kind = type(node)
    if kind not in _ALLOWED_NODES:
        accepted = (kind is ast.GeneratorExp and policy.generator_expressions) or (
            kind in _FORMATTING_NODES and policy.string_formatting
        )
        if not accepted:
            name = kind.__name__
            raise Rejected(_NAMED_REJECTIONS.get(name, f"unsupported syntax: {name}"))
    if kind is ast.Name:
        _identifier(node.id, "name", policy, load=isinstance(node.ctx, ast.Load))
    elif kind is ast.Attribute:
        if not isinstance(node.ctx, ast.Load):
            raise Rejected(f"assigning or deleting attribute {node.attr!r} is not allowed")
        _attribute(node.attr, node.value, aliases, policy)
    elif kind is ast.FunctionDef:
        if node.decorator_list:
            raise Rejected("decorators are not allowed")
        _identifier(node.name, "function name", policy)
    elif kind is ast.arg:
        _identifier(node.arg, "parameter", policy)
    elif kind is ast.keyword:
        _identifier(node.arg, "keyword argument", policy)
    elif kind is ast.Import:
        _import_names(node.names, None, policy)
    elif kind is ast.ImportFrom:
        if node.level:
            raise Rejected("relative imports are not allowed")
        if node.module not in policy.modules:
            raise Rejected(f"import from {node.module!r} is not allowed")
        _import_names(node.names, node.module, policy)
    elif kind is ast.BinOp:
        if not policy.string_formatting and isinstance(node.op, ast.Mod) and isinstance(
            node.left, (ast.JoinedStr, ast.Constant)
        ):
            if isinstance(node.left, ast.JoinedStr) or isinstance(node.left.value, (str, bytes)):
                raise Rejected("string formatting (%) is not allowed")
    elif kind is ast.ExceptHandler:
        _identifier(node.name, "name", policy)
    elif kind is ast.comprehension:
        if node.is_async:
            raise Rejected("async syntax is not allowed")
    elif kind is ast.MatchClass:
        for attr in node.kwd_attrs:
            _attribute(attr, None, aliases, policy)
    elif kind is ast.MatchMapping:
        _identifier(node.rest, "name", policy)
    elif kind in (ast.MatchAs, ast.MatchStar):
        _identifier(node.name, "name", policy)
