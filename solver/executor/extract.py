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

The work is split so that neither the fork server nor a child carries the
markdown parser (its 3 MB would be copied into every fork): the caller runs
`locate_blocks` (CommonMark block parsing, linear in the text, no code run),
and the child applies `extract` (rule 3 parses the reply as Python, which is
why it runs under the child's limits) to the reply and the located block.
"""
from __future__ import annotations

import ast
import warnings

from solver.executor.policy import MAX_REPLY_CHARS, MAX_SOURCE_CHARS

TYPE_CHECKING = False  # `typing` stays out of the fork server (see __init__)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

_PYTHON_INFO = frozenset({"python", "python3", "py", "py3"})
_PYTHON_VERSIONED = ("python3.", "py3.")  # ```python3.11, ```py3.12: a tag naming the Python version
_FENCE_MARKERS = ("```", "~~~")
_BOM = "\ufeff"
_markdown: Any = None


class Prepared:
    """Either a program to run (with its parse tree when extraction already
    parsed it), or the outcome kind/detail that ends it early."""

    __slots__ = ("program", "kind", "detail", "tree")

    def __init__(
        self, program: str | None, kind: str | None = None, detail: str = "", tree: ast.Module | None = None
    ) -> None:
        self.program, self.kind, self.detail, self.tree = program, kind, detail, tree


def _is_python(info: str) -> bool:
    """A fence tag for Python: python, py3, ... or one naming a version (python3.11)."""
    return info in _PYTHON_INFO or any(info.startswith(p) and info[len(p):].isdigit() for p in _PYTHON_VERSIONED)


def strip_bom(reply: str) -> str:
    return reply[1:] if reply.startswith(_BOM) else reply


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


def _defines_solve(code: str) -> bool:
    """A top-level `def solve(` line (cheap, textual: the checker decides for real)."""
    for line in code.splitlines():
        if line.startswith("def solve") and line[len("def solve") :].lstrip().startswith("("):
            return True
    return False


def locate_blocks(reply: str) -> dict[str, Any] | None:
    """Caller side: the fenced blocks of a reply, as {"fences": how many, "block":
    the chosen Python or untagged block or None}; None when the reply has no
    fence marker at all.  Plain data, so it crosses to the child as JSON."""
    if not isinstance(reply, str):
        return None
    reply = strip_bom(reply)
    if not has_fence_marker(reply) or "\x00" in reply or len(reply) > MAX_REPLY_CHARS:
        return None
    try:
        tokens = load_markdown().parse(reply)
    except Exception:  # noqa: BLE001 - a parser failure: the reply is taken as the program
        return None
    fences = [t for t in tokens if t.type == "fence"]
    candidates: list[tuple[bool, str]] = []
    for token in fences:
        words = token.info.strip().split()
        info = words[0].lower() if words else ""
        if _is_python(info) or info == "":
            candidates.append((info != "", token.content))
    chosen = next((code for _, code in candidates if _defines_solve(code)), None)
    if chosen is None:
        chosen = next((code for tagged, code in candidates if tagged), None)
    if chosen is None:
        chosen = next((code for _, code in candidates), None)
    return {"fences": len(fences), "block": None if chosen is None else strip_bom(chosen)}


def _parse_python(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text, filename="<program>", mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def extract(reply: str, located: dict[str, Any] | None) -> tuple[str | None, ast.Module | None]:
    """Child side: (program text or None, its parse tree when rule 3 already
    parsed it), from the reply and what `locate_blocks` found in it."""
    reply = strip_bom(reply)
    if not reply.strip():
        return None, None
    if not has_fence_marker(reply) or "\x00" in reply or not isinstance(located, dict):
        return reply, None  # null bytes: the checker rejects the whole reply
    tree = _parse_python(reply)
    if tree is not None:
        return reply, tree
    block = located.get("block")
    if not located.get("fences"):
        return reply, None
    if not isinstance(block, str) or not block.strip():
        return None, None
    return block, None


def extract_program(reply: str) -> str | None:
    """The program in a reply (see the module docstring), or None."""
    return extract(reply, locate_blocks(reply))[0]


def precheck(reply: Any) -> Prepared | None:
    """Decisions that need no parsing (wrong type, over-long or blank reply);
    None when the reply has to go to a child."""
    if not isinstance(reply, str):
        return Prepared(None, "no_program", f"expected program text, got {type(reply).__name__}")
    if len(reply) > MAX_REPLY_CHARS:
        return Prepared(None, "rejected", f"reply is {len(reply)} characters, over {MAX_REPLY_CHARS}")
    if not strip_bom(reply).strip():
        return Prepared(None, "no_program", "no program in the reply")
    return None


def prepare(reply: Any, located: dict[str, Any] | None) -> Prepared:
    """Extract and size-check a reply; nothing here runs code.  `located` is
    what locate_blocks found in the caller (the child cannot load the parser)."""
    early = precheck(reply)
    if early is not None:
        return early
    program, tree = extract(reply, located)
    if program is None:
        return Prepared(None, "no_program", "no program in the reply")
    if len(program) > MAX_SOURCE_CHARS:
        return Prepared(
            None, "rejected", f"program is {len(program)} characters, over the {MAX_SOURCE_CHARS} limit"
        )
    return Prepared(program, tree=tree)
