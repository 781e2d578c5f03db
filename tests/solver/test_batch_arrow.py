"""compute_many on Arrow tables in the cohort schema: the answers are `compute`'s, row by row, for the row as the
table holds it (a value column and its `<name>_unit` column, or a struct<value, unit>; bool criteria; dictionary
or plain text choices; null: not given). The tables are the benchmark-shaped frames of
test_batch_benchmark_frames turned into the schema by `formula convert`'s own converter."""
from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry.loader import get_registry
from solver.cohort_table import entities_table
from solver.library import compute_many
from solver.library.units import Converter
from solver.library.vectorised import Coded, Pair
from tests.solver.test_batch_benchmark_frames import SCALAR_ONLY, SLUGS, _expected, _held, _same, frames


def _conv() -> Converter:
    units = get_registry().units
    assert units is not None
    return Converter(units, exact=False)


def table_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Each row as the table holds it, as `compute` takes it (the documented schema read by hand)."""
    names = table.schema.names
    out = []
    for rec in table.to_pylist():
        row: dict[str, Any] = {}
        for k in sorted(names):
            v = rec[k]
            if k.endswith("_unit") and k[:-5] in names or v is None:
                continue
            if isinstance(v, dict):
                v = [v["value"], v["unit"]] if v["unit"] is not None else v["value"]
                if v is None:
                    continue
            elif f"{k}_unit" in names and rec[f"{k}_unit"] is not None:
                v = [v, rec[f"{k}_unit"]]
            elif isinstance(v, str) and v.startswith("["):
                v = json.loads(v)
            row[k] = v
        out.append(row)
    return out


def _plain_text(table: pa.Table, draw: Any) -> pa.Table:
    """Some dictionary columns as plain strings (a writer that does not dictionary-encode)."""
    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type) and draw(st.booleans()):
            table = table.set_column(i, field.name, table.column(i).cast(pa.string()))
    return table


def _check(slug: str, table: pa.Table) -> None:
    res = compute_many(slug, table, variant="benchmark")
    if not res.attrs["vectorised"]:
        assert (slug, "benchmark") in SCALAR_ONLY
        return
    values, errors = res["value"].tolist(), res["error"].tolist()
    for i, ents in enumerate(table_rows(table)):
        want, why = _expected(slug, ents)
        assert _same(values[i], want) and errors[i] == why, (slug, i, ents, values[i], errors[i], want, why)
    assert res.attrs["left_path"] == 0, (slug, res.attrs)


@pytest.mark.parametrize("slug", SLUGS)
def test_arrow_tables_equal_compute_row_by_row(slug: str) -> None:
    @settings(max_examples=8, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(frame=frames(slug), struct=st.booleans(), data=st.data())
    def run(frame: pd.DataFrame, struct: bool, data: Any) -> None:
        table = _plain_text(entities_table(_held(frame), _conv(), struct=struct), data.draw)
        _check(slug, table)
        _check(slug, table.to_batches()[0] if table.num_rows else table)

    run()


def test_dictionary_units_and_choices_stay_codes() -> None:
    """A dictionary unit column becomes codes into its distinct units and a dictionary choice its codes: no
    string per row; an integer column with nulls keeps its given values as Python ints."""
    from solver.library.arrow_columns import table_columns

    calc = get_registry().calculators["creatinine-clearance-cockcroft-gault"]
    table = pa.table({"weight": pa.array([70, None, 80], pa.int64()),
                      "weight_unit": pa.array(["kg", "kg", "lbs"]).dictionary_encode(),
                      "sex": pa.array(["Male", "Female", None]).dictionary_encode()})
    cols, other = table_columns(table, calc)
    assert not other
    assert isinstance(cols["weight"], Pair) and isinstance(cols["weight"].units, Coded)
    assert cols["weight"].units.uniques == ["kg", "lbs"] and cols["weight"].ints.tolist() == [True, False, True]
    assert isinstance(cols["sex"], Coded) and cols["sex"].codes.tolist() == [0, 1, -1]


def test_category_units_in_pandas_use_their_codes() -> None:
    """What pd.read_parquet gives for a dictionary column (category) is read by its codes, with compute's answers."""
    from solver.library.batch import entity_columns

    frame = pd.DataFrame({"weight": [70.0, 150.0, np.nan], "weight_unit": pd.Categorical(["kg", "lbs", "kg"]),
                          "height": [170.0, 65.0, 180.0], "height_unit": pd.Categorical(["cm", "in", "cm"])})
    calc = get_registry().calculators["body-mass-index"]
    cols = entity_columns(frame, calc)
    assert isinstance(cols["weight"].units, Coded)
    plain = frame.astype({"weight_unit": object, "height_unit": object})
    a, b = compute_many("body-mass-index", frame), compute_many("body-mass-index", plain)
    assert a["value"].tolist() == b["value"].tolist() and a["error"].tolist() == b["error"].tolist()


def test_compute_many_refuses_other_tables() -> None:
    with pytest.raises(TypeError, match="DataFrame or a pyarrow Table"):
        compute_many("body-mass-index", [{"weight": [70, "kg"]}])
