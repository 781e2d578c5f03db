"""The name registry of calculator functions: `@calculator(slug)` records the function for a slug.

Calculator modules import this and `solver.library.context`, never the engine (`core`), so the
engine can import every calculator module without an import cycle.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from solver.library.context import Context

FUNCTIONS: dict[str, Callable[["Context"], Any]] = {}


def calculator(slug: str) -> Callable[[Callable[["Context"], Any]], Callable[["Context"], Any]]:
    """Register the function that computes calculator `slug`."""

    def deco(fn: Callable[["Context"], Any]) -> Callable[["Context"], Any]:
        if slug in FUNCTIONS:
            raise RuntimeError(f"two functions registered for {slug}")
        FUNCTIONS[slug] = fn
        return fn

    return deco
