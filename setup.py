"""Build hook: ship the registry in the wheel.

`formulas/` and `guidelines/` stay at the repository root, where maintainers edit them; a build
copies them into the package as `registry/embedded/`, the read-only registry an installed
`formula` falls back to (see `registry.loader.default_root`). All other metadata is in pyproject.toml.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
REGISTRY_DIRS = ("formulas", "guidelines")


class BuildWithRegistry(build_py):
    """build_py, plus a copy of the registry folders into registry/embedded/ of the build."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "registry" / "embedded"
        for name in REGISTRY_DIRS:
            dst = target / name
            if dst.exists():
                shutil.rmtree(dst)
            shutil.copytree(HERE / name, dst)


setup(cmdclass={"build_py": BuildWithRegistry})
