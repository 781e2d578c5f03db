"""Install hints name the command the README uses (issue 50): every `pip install` the code prints or documents
for an extra is `pip install -e '.[EXTRA]'` (registry.terminal.install_hint), for an extra pyproject.toml defines."""
from __future__ import annotations

import re
import tomllib

from registry.loader import PROJECT_ROOT
from registry.terminal import install_hint

PACKAGES = ("registry", "solver", "audit", "formula_site", "cli", "bench")
HINT = re.compile(r"pip install[^\n`\"]*")


def test_every_hint_is_the_readmes_command_for_a_real_extra() -> None:
    extras = set(tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
                 ["optional-dependencies"])
    other = []
    for package in PACKAGES:
        for path in sorted((PROJECT_ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            for m in HINT.finditer(text):
                hint = m.group(0)
                if "{extra}" in hint or not re.search(r"\[|formula-registry", hint):
                    continue  # install_hint itself; a package that is no extra of ours (pip install clincalc)
                if not re.fullmatch(r"pip install -e '\.\[[a-z-]+\]'.*", hint):
                    other.append(f"{path.relative_to(PROJECT_ROOT)}: {hint}")
            for extra in re.findall(r"install_hint\(['\"]([^'\"]+)['\"]\)", text):
                assert extra in extras, f"{path}: install_hint({extra!r}) names no extra of pyproject.toml"
    assert not other, other
    docs = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8") + "".join(
        p.read_text(encoding="utf-8") for p in sorted((PROJECT_ROOT / "docs").rglob("*.md")))
    assert install_hint("site") in docs.replace("pip install -q -e", "pip install -e")
