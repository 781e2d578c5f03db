"""The runner: one arm over a dataset for each seed, resumable, with a manifest and per-row results.

    from solver.runner import RunConfig, run
    summary = run(RunConfig(arm="gold-solve", data=Path(...), out=Path(...), seeds=[42]))
"""
from solver.runner.core import RunConfig, RunError, Summary, run

__all__ = ["RunConfig", "RunError", "Summary", "run"]
