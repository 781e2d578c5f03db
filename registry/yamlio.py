"""YAML reading that keeps line numbers and refuses duplicate keys.

PyYAML silently keeps the last of two equal keys; in a registry that would hide an edit, so
the loader here raises instead. Mappings and lists come back as `dict`/`list` subclasses that
remember the line of each key or item, so a schema error can be reported as `path:line`.

Registry files are untrusted, so reading one is bounded before anything is built: a file over
`MAX_BYTES` (or not a regular file) is refused, and so is a document whose aliases would expand
it by more than `MAX_ALIAS_EXPANSION` nodes (a "billion laughs" bomb of a few kilobytes). The
round-trip reader (ruamel.yaml) checks the same bounds first.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

# PyYAML is imported when a file is first parsed or dumped, not with this module: a warm read-only command starts
# from the registry's snapshot (registry.snapshot), whose line-keeping dicts and lists are defined here, and parses
# no YAML (measured 12 ms of such a command's 0.25 s for `import yaml`)


class LineDict(dict):
    line: int = 0
    key_lines: dict[Any, int]


class LineList(list):
    line: int = 0
    item_lines: list[int]


class YamlError(Exception):
    """A YAML file that cannot be read as data; carries the file and line."""

    def __init__(self, path: Path | str, line: int, problem: str):
        super().__init__(f"{path}:{line}: {problem}")
        self.path = str(path)
        self.line = line
        self.problem = problem


def _construct_mapping(loader: Any, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise YamlError("", key_node.start_mark.line + 1, "a mapping key must be a plain value") from None
        if key in out:
            raise YamlError(
                "",
                key_node.start_mark.line + 1,
                f"duplicate key {key!r} (first at line {out.key_lines[key]}); remove one of them",
            )
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


def _construct_sequence(loader: Any, node: yaml.SequenceNode) -> LineList:
    out = LineList(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    out.item_lines = [child.start_mark.line + 1 for child in node.value]
    return out


def _construct_timestamp(loader: Any, node: yaml.ScalarNode) -> Any:
    # An impossible date such as 2026-13-01 stays a string, so the schema reports it with its line.
    import yaml

    try:
        return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    except (ValueError, TypeError, AttributeError):  # PyYAML fails on a `!!timestamp` tag over a non-date
        return loader.construct_scalar(node)


def _scalar(kind: str, construct: Any) -> Any:
    """PyYAML's own constructor of a scalar, its errors (an integer past Python's 4,300-digit limit, a
    malformed `!!int`) reported as problems at the scalar's line instead of a ValueError."""
    def run(loader: Any, node: yaml.ScalarNode) -> Any:
        try:
            return construct(loader, node)
        except (ValueError, TypeError, OverflowError) as e:
            why = str(e).split(";")[0]  # Python's advice on its own limit is not the file author's
            raise YamlError("", node.start_mark.line + 1, f"cannot read this {kind} ({why}): write a plain "
                            "number of at most 4,300 digits") from None
    return run


@lru_cache(maxsize=1)
def _loader() -> Any:
    """The safe loader (PyYAML's C one where it is built) that keeps lines and refuses duplicate keys."""
    import yaml

    class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        pass

    safe = yaml.constructor.SafeConstructor
    _Loader.add_constructor("tag:yaml.org,2002:int", _scalar("integer", safe.construct_yaml_int))
    _Loader.add_constructor("tag:yaml.org,2002:float", _scalar("number", safe.construct_yaml_float))
    _Loader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
    _Loader.add_constructor("tag:yaml.org,2002:seq", _construct_sequence)
    _Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)
    return _Loader


MAX_BYTES = 2_000_000  # the largest registry file is about 30 kB
MAX_ALIAS_EXPANSION = 10_000  # nodes aliases may add when expanded (registry files use none)


def _expanded_size(root: yaml.Node) -> int:
    """How many nodes the document has with every alias expanded, counted over the shared graph (linear time)."""
    sizes: dict[int, int] = {}
    order: list[yaml.Node] = []
    stack, seen = [root], set()
    while stack:  # children before parents, each node once (no recursion: depth is bounded by the file only)
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        stack.extend(_children(node))
    for node in reversed(order):
        sizes[id(node)] = 1 + sum(sizes.get(id(c), 1) for c in _children(node))
    return sizes[id(root)] - len(order)  # what the aliases add


def _children(node: yaml.Node) -> list[yaml.Node]:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    return []


def check_text(text: str, path: Path | str = "<string>") -> yaml.Node | None:
    """Refuse a document too large or whose aliases expand too far; returns its composed node graph."""
    if len(text) > MAX_BYTES:
        raise YamlError(path, 1, f"the file is larger than {MAX_BYTES:,} bytes: not a registry file")
    loader = _loader()(text)
    try:
        node = loader.get_single_node()
    except RecursionError:
        raise YamlError(path, 1, "malformed YAML: nested too deeply") from None
    finally:
        loader.dispose()
    if node is not None and "&" in text and _expanded_size(node) > MAX_ALIAS_EXPANSION:  # no anchor, no alias
        raise YamlError(path, 1, f"its aliases (*name) would expand it by more than {MAX_ALIAS_EXPANSION:,} "
                        "nodes (an alias bomb?): write the values out; registry files need no aliases")
    return node


