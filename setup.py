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
REGISTRY_FILES = (".pre-commit-hooks.yaml",)  # the hooks `formula init` configures a new registry with
# what the published report is built from: its mkdocs config, hand-written pages and assets, and the
# stored no-model runs it shows by default
SITE_SOURCES = ("mkdocs.yml", "site", "results/embedded")


class BuildWithRegistry(build_py):
    """build_py, plus a copy of the registry folders (and the pre-commit hooks) into registry/embedded/ of the build, and of the
    site's sources into formula_site/embedded/ (so an installed `formula site build` works too)."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "registry" / "embedded"
        for name in REGISTRY_DIRS:
            dst = target / name
            if dst.exists():
                shutil.rmtree(dst)
            shutil.copytree(HERE / name, dst)
        for name in REGISTRY_FILES:
            shutil.copy2(HERE / name, target / name)
        site = Path(self.build_lib) / "formula_site" / "embedded"
        for name in SITE_SOURCES:
            src, dst = HERE / name, site / name
            if dst.exists():
                shutil.rmtree(dst) if dst.is_dir() else dst.unlink()
            if src.is_dir():
                shutil.copytree(src, dst)
            elif src.is_file():
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)


setup(cmdclass={"build_py": BuildWithRegistry})
