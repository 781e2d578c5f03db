"""A JSON cell json.loads refuses in other ways than a syntax error is a row's error, not a traceback."""
from __future__ import annotations

import pandas as pd

from solver.library.batch import compute_many


def test_a_huge_integer_or_deep_nesting_in_a_cell_is_that_row_s_error() -> None:
    frame = pd.DataFrame({"weight": ["[" + "9" * 5000 + ', "kg"]', '[70, "kg"]', "[" * 5000],
                          "height": ['[175, "cm"]'] * 3})
    out = compute_many("body-mass-index", frame, variant="benchmark")
    assert out["value"].tolist() == [None, 22.85714, None]
    errors = out["error"].tolist()
    assert errors[1] is None
    assert all(str(e).startswith("body-mass-index: 'weight': expected [value, 'unit'], got '[") for e in errors[::2])
