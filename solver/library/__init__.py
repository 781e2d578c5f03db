"""The calculator library: every registry calculator as a plain function over the gold variables.

    from solver.library import compute, CalculatorError
    compute(2, {"age": [60, "years"], ...}).value
"""
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


def compute_many(calculator, frame, *, variant="benchmark", columns=None, **kw):  # type: ignore[no-untyped-def]
    """One calculator over a pandas DataFrame; see `solver.library.batch` (pandas imported on first use)."""
    from solver.library.batch import compute_many as _compute_many

    return _compute_many(calculator, frame, variant=variant, columns=columns, **kw)


__all__ = [
    "FUNCTIONS", "VARIANTS", "Context", "InputRecord", "Result", "compute", "compute_many", "resolve", "round_number",
    "BadValue", "CalculatorError", "MissingInput", "OutOfRange", "RegistryInvalid", "UnknownCalculator", "UnknownInput",
    "UnknownUnit",
]
