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

__all__ = [
    "FUNCTIONS", "VARIANTS", "Context", "InputRecord", "Result", "compute", "resolve", "round_number",
    "BadValue", "CalculatorError", "MissingInput", "OutOfRange", "RegistryInvalid", "UnknownCalculator", "UnknownInput", "UnknownUnit",
]
