"""Name registries for the solver's extension points (arms, engines, runners, router routes).

Each extension point is a small `Protocol` in its own package plus one `Plugins` instance; a
newcomer adds an implementation by writing one module that decorates a class or factory with
`@ENGINES.register("name")` (say). Modules of a package are imported on first lookup, so the
registry is complete without anyone listing them, and a heavy backend (vllm) is imported only by
the implementation that needs it, when that implementation is built, never at registration.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class UnknownPlugin(LookupError):
    """A name that no module registered; the message lists the known names."""


class Plugins(Generic[T]):
    """A registry of named implementations of one extension point."""

    def __init__(self, kind: str, package: str | None = None):
        self.kind = kind  # "arm", "engine", ... (for messages)
        self.package = package  # dotted package whose modules register implementations
        self._items: dict[str, T] = {}
        self._loaded = package is None

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            if name in self._items and self._items[name] is not obj:
                raise RuntimeError(f"two {self.kind}s registered as {name!r}")
            self._items[name] = obj
            return obj

        return deco

    def _load(self) -> None:
        if self._loaded or self.package is None:
            return
        self._loaded = True
        pkg = importlib.import_module(self.package)
        for mod in sorted(m.name for m in pkgutil.iter_modules(pkg.__path__)):
            if not mod.startswith("_"):
                importlib.import_module(f"{self.package}.{mod}")

    def get(self, name: str) -> T:
        self._load()
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise UnknownPlugin(f"unknown {self.kind} {name!r}; known: {known}") from None

    def names(self) -> list[str]:
        self._load()
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._items
