"""A value for a patient is the published formula's unless a caller names the benchmark's variant (issue 46,
control C-006 of the hazard log): compute, compute_many, the router, the MCP tools' service and records."""
from __future__ import annotations

import pandas as pd

from registry.loader import get_registry
from solver.library import compute, compute_many
from solver.records import library_record
from solver.router.core import solve
from solver.tools.service import call

FLUIDS = "maintenance-fluids"  # the benchmark approximates the hourly 4-2-1 rule (deviation hourly-4-2-1-approximation)
WEIGHT = {"weight": [23.0, "kg"]}


def test_every_entry_point_defaults_to_the_published_variant():
    reg = get_registry()
    published = compute(FLUIDS, WEIGHT, variant="published").value
    assert compute(FLUIDS, WEIGHT, variant="benchmark").value != published  # the case tells them apart
    assert compute(FLUIDS, WEIGHT).value == published and compute(FLUIDS, WEIGHT).variant == "published"
    frame = pd.DataFrame({"weight": [23.0]})
    assert compute_many(FLUIDS, frame, columns={"weight": ("weight", "kg")})["value"].iloc[0] == published
    assert solve(FLUIDS, WEIGHT).variant == "published"
    assert library_record(reg, FLUIDS, WEIGHT).variant == "published"
    assert call(reg, FLUIDS, {"weight": [23.0, "kg"]}).variant == "published"
