"""Text for a terminal: the one place control characters are made visible.

Registry files, answer records and model-written programs are untrusted, and much of what the
commands print comes from them (a calculator name, a reviewer's name given to `formula review
--by`, a program's exception text). An ANSI sequence in any of those could clear the screen and
draw a fake answer, a carriage return could overwrite a line, a bidi override could reorder it.
Every human-facing line goes through `printable` (or `say`): control, format, surrogate,
private-use, unassigned and line/paragraph-separator characters become visible backslash
escapes. Newline and tab are kept where the caller asks (`multiline=True`), since a command's own
multi-line output needs them; everything else the tool prints itself is plain text.
JSON output needs no escaping: `json.dumps` writes every C0 control as `\\u00XX`.
"""
from __future__ import annotations

import sys
import unicodedata
from typing import IO, Any

UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp", "Co", "Cn"})
_KEPT = frozenset("\n\t")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: Any, *, multiline: bool = False) -> str:
    """`text` (any value, as `str`) with every unsafe character escaped; `multiline` keeps newline and tab."""
    s = text if isinstance(text, str) else str(text)
    if s.isprintable():  # fast path: no character of the unsafe categories (nor any other separator)
        return s
    out = []
    for char in s:
        if multiline and char in _KEPT:
            out.append(char)
        elif char == " " or unicodedata.category(char) not in UNSAFE_CATEGORIES:
            out.append(char)
        else:
            out.append(_escape(char))
    return "".join(out)


def say(text: Any = "", *, file: IO[str] | None = None) -> None:
    """Print `text` (newlines and tabs kept, every other control escaped); falls back to backslash escapes
    on a terminal whose encoding cannot show a character."""
    stream = file if file is not None else sys.stdout
    line = printable(text, multiline=True)
    try:
        print(line, file=stream)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "ascii"
        print(line.encode(encoding, "backslashreplace").decode(encoding), file=stream)
