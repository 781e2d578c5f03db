"""From a model reply to program text: which code block is the program, and the length cap.

Fenced blocks are found with a CommonMark parser (markdown-it-py, block rules
only), so fences indented in a list item, four-backtick and tilde fences and
truncated replies read as CommonMark says.  The rules, in order:

1. A leading byte-order mark is dropped.
2. A reply with no fence marker at all is the program.
3. A reply that parses as Python as a whole is the program, even when a line
   inside one of its strings or comments starts with three backticks (a fence
   hidden in a docstring must never replace the real program).
4. Otherwise, among the fenced blocks tagged Python or untagged, the first one
   that defines `solve` at the top level; failing that the first tagged
   Python block, then the first untagged one.  So an untagged "expected
   output" block before the code is not run.  A reply whose fences hold no
   Python or untagged block has no program; one with no fenced block at all
   (the markers were inline) is the program.

Steps 3 and 4 parse untrusted text, so they run inside the child process,
under its resource limits (sandbox.child_main); markdown-it-py must then be
imported already (`load_markdown`), because the child cannot open files.
"""
from __future__ import annotations

import ast
import warnings
from typing import Any, NamedTuple

from solver.executor.policy import MAX_REPLY_CHARS, MAX_SOURCE_CHARS

_PYTHON_INFO = frozenset({"python", "python3", "py", "py3"})
_FENCE_MARKERS = ("```", "~~~")
_BOM = "\ufeff"
_markdown: Any = None


class Prepared(NamedTuple):
    """Either a program to run (with its parse tree when extraction already
    parsed it), or the outcome kind/detail that ends it early."""

    program: str | None
    kind: str | None = None
    detail: str = ""
    tree: ast.Module | None = None


def has_fence_marker(reply: str) -> bool:
    """Whether a reply may hold a fenced block (and so needs the markdown parser)."""
    return any(marker in reply for marker in _FENCE_MARKERS)


def load_markdown() -> Any:
    """The CommonMark parser, block rules only (no inline parsing: nothing in a
    reply's prose matters here, and block parsing is linear in the text)."""
    global _markdown
    if _markdown is None:
        from markdown_it import MarkdownIt

        _markdown = MarkdownIt("commonmark").disable("inline")
    return _markdown


def load_markdown_once() -> bool:
    """Load the parser if it is not loaded yet; True when this call loaded it."""
    if _markdown is not None:
        return False
    load_markdown()
    return True


def _parse_python(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text, filename="<program>", mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _defines_solve(code: str) -> bool:
    """A top-level `def solve(` line (cheap, textual: the checker decides for real)."""
    for line in code.splitlines():
        if line.startswith("def solve") and line[len("def solve") :].lstrip().startswith("("):
            return True
    return False


def _fenced_blocks(reply: str) -> tuple[int, list[tuple[bool, str]]]:
    """(number of fenced blocks, [(tagged Python?, content)] of the candidates)."""
    fences = [t for t in load_markdown().parse(reply) if t.type == "fence"]
    candidates: list[tuple[bool, str]] = []
    for token in fences:
        words = token.info.strip().split()
        info = words[0].lower() if words else ""
        if info in _PYTHON_INFO or info == "":
            candidates.append((info != "", token.content))
    return len(fences), candidates


def extract(reply: str) -> tuple[str | None, ast.Module | None]:
    """(program text or None, its parse tree when rule 3 already parsed it)."""
    if reply.startswith(_BOM):
        reply = reply[1:]
    if not reply.strip():
        return None, None
    if not has_fence_marker(reply) or "\x00" in reply:
        return reply, None  # null bytes: the checker rejects the whole reply
    tree = _parse_python(reply)
    if tree is not None:
        return reply, tree
    count, candidates = _fenced_blocks(reply)
    if count == 0:
        return reply, None
    chosen = next((code for _, code in candidates if _defines_solve(code)), None)
    if chosen is None:
        chosen = next((code for tagged, code in candidates if tagged), None)
    if chosen is None:
        chosen = next((code for _, code in candidates), None)
    if chosen is None or not chosen.strip():
        return None, None
    if chosen.startswith(_BOM):
        chosen = chosen[1:]
    return chosen, None


def extract_program(reply: str) -> str | None:
    """The program in a reply (see the module docstring), or None."""
    return extract(reply)[0]


def precheck(reply: Any) -> Prepared | None:
    """Decisions that need no parsing (wrong type, over-long or blank reply);
    None when the reply has to go to a child."""
    if not isinstance(reply, str):
        return Prepared(None, "no_program", f"expected program text, got {type(reply).__name__}")
    if len(reply) > MAX_REPLY_CHARS:
        return Prepared(None, "rejected", f"reply is {len(reply)} characters, over {MAX_REPLY_CHARS}")
    if not reply.lstrip(_BOM).strip():
        return Prepared(None, "no_program", "no program in the reply")
    return None


def prepare(reply: Any) -> Prepared:
    """Extract and size-check a reply; nothing here runs code."""
    early = precheck(reply)
    if early is not None:
        return early
    program, tree = extract(reply)
    if program is None:
        return Prepared(None, "no_program", "no program in the reply")
    if len(program) > MAX_SOURCE_CHARS:
        return Prepared(
            None, "rejected", f"program is {len(program)} characters, over the {MAX_SOURCE_CHARS} limit"
        )
    return Prepared(program, tree=tree)
