"""JSON text from outside (run files, logs, imports, the lock, requests) read with every refusal in words, and
bounded by what it would build.

`json.loads` refuses a text in three ways: a syntax error (JSONDecodeError), an integer past Python's
4,300-digit limit (a plain ValueError) and nesting past the recursion limit (RecursionError). Each
reader used to catch only the first, so the other two escaped as tracebacks; here all three become
`JsonError`, whose message says what is wrong and where.

Bytes alone do not bound memory: 60 MB of `[{},{},...]` is 20 million dictionaries (1.6 GB). So before
anything is built, the text's values are counted (its commas and brackets outside strings, counted by the
regular-expression engine, never by a Python loop over characters) and charged to a `Budget`; a text over
it, or nested deeper than `MAX_DEPTH`, is refused unparsed. One budget may be shared by every line of a
file, so a file of many small hostile lines is bounded too. `strict=True` also refuses duplicate keys and
NaN/Infinity, for data where either would carry meaning (the lock, imported rows).
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterator

MAX_DEPTH = 128  # nesting levels; a results row uses 4
MAX_ITEMS = 2_000_000  # values one budget may build (at most about 80 bytes each); a shipped results file has 120,000
LINE_MAX = 1 << 20  # bytes in one results or log line; a shipped results line has under 2,500
RESULTS_MAX = 64 << 20  # bytes in one results file (1,100 cases x 5 seeds with replies is about 30 MB)
LOCK_MAX = 1 << 20  # bytes in REGISTRY.lock (the shipped one has 16 kB)
LOG_MAX = 64 << 20  # bytes in one imported log, JSON-lines file or archive member, uncompressed
_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_BYTE_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
CHUNK = 1 << 20  # characters of text whose strings are removed at once (registry.jsontext._pieces)
# The longest run of whole strings and text outside strings: where a piece may be cut. Possessive, so the engine
# keeps no backtracking stack over a long run.
_PREFIX = re.compile(r'(?:[^"]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+', re.DOTALL)
_BYTE_PREFIX = re.compile(rb'(?:[^"]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")
_BYTE_BRACKETS = re.compile(rb"[\[\]{}]")


class JsonError(ValueError):
    """A text that is not JSON this tool can read; the message says why (line and column where known)."""


class OverBudget(JsonError):
    """A text (or the file it is a line of) that would build more values than its budget allows."""


class TooDeep(JsonError):
    """A text nested deeper than its reader allows."""


class Budget:
    """How many more JSON values (containers, elements, keys) the readers sharing it may build."""

    def __init__(self, items: int = MAX_ITEMS) -> None:
        self.limit = items
        self.left = items

    def spend(self, n: int) -> None:
        if n > self.left:
            raise OverBudget(f"more than {self.limit:,} JSON values: over what one file may hold (is it a "
                            "generated or damaged file?)")
        self.left -= n


def _pieces(text: str | bytes) -> Iterator[str | bytes]:
    """The text's skeleton (every string removed: numbers, literals, brackets, commas and colons are left), a
    piece of at most `CHUNK` characters of text at a time, each cut outside a string, so the regular-expression
    engine never holds the fragments of more than one piece (60 MB of `"a",` would be 15 million of them)."""
    string: Any
    prefix: Any
    empty: Any
    if isinstance(text, (bytes, bytearray)):
        string, prefix, empty = _BYTE_STRING, _BYTE_PREFIX, b""
    else:
        string, prefix, empty = _STRING, _PREFIX, ""
    pos, end = 0, len(text)
    while pos < end:
        stop = prefix.match(text, pos, min(end, pos + CHUNK)).end()  # the pattern matches at least ""
        if stop == pos:  # a string longer than a piece starts here (or one that never ends): nothing to count
            whole = string.match(text, pos)
            pos = whole.end() if whole else end
            continue
        yield string.sub(empty, text[pos:stop])
        pos = stop


def _deepest(skeleton: str | bytes, depth: int) -> int:
    """The deepest nesting reached in `skeleton`, entered at `depth` (a loop over its brackets only)."""
    found = _BYTE_BRACKETS.finditer(skeleton) if isinstance(skeleton, (bytes, bytearray)) else \
        _BRACKETS.finditer(skeleton)
    deepest = depth
    for m in found:
        if m.group() in ("[", "{", b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def check(text: str | bytes, budget: Budget | None = None, max_depth: int = MAX_DEPTH) -> None:
    """Refuse, unparsed, a text that would build more values than `budget` allows or nest past `max_depth`:
    the values are its commas, colons and opening brackets outside strings, plus one."""
    budget = budget or Budget()
    budget.spend(1)
    depth = 0
    for piece in _pieces(text):
        marks = ("[", "{", ",", ":", "]", "}") if isinstance(piece, str) else (b"[", b"{", b",", b":", b"]", b"}")
        n = [piece.count(m) for m in marks]  # type: ignore[arg-type]
        budget.spend(n[0] + n[1] + n[2] + n[3])
        if depth + n[0] + n[1] > max_depth and _deepest(piece, depth) > max_depth:
            raise TooDeep("nested too deeply")
        depth += n[0] + n[1] - n[4] - n[5]


def _no_constant(name: str) -> Any:
    raise JsonError(f"{name} is not a number JSON allows; write a finite number or null")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JsonError(f"duplicate key {key!r}; remove one of them")
        out[key] = value
    return out


def loads(text: str | bytes, *, budget: Budget | None = None, max_depth: int = MAX_DEPTH, strict: bool = False,
          unique: bool = False, **kwargs: Any) -> Any:
    """`json.loads` within a budget of values and depth; every refusal a `JsonError`. `unique` refuses a duplicate
    key; `strict` also NaN and Infinity."""
    check(text, budget, max_depth)
    if strict or unique:
        kwargs.setdefault("object_pairs_hook", _unique)
    if strict:
        kwargs.setdefault("parse_constant", _no_constant)
    try:
        return json.loads(text, **kwargs)
    except json.JSONDecodeError as e:
        raise JsonError(f"{e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise TooDeep("nested too deeply") from None
    except JsonError:
        raise
    except ValueError as e:
        if "integer string conversion" in str(e):
            raise JsonError("an integer of more than 4,300 digits") from None
        raise JsonError(str(e)) from None


class LineError(JsonError):
    """One line of a JSON-lines file that is not a JSON value this tool reads; `line` is its number."""

    def __init__(self, line: int, why: str) -> None:
        super().__init__(why)
        self.line = line


def read_lines(path: Any, *, line_limit: int = LINE_MAX, file_limit: int = RESULTS_MAX,
               budget: Budget | None = None, strict: bool = False) -> Iterator[tuple[int, Any]]:
    """(line number, value) for every non-blank line of the plain file `path`, read a line at a time within one
    budget for the whole file. LineError for the first line that is too long, not UTF-8 or not JSON; OSError
    (registry.plain_files.FileRefused, naming the file) for a link, a special file or a file over `file_limit`."""
    from registry.plain_files import lines

    budget = budget or Budget()
    for n, raw in lines(path, line_limit, file_limit):
        if raw is None:
            raise LineError(n, f"over {line_limit:,} bytes, more than one line may hold")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise LineError(n, f"not UTF-8 text ({e.reason})") from None
        if not text.strip():
            continue
        try:
            value = loads(text, budget=budget, strict=strict)
        except JsonError as e:
            raise LineError(n, str(e)) from None
        yield n, value


def read_file(path: Any, limit: int = LOCK_MAX, what: str = "file", *, strict: bool = False,
              unique: bool = False) -> Any:
    """The JSON value of the plain file `path`, refused unread when over `limit` bytes: OSError (FileRefused,
    naming the file) for a link, a special or too big a file; JsonError when it is not UTF-8 JSON."""
    from registry.plain_files import read_capped

    try:
        text = read_capped(path, limit, what).decode("utf-8")
    except UnicodeDecodeError as e:
        raise JsonError(f"not UTF-8 text ({e.reason})") from None
    return loads(text, strict=strict, unique=unique)
