"""The calculator library: every registry calculator as a plain function over the gold variables.

    from solver.library import compute, CalculatorError
    compute(2, {"age": [60, "years"], ...}).value
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from solver.library.core import FUNCTIONS, VARIANTS, Context, InputRecord, Result, compute, resolve
from solver.library.errors import (
    BadValue,
    CalculatorError,
    MissingInput,
    OutOfRange,
    RegistryInvalid,
    UnknownCalculator,
    UnknownInput,
    UnknownUnit,
)
from solver.library.units import round_number

if TYPE_CHECKING:  # pandas stays unimported until compute_many is first called
    import pandas as pd

    from solver.library.batch import ColumnSpec


def compute_many(calculator: str | int, frame: Any, *, variant: str = "published",
                 columns: Mapping[str, ColumnSpec] | None = None, **kw: Any) -> pd.DataFrame:
    """One calculator over a pandas DataFrame or a pyarrow Table/RecordBatch; see `solver.library.batch` (pandas
    imported on first use)."""
    from solver.library.batch import compute_many as _compute_many

    return _compute_many(calculator, frame, variant=variant, columns=columns, **kw)


__all__ = [
    "FUNCTIONS", "VARIANTS", "Context", "InputRecord", "Result", "compute", "compute_many", "resolve", "round_number",
    "BadValue", "CalculatorError", "MissingInput", "OutOfRange", "RegistryInvalid", "UnknownCalculator", "UnknownInput",
    "UnknownUnit",
]
