"""Every deviation recorded in the registry has a test that computes it in both variants."""
import re
from pathlib import Path

from registry.loader import get_registry

MARK = re.compile(r"""pytest\.mark\.deviation\(\s*["']([a-z0-9-]+)["']\s*,\s*["']([a-z0-9-]+)["']\s*\)""")


def test_every_recorded_deviation_is_tested() -> None:
    marked = set()
    for f in Path(__file__).parent.glob("test_library_*.py"):
        marked |= set(MARK.findall(f.read_text(encoding="utf-8")))
    recorded = {(c.slug, d.id) for c in get_registry().calculators.values() for d in c.deviations}
    assert recorded, "the registry records no deviation"
    assert not recorded - marked, f"deviations without a test: {sorted(recorded - marked)}"
    assert not marked - recorded, f"tests name deviations the registry lacks: {sorted(marked - recorded)}"
