"""Figures the suite prints at the end of a run (the library's per-calculator reference tally, the completeness
audit's mutation score), kept where tests fill them and handed from pytest-xdist workers to the controller.

Under xdist the tests run in worker processes, so what they record here would be lost: each worker sends its
figures with its output (`config.workeroutput`, in `pytest_sessionfinish`) and the controller merges them as each
worker goes down (`pytest_testnodedown`), before it prints the summary (tests/conftest.py).
"""
from __future__ import annotations

import json
from typing import Any

# label -> calculator id -> (correct, total), filled by tests/solver/test_library_reference.py
REFERENCE_TALLY: dict[str, dict[int, tuple[int, int]]] = {"reference cases": {}, "one-shot rows": {}}
# label -> (killed, total, texts), filled by tests/audit/test_completeness.py
MUTATION: dict[str, tuple[int, int, int]] = {}

KEY = "formula_summary"  # the key of a worker's output that carries these figures


def export() -> str:
    return json.dumps({"tally": {label: {str(k): list(v) for k, v in t.items()} for label, t in REFERENCE_TALLY.items()},
                       "mutation": {label: list(v) for label, v in MUTATION.items()}})


def merge(text: str) -> None:
    got: dict[str, Any] = json.loads(text)
    for label, tally in got.get("tally", {}).items():
        REFERENCE_TALLY.setdefault(label, {}).update({int(k): (int(c), int(t)) for k, (c, t) in tally.items()})
    for label, (killed, total, texts) in got.get("mutation", {}).items():
        MUTATION[label] = (int(killed), int(total), int(texts))


def lines() -> list[tuple[str, str | None]]:
    """(separator title, line under it or None) for every figure recorded."""
    out: list[tuple[str, str | None]] = []
    for label, tally in REFERENCE_TALLY.items():
        if not tally:
            continue
        ok = sum(c for c, _ in tally.values())
        total = sum(t for _, t in tally.values())
        out.append((f"library, benchmark variant, {label}: {ok}/{total} correct",
                    "  ".join(f"{cid}:{c}/{t}" for cid, (c, t) in sorted(tally.items()))))
    for label, (killed, total, texts) in MUTATION.items():
        out.append((f"{label} mutation score: {killed}/{total} = {100 * killed / total:.1f}% over {texts} texts", None))
    return out
