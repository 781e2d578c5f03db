"""One job in a forked child while another runs here: validation's two slow halves on two cores.

A cold `formula validate` spends most of its time in two independent rule groups: compiling and
rendering every text (jinja2) and reading every released snapshot (YAML). Neither releases the GIL,
so threads would not help; a forked child does. The child's result comes back pickled through a pipe
(our own child, so trusted data). Whenever a child cannot run the job (no `fork`, one usable core,
other threads alive in this process, the child failing or killed), the caller gets None and runs the
job itself: the answer never depends on whether the child ran.
"""
from __future__ import annotations

import os
import pickle
import threading
from typing import Callable, TypeVar

T = TypeVar("T")


def usable() -> bool:
    """Fork only where it is safe and pays: POSIX, two or more cores for this process, no other thread (a
    child forked beside a running thread can inherit a lock that thread holds)."""
    if not hasattr(os, "fork") or threading.active_count() != 1:
        return False
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores > 1


def beside(there: Callable[[], T], here: Callable[[], None]) -> T | None:
    """Run `there` in a forked child while `here` runs in this process; `there`'s result, or None when no
    child ran it to the end (the caller then runs it itself). `here` always runs, exactly once."""
    if not usable():
        here()
        return None
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # out of processes or memory: run it here
        os.close(r)
        os.close(w)
        here()
        return None
    if pid == 0:  # the child: never returns into the caller's code, never runs its exit handlers
        code = 1
        try:
            os.close(r)
            blob = pickle.dumps(there(), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(w, "wb") as out:
                out.write(blob)
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    try:
        here()
    finally:
        with os.fdopen(r, "rb") as inp:
            blob = inp.read()  # until the child closes its end: it is done (or gone)
        _, status = os.waitpid(pid, 0)
    if status != 0 or not blob:
        return None
    result: T = pickle.loads(blob)  # noqa: S301 - written by our own child a moment ago
    return result
