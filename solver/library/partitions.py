"""`compute_many` per partition of a distributed table: Dask's `map_partitions`, Spark's `mapInPandas`.

The per-partition function is a plain picklable object (`PartitionFunction`): each worker process
loads and validates the registry once (`get_registry`, the checkout or installed copy, or
$FORMULA_REGISTRY_ROOT on the workers) and computes its partitions with `compute_many`, so every
value and row error equals `compute`'s. Dask:

    import dask.dataframe as dd
    from solver.library.partitions import compute_dask
    out = compute_dask("ckd-epi-2021", dd.read_parquet("cohort/"), columns={"age": ("age", "years")})
    out.compute()   # or out.to_parquet(...): a `value` and an `error` column, the partitions' index

Spark (the same function, fed an iterator of pandas frames):

    fn = PartitionFunction("ckd-epi-2021", columns={"age": ("age", "years")})
    spark_df.mapInPandas(fn.map_in_pandas, schema="value double, error string")
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Mapping

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class PartitionFunction:
    """frame -> frame with `value` and `error` (the frame's index kept); picklable, for any engine."""

    calculator: str | int
    variant: str = "published"
    columns: Mapping[str, Any] | None = None
    keep: tuple[str, ...] = field(default=())  # input columns copied to the output (ids ...)

    def __call__(self, frame: pd.DataFrame) -> pd.DataFrame:
        from solver.library.batch import compute_many

        res = compute_many(self.calculator, frame, variant=self.variant, columns=self.columns)
        if self.keep:
            res = frame[list(self.keep)].join(res)
        return res

    def map_in_pandas(self, frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        """Spark's `mapInPandas` form: an iterator of pandas frames in, one result frame per frame out."""
        for frame in frames:
            yield self(frame)

    def meta(self, frame: pd.DataFrame | None = None) -> pd.DataFrame:
        """The empty result frame (column names and dtypes) Dask needs as `meta`."""
        import pandas as pd

        out = pd.DataFrame({"value": pd.Series(dtype=object), "error": pd.Series(dtype=object)})
        if self.keep and frame is not None:
            out = frame[list(self.keep)].iloc[:0].join(out)
        return out


def compute_dask(calculator: str | int, ddf: Any, *, variant: str = "published",
                 columns: Mapping[str, Any] | None = None, keep: tuple[str, ...] = ()) -> Any:
    """A Dask DataFrame of `value` and `error`, one `compute_many` per partition (lazy until computed)."""
    fn = PartitionFunction(calculator, variant, dict(columns) if columns else None, tuple(keep))
    return ddf.map_partitions(fn, meta=fn.meta(ddf._meta))
