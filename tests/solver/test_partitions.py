"""compute_many per partition on a local Dask cluster equals compute_many on the whole table."""
from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

from solver.library import compute_many
from solver.library.partitions import PartitionFunction, compute_dask

dd = pytest.importorskip("dask.dataframe", reason="the dask extra: pip install 'formula-registry[dask]'")
distributed = pytest.importorskip("distributed")


def _cohort(n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({"pid": np.arange(n), "sex": rng.choice(["Male", "Female", "other"], n, p=[0.45, 0.45, 0.1]),
                         "age": rng.integers(18, 95, n).astype(float),
                         "creatinine": np.round(rng.uniform(0.4, 6, n), 2)})


def test_the_partition_function_pickles_and_feeds_spark_style_iterators():
    fn = PartitionFunction("ckd-epi-2021", variant="benchmark", columns={"age": ("age", "years"), "creatinine": ("creatinine", "mg/dL")})
    again = pickle.loads(pickle.dumps(fn))
    frame = _cohort(50)
    parts = list(again.map_in_pandas(iter([frame.iloc[:20], frame.iloc[20:]])))
    assert pd.concat(parts).equals(compute_many("ckd-epi-2021", frame, columns=fn.columns, variant="benchmark"))


def test_dask_map_partitions_on_a_local_cluster():
    columns = {"age": ("age", "years"), "creatinine": ("creatinine", "mg/dL")}
    frame = _cohort()
    whole = compute_many("ckd-epi-2021", frame, columns=columns, variant="benchmark")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        ddf = dd.from_pandas(frame, npartitions=4)
        out = compute_dask("ckd-epi-2021", ddf, columns=columns, keep=("pid",), variant="benchmark").compute()
    out = out.sort_index()
    assert out["pid"].tolist() == frame["pid"].tolist()
    assert out["value"].tolist() == whole["value"].tolist()
    assert out["error"].tolist() == whole["error"].tolist()
    assert out["error"].notna().sum() > 0  # the 'other' rows keep their own error


def test_compute_dask_on_two_worker_processes_keeps_the_columnar_path():
    """A real LocalCluster: two worker processes, each loading the registry itself. The result equals
    compute_many on the whole table, and the partition function computes columnar on each worker."""
    columns = {"age": ("age", "years"), "creatinine": ("creatinine", "mg/dL")}
    frame = _cohort(2000)
    whole = compute_many("ckd-epi-2021", frame, columns=columns, variant="benchmark")
    fn = PartitionFunction("ckd-epi-2021", variant="benchmark", columns=columns)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        workers = sorted(client.scheduler_info()["workers"])
        assert len(workers) == 2
        out = compute_dask("ckd-epi-2021", dd.from_pandas(frame, npartitions=6), columns=columns, variant="benchmark").compute()
        # the same partition function, pinned to each worker process in turn
        runs = [client.submit(fn, frame.iloc[i::2], workers=[w], pure=False).result() for i, w in enumerate(workers)]
        pids = client.run(__import__("os").getpid)
    out = out.sort_index()
    assert out["value"].tolist() == whole["value"].tolist() and out["error"].tolist() == whole["error"].tolist()
    assert len(set(pids.values())) == 2
    for res in runs:
        assert res.attrs["vectorised"] and res.attrs["row_by_row"] == int(res["error"].notna().sum())


def test_dask_reads_the_cohort_parquet_schema(tmp_path):
    """dd.read_parquet of a file in the cohort schema (dictionary units and choices, a struct<value, unit>
    column, nulls) gives what compute_many gives on the Arrow table itself."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(5)
    n = 300
    creat = pa.StructArray.from_arrays([pa.array(np.round(rng.uniform(0.4, 6, n), 2)),
                                        pa.array(rng.choice(["mg/dL", "µmol/L"], n))], names=["value", "unit"],
                                       mask=pa.array(rng.random(n) < 0.1))
    table = pa.table({"pid": np.arange(n), "sex": pa.array(rng.choice(["Male", "Female"], n)).dictionary_encode(),
                      "age": pa.array(rng.integers(18, 95, n), mask=rng.random(n) < 0.05),
                      "age_unit": pa.array(["years"] * n).dictionary_encode(), "creatinine": creat})
    pq.write_table(table, tmp_path / "c.parquet")
    whole = compute_many("ckd-epi-2021", table)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        out = compute_dask("ckd-epi-2021", dd.read_parquet(tmp_path / "c.parquet")).compute()
    assert out["value"].tolist() == whole["value"].tolist() and out["error"].tolist() == whole["error"].tolist()
    assert whole["error"].notna().any() and whole["error"].isna().any()