def load_text(text: str, path: Path | str = "<string>") -> Any:
    import yaml

    try:
        node = check_text(text, path)
        if node is None:
            return None
        loader = _loader()("")
        try:
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except RecursionError:
        raise YamlError(path, 1, "malformed YAML: nested too deeply") from None
    except YamlError as e:
        raise YamlError(path, e.line, e.problem) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        raise YamlError(path, line, f"malformed YAML: {e.problem or e.context}") from None
    except yaml.YAMLError as e:
        raise YamlError(path, 1, f"malformed YAML: {e}") from None
    except (ValueError, TypeError, ArithmeticError) as e:  # any other constructor's error: still a problem, not a traceback
        raise YamlError(path, 1, f"cannot read a value: {e}") from None


def read_text(path: Path) -> str:
    """A registry file's text, refused unread when it is no regular file or over `MAX_BYTES`."""
    from registry.plain_files import FileRefused, read_bytes

    try:
        blob = read_bytes(path, MAX_BYTES)
    except FileNotFoundError:
        raise YamlError(path, 1, "no such file") from None
    except FileRefused as e:
        raise YamlError(path, 1, e.why) from None
    if len(blob) > MAX_BYTES:
        raise YamlError(path, 1, f"the file is larger than {MAX_BYTES:,} bytes: not a registry file")
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError as e:
        raise YamlError(path, 1, f"not UTF-8 text ({e.reason})") from None


def load_file(path: Path) -> Any:
    return load_text(read_text(path), path)


def line_of(data: Any, loc: tuple[Any, ...]) -> int:
    """The line of the deepest part of `loc` that exists in `data` (a pydantic error location)."""
    line = getattr(data, "line", 1)
    node = data
    for part in loc:
        if isinstance(node, LineDict) and part in node:
            line = node.key_lines.get(part, line)
            node = node[part]
        elif isinstance(node, LineList) and isinstance(part, int) and 0 <= part < len(node):
            line = node.item_lines[part]
            node = node[part]
        else:
            break
    return line


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _list(dumper: yaml.SafeDumper, value: list) -> yaml.SequenceNode:
    # short lists of plain values (options, units, ranges) read best on one line
    flat = all(isinstance(v, (str, int, float)) and not isinstance(v, bool) and "\n" not in str(v) for v in value)
    flow = bool(value) and flat and sum(len(str(v)) + 2 for v in value) <= 80
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


@lru_cache(maxsize=1)
def _dumper() -> Any:
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    _Dumper.add_representer(str, _str)
    _Dumper.add_representer(list, _list)
    _Dumper.add_representer(LineDict, _Dumper.represent_dict)
    _Dumper.add_representer(LineList, _list)
    return _Dumper


def dump(data: Any) -> str:
    """Plain, stable YAML for files the tools write (unicode and key order kept, texts as blocks)."""
    import yaml

    return yaml.dump(_plain(data), Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=100)


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


# --------------------------------------------------------------------------- round-trip editing
#
# Tools that edit a file a person wrote (fix, release, review, approve) go through ruamel.yaml's
# round-trip mode, which keeps comments, key order and quoting. It re-wraps long plain scalars
# at its own width, so a hunk whose only difference is where a long scalar breaks keeps the
# original lines; the result is re-read and must equal what ruamel wrote, or ruamel's text is used.


def _rt() -> Any:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.width = 100
    y.indent(mapping=2, sequence=2, offset=0)
    y.preserve_quotes = True
    y.allow_duplicate_keys = False
    y.representer.ignore_aliases = lambda data: True  # never write anchors (&id001) or aliases
    return y


def rt_load(path: Path) -> Any:
    """A calculator file as ruamel's commented mapping (comments and order kept)."""
    text = read_text(path)
    load_text(text, path)  # the registry reader's bounds and checks, before ruamel builds anything
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        data = _rt().load(text)
    except MarkedYAMLError as e:  # ruamel is stricter than PyYAML in places (a tab after `key:`)
        mark = e.problem_mark or e.context_mark
        raise YamlError(path, mark.line + 1 if mark else 1, f"malformed YAML for the editor: {e.problem or e.context}"
                        ) from None
    except (YAMLError, ValueError, TypeError, RecursionError) as e:
        raise YamlError(path, 1, f"malformed YAML for the editor: {e}") from None
    if not isinstance(data, dict):
        raise YamlError(path, 1, "empty file or not a mapping of fields: a calculator file needs its fields")
    return data


def block(text: str) -> Any:
    """A string as a literal block (`|`) when it spans lines, as texts are written."""
    from ruamel.yaml.scalarstring import LiteralScalarString

    return LiteralScalarString(text) if "\n" in text else text


def rt_dump(data: Any, original: str | None = None) -> str:
    import io

    buf = io.StringIO()
    _rt().dump(data, buf)
    new = buf.getvalue()
    if original is None:
        return new
    kept = _keep_wrapping(original, new)
    if kept != new:
        try:
            same = _plain(load_text(kept)) == _plain(load_text(new))
        except YamlError:
            same = False
        if same:
            return kept
    return new


def _keep_wrapping(old: str, new: str) -> str:
    import difflib

    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "replace" and " ".join("".join(a[i1:i2]).split()) == " ".join("".join(b[j1:j2]).split()):
            out.extend(a[i1:i2])
        else:
            out.extend(b[j1:j2])
    return "".join(out)
