"""Peak memory of one hostile input, measured in a fresh process (resource.getrusage), never by timing.

`grown_mb(setup, action)` runs `setup` (imports, paths), takes the process's peak resident size as its
baseline, runs `action` and reports how far the peak grew, with the error the action ended in (its type and
message), so a test can check both the bound and the refusal's words.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

from registry.loader import PROJECT_ROOT

LIMIT_MB = 256  # the bound for any single hostile input, beyond the process's baseline

_PROBE = """
import json, resource, sys, traceback
{setup}
def _peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
base = _peak()
error = None
try:
{action}
except BaseException as e:  # the refusal is the point: report it
    error = {{"type": type(e).__name__, "message": str(e), "traceback": traceback.format_exc()}}
print(json.dumps({{"grown_mb": _peak() - base, "error": error}}))
"""


def grown_mb(setup: str, action: str, timeout: float = 300) -> dict[str, Any]:
    """{"grown_mb": float, "error": {"type", "message", "traceback"} | None} of `action` after `setup`."""
    code = _PROBE.format(setup=textwrap.dedent(setup), action=textwrap.indent(textwrap.dedent(action), "    "))
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env,
                         cwd=str(PROJECT_ROOT))
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])
