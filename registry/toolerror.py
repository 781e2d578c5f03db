"""The tool error every command raises for bad arguments or state (`registry.cliutil` re-exports it).

A module of its own, importing nothing, so that modules validation runs (registry.clock, through the decision
log's date rule) can raise it without importing the command-line helpers, which import validation."""
from __future__ import annotations


class CommandError(Exception):
    """A tool error: the command root prints `error: <message>` on stderr and exits 1."""
