"""Typed errors of the calculator library: each names the calculator, the variable and what is accepted."""
from __future__ import annotations


class CalculatorError(ValueError):
    """Bad input for a calculator. `str(e)` is a message a person can act on."""

    def __init__(self, calculator: str, variable: str | None, message: str):
        self.calculator = calculator
        self.variable = variable
        self.message = message
        where = f"{calculator}: {variable!r}: " if variable else f"{calculator}: "
        super().__init__(where + message)


class UnknownCalculator(CalculatorError):
    pass


class MissingInput(CalculatorError):
    pass


class UnknownInput(CalculatorError):
    pass


class UnknownUnit(CalculatorError):
    pass


class OutOfRange(CalculatorError):
    pass


class BadValue(CalculatorError):
    """A value of the wrong type, an unknown option, or an unreadable date."""


class RegistryInvalid(CalculatorError):
    """The registry fails validation, so no result could name the content it was computed from."""


class AmbiguousValue(BadValue):
    """A value or unit written so that it reads as two different things (both are named): never guessed."""
