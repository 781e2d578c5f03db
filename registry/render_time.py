"""How long a registry text may take to render: wall-clock time, less the garbage collector's passes, with room for
a thread the machine starved.

Steps are not time (issue 37: 99,999 loop steps of chained filters took 1.75 s a text), so a render has a
wall-clock budget beside its step budget, and a whole set of texts one more. Two things a template does not choose
are kept out of its time:

- **the garbage collector's passes.** One may start inside any render and walks the whole heap. In a forked child
  (validate renders its texts in one, registry.validation_split) every object it touches is a page copied: a full pass over
  1.5 million small objects measured 833 ms in a child against 372 ms in its parent (2026-12-03, this 2-core
  machine). That is what refused heart-score's 2 ms expression in CI's full suite; so while texts render
  (`gc_timed`), a `gc.callbacks` entry times every pass, and a stopwatch subtracts those that ran on its thread.
- **the time the machine gave to others.** On a loaded machine (CI: two test workers and Chromium on two cores) a
  thread waits for a core. A stopwatch past its budget stops the render only when at least half of that time was
  the render's own CPU time (a template that does work); a thread starved for longer still stops at
  STARVED_FACTOR times the budget, so nothing runs unbounded.

The shipped texts render in at most 2.3 ms each, 28 ms for all 124 texts and expressions (CPU, measured
2026-12-03), so the budgets leave them more than 40 times their need.
"""
from __future__ import annotations

import gc
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

RENDER_SECONDS = 0.1  # wall-clock time one render may take (issue 37: 100 ms a text)
TEXTS_SECONDS = 2.0  # wall-clock time a whole set of texts may take together
STARVED_FACTOR = 10  # a starved thread stops at this many times its budget, whatever its share of the CPU

wall: Callable[[], float] = time.perf_counter  # injectable: tests pass clocks that jump
cpu: Callable[[], float] = time.thread_time

_spent = threading.local()  # per thread: gc_wall, gc_cpu (the passes' totals) and started (the pass running)


def _on_gc(phase: str, info: dict[str, Any]) -> None:
    """Add each collector pass's time to its thread's totals (gc runs its callbacks on the collecting thread)."""
    if phase == "start":
        _spent.started = (wall(), cpu())
        return
    started = getattr(_spent, "started", None)
    if started is None:
        return
    _spent.started = None
    w, c = gc_spent()
    _spent.gc_wall, _spent.gc_cpu = w + wall() - started[0], c + cpu() - started[1]


_users = 0  # renders and sets of texts running now, in any thread: the callback is installed while there are any
_users_lock = threading.Lock()


@contextmanager
def gc_timed() -> Iterator[None]:
    """The collector's passes are timed while this runs. The callback is not left installed for the rest of a
    process: it costs each pass about 7 µs, 2% of an allocation-heavy loop (300,000 small dicts, 850 passes:
    283 -> 289 ms, best of 15 interleaved, 2026-12-03), for nothing when no text renders."""
    global _users
    with _users_lock:
        _users += 1
        if _users == 1:
            gc.callbacks.append(_on_gc)
    try:
        yield
    finally:
        with _users_lock:
            _users -= 1
            if _users == 0:
                gc.callbacks.remove(_on_gc)


def gc_spent() -> tuple[float, float]:
    """(wall, CPU) seconds the collector has spent on this thread so far."""
    return getattr(_spent, "gc_wall", 0.0), getattr(_spent, "gc_cpu", 0.0)


class Stopwatch:
    """Time since it started, less the collector's passes; `over()` says whether its budget is spent."""

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self.wall0, self.cpu0 = wall(), cpu()
        self.gc0 = gc_spent()

    def elapsed(self) -> tuple[float, float]:
        """(wall, CPU) seconds since the start, the collector's passes left out."""
        gw, gc_ = gc_spent()
        return (wall() - self.wall0 - (gw - self.gc0[0]), cpu() - self.cpu0 - (gc_ - self.gc0[1]))

    def over(self) -> bool:
        w, c = self.elapsed()
        if w <= self.budget:
            return False
        return c >= self.budget / 2 or w > STARVED_FACTOR * self.budget
