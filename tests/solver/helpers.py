"""Assertions shared by the library tests."""
from __future__ import annotations

from typing import Any

import pytest

from solver.library import CalculatorError, compute


def raises_calc_error(exc: type[CalculatorError], slug: str, ents: dict[str, Any], variable: str | None,
                      variant: str = "benchmark") -> CalculatorError:
    """`compute` refuses with exactly `exc`, naming the calculator and the variable."""
    with pytest.raises(CalculatorError) as info:
        compute(slug, ents, variant=variant)
    assert type(info.value) is exc, repr(info.value)
    assert info.value.calculator == slug, info.value
    assert info.value.variable == variable, info.value
    return info.value
