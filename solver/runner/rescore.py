"""Re-score a run folder with the current scorer (after a scoring fix), without a model."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from solver.replies import replayed
from solver.runner import manifest as mf
from solver.runner.results import ResultsError, load, rewrite
from solver.scoring import read_answer, rescore_row, score


class RescoreError(RuntimeError):
    pass


def rescore(folder: Path) -> dict[str, Any]:
    mpath, rpath = folder / "manifest.json", folder / "results.jsonl"
    if not mpath.is_file() or not rpath.is_file():
        raise RescoreError(f"{folder}: not a run folder (needs manifest.json and results.jsonl)")
    try:
        man = mf.read(mpath)
    except Exception as e:  # noqa: BLE001 - pydantic or JSON error, reported with the file
        raise RescoreError(f"{mpath}: not a run manifest ({type(e).__name__}: {e})") from None
    kind = man.arm_definition.get("kind")
    lock = FileLock(str(folder / ".lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise RescoreError(f"a run is writing {folder}; wait for it to finish") from None
    try:
        try:
            rows, torn = load(rpath, repair=False)
        except ResultsError as e:
            raise RescoreError(str(e)) from None
        changed = 0
        for row in rows:
            before = (row.get("outcome"), row.get("answer"), row.get("correct"))
            if kind == "text":
                outcome, answer = read_answer(replayed(row), row["output_type"], row.get("ground_truth"))
                row["outcome"], row["answer"] = outcome, answer
                row["table8"] = None if outcome == "answered" else "unreadable"
            elif kind == "imported":  # `formula import`: re-read the answer the log recorded
                rescore_row(row)
            row["correct"] = bool(score(row.get("answer"), row["output_type"], row.get("ground_truth"),
                                        row.get("lower_limit"), row.get("upper_limit")))
            changed += before != (row.get("outcome"), row.get("answer"), row.get("correct"))
        rewrite(rpath, rows)
        man.correct = sum(1 for r in rows if r["correct"])
        man.rows_done = len(rows)
        man.rescored_at = mf.now()
        mf.write(mpath, man)
    finally:
        lock.release()
    n = len(rows)
    return {"dir": str(folder), "arm": man.arm, "rows": n, "correct": man.correct,
            "accuracy": 100.0 * man.correct / n if n else 0.0, "changed": changed, "torn_bytes_ignored": torn}
