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


def _columns(stream: IO[str]) -> int | None:
    """The width of the terminal `stream` writes to ($COLUMNS first, as for tables); None when it is not one."""
    import os
    import shutil

    isatty = getattr(stream, "isatty", None)
    if not (isatty and isatty()):
        return None
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    return shutil.get_terminal_size().columns


def fit(text: str, width: int) -> str:
    """Each line of `text` wrapped at spaces to `width` (continuations indented two more spaces than the
    line); words are never split, at a hyphen or anywhere else, so a path or command stays whole."""
    import textwrap

    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip(" "))]
        out += textwrap.wrap(line, width, subsequent_indent=indent + "  ", break_on_hyphens=False,
                             break_long_words=False, drop_whitespace=True) or [line]
    return "\n".join(out)


def tell(text: Any = "", *, file: IO[str] | None = None) -> None:
    """`say` for a message (an error, a note, what a command did): on a terminal its lines are wrapped to the
    terminal's width, so nothing runs past 80 columns there; into a file or pipe it is written as it is."""
    stream = file if file is not None else sys.stdout
    line = printable(text, multiline=True)
    width = _columns(stream)
    say(fit(line, width) if width else line, file=stream)


def install_hint(extra: str) -> str:
    """How to install an optional extra, in the words the README uses (one place: every hint agrees with it)."""
    return f"pip install -e '.[{extra}]'"
