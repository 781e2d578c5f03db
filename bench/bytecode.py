"""The project's bytecode, written once before a bench times whole commands (bench/cli.py, bench/parquet_frames.py).

Python runs a module from its cached bytecode (`__pycache__`), written by the first import or by pip at install.
Where PYTHONDONTWRITEBYTECODE is set (as in this project's sandbox) it is never written, and every run compiles the
project's sources again (0.08 to 0.1 s of a command here): not what a user's machine does. So the benches write it
once, as a first run or an install would, before anything is timed.
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("cli", "registry", "solver", "audit", "formula_site")


def write_bytecode() -> None:
    import compileall

    for pkg in PACKAGES:
        compileall.compile_dir(str(ROOT / pkg), quiet=1)
