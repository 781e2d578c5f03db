"""The name registry of calculator functions: `@calculator(slug)` records the function for a slug.

Each function is the calculator's one formula (its kernel): it reads converted inputs through the reader
it is given and computes. The scalar engine (`core.compute`) gives it a `Context` (one patient, Python
numbers); a kernel registered with `columnar=True` is also given a `vectorised.Columns` by `compute_many`
(numpy arrays, one value per row), whose accessors and helpers (`where`, `select`, `pow`, `band`,
`points` ...) have the same names and meaning. Nothing in the library writes a formula twice.

Calculator modules import this and `solver.library.context`, never the engine (`core`), so the
engine can import every calculator module without an import cycle.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from solver.library.context import Context

# a kernel: given a reader (`Context`, or `vectorised.Columns` for a columnar one), the raw result
Kernel = Callable[[Any], Any]
FUNCTIONS: dict[str, Kernel] = {}
# the kernels written with the helpers both readers share, so `compute_many` runs them over arrays
COLUMNAR: set[str] = set()
# columnar calculators whose arithmetic ends in a true division (`/`): their result is a Python float whatever the
# input types, so an int read among floats cannot change the output type (see `vectorised.Columns.intish`)
FLOAT_RESULT: set[str] = set()
# columnar calculators whose log and exp run as numpy's over arrays rather than Python's, once shown to change no
# answer (see `vectorised.Columns.log`; Framingham: tests/solver/test_batch_numpy_math.py)
NUMPY_MATH: set[str] = set()


def calculator(slug: str, *, columnar: bool = False, float_result: bool = False, numpy_math: bool = False
               ) -> Callable[[Callable[["Context"], Any]], Callable[["Context"], Any]]:  # (typed for the scalar reader)
    """Register the function that computes calculator `slug` (`columnar`: it runs over arrays as well)."""

    def deco(fn: Callable[["Context"], Any]) -> Callable[["Context"], Any]:
        if slug in FUNCTIONS:
            raise RuntimeError(f"two functions registered for {slug}")
        FUNCTIONS[slug] = fn
        if columnar:
            COLUMNAR.add(slug)
        if float_result:
            FLOAT_RESULT.add(slug)
        if numpy_math:
            NUMPY_MATH.add(slug)
        return fn

    return deco
