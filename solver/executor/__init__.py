"""Restricted executor for model-written programs.

    from solver.executor import run_program, Executor, Outcome

The public names are loaded lazily (PEP 562) so that the fork server, which
imports this package's sandbox modules, does not also load pydantic and the
client: the server's address space is the baseline of every child's 256 MB.
"""
from __future__ import annotations

TYPE_CHECKING = False  # not `typing`: the fork server imports this package, and its heap is every child's
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

__all__ = ["run_program", "Executor", "Outcome", "shutdown", "server_pids"]

if TYPE_CHECKING:  # pragma: no cover
    from solver.executor.outcome import Outcome  # noqa: F401
    from solver.executor.pool import Executor, run_program, server_pids, shutdown


def __getattr__(name: str) -> Any:
    if name == "Outcome":
        from solver.executor.outcome import Outcome

        return Outcome
    if name in ("run_program", "Executor", "shutdown", "server_pids"):
        from solver.executor import pool

        return getattr(pool, name)
    raise AttributeError(f"module 'solver.executor' has no attribute {name!r}")
