"""Process bookkeeping for tests and diagnostics: who descends from whom (Linux /proc)."""
from __future__ import annotations

import os
from pathlib import Path


def _parents() -> dict[int, int]:
    """pid -> ppid for every visible process ({} where /proc is absent)."""
    table: dict[int, int] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return table
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # exited meanwhile
        # "pid (comm) state ppid ..."; comm may contain spaces and parentheses
        fields = stat[stat.rindex(")") + 2 :].split()
        table[int(entry.name)] = int(fields[1])
    return table


def descendant_pids(root: int | None = None) -> set[int]:
    """Every live process below `root` (default: this process), zombies included."""
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    for pid, ppid in _parents().items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found
