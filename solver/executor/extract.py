"""From a model reply to program text: fenced-block extraction and the length cap.

Pure string handling, no regular expressions (linear time on any input).
"""
from __future__ import annotations

from dataclasses import dataclass

from solver.executor.policy import MAX_REPLY_CHARS, MAX_SOURCE_CHARS

_PYTHON_INFO = frozenset({"", "python", "python3", "py", "py3"})


@dataclass(frozen=True)
class Prepared:
    """Either a program to run, or the outcome kind/detail that ends it early."""

    program: str | None
    kind: str | None = None
    detail: str = ""


def extract_program(reply: str) -> str | None:
    """The program in a reply: the first Python fenced block, else the whole text.

    A block is opened by a line starting with three backticks whose info string
    is empty or names Python, and closed by the next line starting with three
    backticks (or the end of the reply, for a truncated answer).  A reply that
    has fences but no Python block has no program.
    """
    if "```" not in reply:
        return reply if reply.strip() else None
    lines = reply.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith("```"):
            info = stripped[3:].strip().lower()
            info = info.split()[0] if info else ""
            end = i + 1
            while end < len(lines) and not lines[end].lstrip().startswith("```"):
                end += 1
            if info in _PYTHON_INFO:
                body = "".join(lines[i + 1 : end])
                return body if body.strip() else None
            i = end + 1  # skip the non-Python block, closing fence included
        else:
            i += 1
    return None


def prepare(reply: str) -> Prepared:
    """Extract and size-check a reply; nothing here runs or parses code."""
    if not isinstance(reply, str):
        return Prepared(None, "no_program", f"expected program text, got {type(reply).__name__}")
    if len(reply) > MAX_REPLY_CHARS:
        return Prepared(None, "rejected", f"reply is {len(reply)} characters, over {MAX_REPLY_CHARS}")
    program = extract_program(reply)
    if program is None:
        return Prepared(None, "no_program", "no program in the reply")
    if len(program) > MAX_SOURCE_CHARS:
        return Prepared(
            None, "rejected", f"program is {len(program)} characters, over the {MAX_SOURCE_CHARS} limit"
        )
    return Prepared(program)
