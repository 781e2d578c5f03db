"""The columnar compute_many equals compute to the bit on random tables (hypothesis), for every columnar calculator.

Each table holds plain numeric columns with a `<column>_unit` column (a unit per row) or one fixed
unit (`columns=`), text choices, booleans, missing cells, values outside the plausible range,
ints and floats, and now and then a unit the registry does not accept: every value and every row
error must be exactly what `compute` gives for that row's entities.
"""
from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry.loader import get_registry
from registry.schema import InputKind
from solver.library import CalculatorError, compute, compute_many
from solver.library.functions import COLUMNAR as VECTORISED  # noqa: N811

COLUMNAR_SLUGS = sorted(VECTORISED)  # every calculator whose kernel runs over arrays
# variants whose kernel reaches a branch with no columnar form yet (`scalar_only`): computed row by row
SCALAR_ONLY = {("glasgow-blatchford", "published")}
UNIT_KINDS = {InputKind.quantity, InputKind.measurement, InputKind.age, InputKind.weight, InputKind.height,
              InputKind.temperature, InputKind.count_per_volume}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (a == b and math.copysign(1, a) == math.copysign(1, b)) or (math.isnan(a) and math.isnan(b))
    return a == b and type(a) is type(b)


def _expected(slug: str, ents: dict[str, Any], variant: str) -> tuple[Any, str | None]:
    """`compute`'s value as `compute_many` writes it (a date as ISO text, (weeks, days) as a list), or its error."""
    try:
        v = compute(slug, ents, variant=variant).value
    except CalculatorError as e:
        return None, str(e)
    return (v.isoformat() if isinstance(v, dt.date) else list(v) if isinstance(v, tuple) else v), None


def _unit_column(draw: Any, spec: Any, n: int, frame: dict[str, Any], columns: dict[str, Any],
                 rows: list[dict[str, Any]]) -> None:
    """A [value, unit] input as a numeric column with a unit per row (`<column>_unit`) or one fixed unit."""
    col = spec.name
    units = [u for u in spec.accepted_units if "+" not in u and u != "ft"] + ["furlongs"]
    lo, hi = spec.range if spec.range is not None else (0.0, 500.0)
    if spec.kind == InputKind.height:
        lo, hi = 50.0, 220.0  # read as cm, m or in: some rows fall outside the range
    elif spec.kind == InputKind.temperature:
        lo, hi = 15.0, 110.0  # read as °C or °F: some rows fall outside the range
    elif spec.kind == InputKind.count_per_volume:
        units = ["µL", "mm^3", "furlongs"]
        lo, hi = lo / 1e6, hi / 1e6  # per µL
    ints = draw(st.booleans())
    num = st.integers(int(lo) - 5, int(hi) + 5) if ints else st.floats(lo * 0.5, hi * 1.2).map(lambda x: round(x, 2))
    values = [draw(st.one_of(st.none(), num) if not spec.required or draw(st.booleans()) else num) for _ in range(n)]
    # a `<column>_unit` column, one fixed unit (`columns=`), [value, unit] cells, or their JSON text (a CSV)
    layout = draw(st.sampled_from(["unit column", "fixed", "cells", "json"]))
    fixed = draw(st.sampled_from(units[:-1])) if layout == "fixed" else None
    row_units = [fixed] * n if fixed is not None else [draw(st.sampled_from(units)) for _ in range(n)]
    if layout in ("cells", "json"):
        pairs = [None if v is None else [int(v) if ints else float(v), u] for v, u in zip(values, row_units)]
        frame[col] = pd.Series([json.dumps(p) if layout == "json" and p is not None else p for p in pairs],
                               dtype=object)
        for r, p in zip(rows, pairs):
            if p is not None:
                r[col] = p
        return
    frame[col] = pd.Series([np.nan if v is None else v for v in values],
                           dtype="int64" if ints and None not in values else "float64")
    if fixed is not None:
        columns[col] = (col, fixed)
    else:
        frame[col + "_unit"] = row_units
    as_int = frame[col].dtype.kind == "i"  # a missing cell makes the column float, as pandas reads it
    for r, v, u in zip(rows, values, row_units):
        if v is not None:
            r[col] = [int(v) if as_int else float(v), u]


@st.composite
def tables(draw: Any, slug: str) -> tuple[pd.DataFrame, dict[str, Any], list[dict[str, Any]]]:
    calc = get_registry().calculators[slug]
    n = draw(st.integers(1, 12))
    frame: dict[str, Any] = {}
    columns: dict[str, Any] = {}
    rows: list[dict[str, Any]] = [{} for _ in range(n)]
    for spec in calc.inputs:
        col = spec.name
        if spec.kind in UNIT_KINDS:
            _unit_column(draw, spec, n, frame, columns, rows)
        elif spec.kind == InputKind.choice:
            values = [draw(st.sampled_from([*spec.options, "other"])) for _ in range(n)]
            frame[col] = values
            for r, v in zip(rows, values):
                r[col] = v
        elif spec.kind == InputKind.boolean:
            values = [draw(st.booleans()) for _ in range(n)]
            frame[col] = values
            for r, v in zip(rows, values):
                r[col] = v
        elif spec.kind == InputKind.date:  # MM/DD/YYYY, now and then a date that is none
            day = st.dates(dt.date(1990, 1, 1), dt.date(2030, 12, 31)).map(lambda d: d.strftime("%m/%d/%Y"))
            values = [draw(st.one_of(day, day, day, st.sampled_from(["13/45/2020", "soon", "02/30/2021"])))
                      for _ in range(n)]
            frame[col] = values
            for r, v in zip(rows, values):
                r[col] = v
        elif spec.kind == InputKind.count:
            lo, hi = spec.range if spec.range is not None else (0, 30)
            values = [draw(st.integers(int(lo), int(min(hi, lo + 60)) + 2)) for _ in range(n)]
            frame[col] = values
            for r, v in zip(rows, values):
                r[col] = v
        elif spec.kind == InputKind.number:
            values = [draw(st.floats(0.1, 25).map(lambda x: round(x, 1))) for _ in range(n)]
            frame[col] = values
            for r, v in zip(rows, values):
                r[col] = v
        elif spec.kind == InputKind.special:
            _dose_column(draw, calc, spec, n, frame, columns, rows)
    return pd.DataFrame(frame), columns, rows


def _dose_column(draw: Any, calc: Any, spec: Any, n: int, frame: dict[str, Any], columns: dict[str, Any],
                 rows: list[dict[str, Any]]) -> None:
    """A dose input: steroid conversion's [name, dose, unit], MME's [amount, unit] and [n, 'per day'] pairs. Each
    row's entities are then in the order of the input names, as compute_many hands a row to compute (MME rounds
    drug by drug in that order)."""
    if spec.name == "input steroid":
        _named_dose_column(draw, calc, spec, n, frame, rows)
    else:
        _unit_column(draw, spec, n, frame, columns, rows)
    rows[:] = [dict(sorted(r.items())) for r in rows]


# cells of the dose inputs that are no plain form: each names its own error in `compute`
ODD_DOSES = ["ten", [10], [10, "mg", 1], [True, "mg"], [float("nan"), "mg"], ["10", "mg"], [10, None], {"a": 1}]
ODD_STEROIDS = ["PredniSONE PO", ["PredniSONE PO", 10], ["prednisone", 10, "mg"], ["PredniSONE PO", "ten", "mg"],
                ["PredniSONE PO", True, "mg"], ["PredniSONE PO", float("inf"), "mg"], [1, 10, "mg"],
                ["PredniSONE PO", 10, "mL"], ["PredniSONE PO", 10, "μg"], ("PredniSONE PO", 10, "mg")]


def _named_dose_column(draw: Any, calc: Any, spec: Any, n: int, frame: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """[name, dose, unit] cells (lists or their JSON text): a name of the table, a dose in or out of range, a unit
    accepted or not, now and then a cell of another form."""
    names = list(calc.tables["equivalence_factor"].lookup)
    units = [*spec.accepted_units, "furlongs"]
    ints = draw(st.booleans())
    num = st.integers(0, 6000) if ints else st.floats(0.001, 6000).map(lambda x: round(x, 3))
    cell = st.builds(lambda d, v, u: [d, v, u], st.sampled_from(names), num, st.sampled_from(units))
    odd = draw(st.booleans())
    values = [draw(st.one_of(cell, st.sampled_from(ODD_STEROIDS)) if odd else cell) for _ in range(n)]
    as_json = draw(st.booleans()) and not odd
    frame[spec.name] = pd.Series([json.dumps(v) if as_json else v for v in values], dtype=object)
    for r, v in zip(rows, values):
        r[spec.name] = v


@pytest.mark.parametrize("slug", COLUMNAR_SLUGS)
@pytest.mark.parametrize("variant", ["benchmark", "published"])
def test_columnar_equals_compute_on_random_tables(slug: str, variant: str) -> None:
    assert slug in VECTORISED

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(tables(slug))
    def check(case: tuple[pd.DataFrame, dict[str, Any], list[dict[str, Any]]]) -> None:
        frame, columns, rows = case
        res = compute_many(slug, frame, variant=variant, columns=columns)
        assert res.attrs["vectorised"] == ((slug, variant) not in SCALAR_ONLY)
        for got, err, ents in zip(res["value"].tolist(), res["error"].tolist(), rows):
            value, error = _expected(slug, ents, variant)
            assert err == error, (ents, err, error)
            assert _same(got, value), (ents, got, value)

    check()


def test_plain_numeric_columns_go_through_numpy() -> None:
    """A clean cohort never falls back to the row loop (the speed claim of bench/columnar.py rests on it)."""
    rng = np.random.default_rng(5)
    n = 2000
    frame = pd.DataFrame({"weight": np.round(rng.uniform(40, 150, n), 1), "height": np.round(rng.uniform(145, 200, n), 1),
                          "sex": rng.choice(["Male", "Female"], n), "age": rng.integers(20, 90, n).astype(float),
                          "creatinine": np.round(rng.uniform(0.5, 4, n), 2)})
    columns = {"weight": ("weight", "kg"), "height": ("height", "cm"), "age": ("age", "years"),
               "creatinine": ("creatinine", "mg/dL")}
    for slug in ("body-mass-index", "ckd-epi-2021", "creatinine-clearance-cockcroft-gault"):
        res = compute_many(slug, frame, columns={k: v for k, v in columns.items()
                                                 if k in {i.name for i in get_registry().calculators[slug].inputs}}, variant="benchmark")
        assert res.attrs["row_by_row"] == 0 and res["error"].isna().all(), slug


def test_round_array_is_round_number_to_the_bit() -> None:
    """The columnar rounding on ties, near-ties, tiny, zero, huge and non-finite numbers."""
    from solver.library.units import round_number
    from solver.library.vectorised import round_array

    rule = get_registry().units.rounding
    rng = np.random.default_rng(11)
    scale = 10.0 ** rule.decimals
    ties = (rng.integers(-10**7, 10**7, 3000) + 0.5) / scale
    near = np.concatenate([np.nextafter(ties, np.inf), np.nextafter(ties, -np.inf)])
    wide = rng.lognormal(0, 4, 5000) * rng.choice([-1, 1], 5000)
    tiny = rng.uniform(-1, 1, 500) * rule.small_below
    x = np.concatenate([ties, near, wide, tiny, [0.0, -0.0, 1e300, -1e300, 2.0 ** 60, np.inf, -np.inf, np.nan]])
    got = round_array(x, rule)
    for v, g in zip(x.tolist(), got.tolist()):
        if math.isfinite(v):
            assert _same(g, float(round_number(v, rule))), (v, g)
        else:
            assert not math.isfinite(g)


def test_arithmetic_coding_gives_the_values_back() -> None:
    """elementwise's coding without a hash pass (whole numbers, tenths, hundredths): every row's value back, bit for
    bit; anything else (zeros, negatives, finer decimals, NaN, wide ranges) is left to pandas' factorize."""
    from solver.library.vectorised import _factorize

    rng = np.random.default_rng(3)
    n = 5000
    cases = [rng.integers(18, 95, n).astype(float), np.round(rng.uniform(0.3, 12, n), 2),
             np.round(rng.uniform(0.2, 30, n), 1), np.round(rng.uniform(0.3, 12, n), 3), rng.uniform(-5, 5, n).round(1) + 0.0,
             np.concatenate([[0.0], rng.integers(1, 9, n).astype(float)]),
             np.concatenate([[np.nan], rng.integers(1, 9, n).astype(float)]), rng.integers(1, 10**6, n).astype(float)]
    for a in cases:
        codes, uniques = _factorize(a)
        back = np.asarray(uniques, dtype=float)[codes]
        assert all(_same(x, y) for x, y in zip(back.tolist(), a.tolist()))


@given(st.lists(st.floats() | st.sampled_from([0.0, -0.0, math.nan, -math.nan]) | st.integers(-3, 3).map(float),
                min_size=1, max_size=300))
def test_factorize_gives_every_value_back_bit_for_bit(xs: list[float]) -> None:
    """`vectorised.factorize` (the grouping before a Python function runs once per distinct value): every row's
    value comes back to the bit, -0.0 apart from 0.0 (pandas' factorize merges them: the first seen stood for
    both), one code per distinct value; integers too."""
    from solver.library.vectorised import factorize

    a = np.array(xs, dtype=float)
    codes, uniques = factorize(a)
    assert np.array_equal(np.asarray(uniques)[codes].view(np.int64), a.view(np.int64))
    assert len(uniques) == len(set(a.view(np.int64).tolist()))
    ints = np.rint(np.nan_to_num(a)).astype(np.int64)
    codes, uniques = factorize(ints)
    assert np.array_equal(np.asarray(uniques)[codes], ints) and len(uniques) == len(set(ints.tolist()))


def test_factorize_codes_alike_by_table_hash_and_sort(monkeypatch) -> None:
    """`vectorised.factorize` codes integers three ways (a table of a short range; pandas' hash when pandas is
    imported; numpy's sort when it is not) and every way gives each row's value back, one code per distinct value."""
    import sys

    from solver.library import vectorised

    rng = np.random.default_rng(11)
    cases = [rng.integers(730_000, 740_000, 5000), rng.integers(-2**62, 2**62, 5000),
             rng.normal(size=5000).round(2) * np.where(rng.random(5000) < 0.1, -0.0, 1.0), np.zeros(0, dtype=np.int64),
             np.array([2**63 - 1, -2**63, 0])]
    for hide in (False, True):
        if hide:
            monkeypatch.delitem(sys.modules, "pandas")
        for a in cases:
            codes, uniques = vectorised.factorize(a)
            bits = (lambda x: np.asarray(x).view(np.int64)) if a.dtype.kind == "f" else np.asarray
            assert np.array_equal(bits(np.asarray(uniques)[codes]), bits(a))
            assert len(uniques) == len(set(bits(a).tolist()))
    assert "pandas" not in sys.modules  # (the sort, with pandas hidden, never imported it)


def test_elementwise_keeps_the_sign_of_zero() -> None:
    """A function that tells -0.0 from 0.0 (a cube, copysign) gets each row's own zero, as `compute` does."""
    from solver.library.vectorised import elementwise

    x = np.array([0.0, -0.0, 2.0, -0.0, 0.0])
    assert elementwise(lambda v: math.copysign(1.0, v), x).tolist() == [1.0, -1.0, 1.0, -1.0, 1.0]
    assert [math.copysign(1.0, v) for v in elementwise(lambda v: v ** 3, x).tolist()] == [1.0, -1.0, 1.0, -1.0, 1.0]


@given(st.lists(st.tuples(st.one_of(st.floats(), st.integers(-10**6, 10**6)), st.booleans(),
                          st.sampled_from([None, "kg", "lbs", "mg/dL", math.nan]), st.booleans()), min_size=1, max_size=40),
       st.sampled_from(["array", "coded", "fixed", "none"]), st.data())
def test_cells_read_a_column_at_a_time_equal_cell_by_cell(spec, layout, data) -> None:
    """`cells_at` (the rows `compute` answers, built a column at a time) gives each row's `cell_at`: NaN not given,
    ints among floats, units by array, codes, one unit or none, odd cells as given; `Coded` and `Triples` too."""
    from solver.library.vectorised import Coded, Pair, Triples, cell_at, cells_at

    values = np.array([float(v) for v, *_ in spec])
    ints = np.array([type(v) is int and k for v, k, _, _ in spec])
    unit_list = [u for _, _, u, _ in spec]
    distinct = [u for u in dict.fromkeys(unit_list) if isinstance(u, str)]
    units: Any = {"array": np.array(unit_list, dtype=object), "fixed": "kg", "none": None,
                  "coded": Coded(np.array([distinct.index(u) if isinstance(u, str) else -1 for u in unit_list]),
                                 distinct)}[layout]
    odd = np.array([[v, "ft", 1, "in"] if o else None for v, _, _, o in spec] + [None], dtype=object)[:-1]
    rows = np.array(data.draw(st.lists(st.integers(0, len(spec) - 1), max_size=60)), dtype=np.intp)
    for column in (Pair(values, units, ints if ints.any() else None, odd if any(o for *_, o in spec) else None),
                   Pair(np.array([int(v) for v in values.tolist()], dtype=object) if np.isfinite(values).all() else
                        values.astype(object), units),
                   Coded(np.array([k - 1 for k in range(len(spec))]), [f"option {k}" for k in range(len(spec))]),
                   Triples(Coded(np.array([(k % 3) - 1 for k in range(len(spec))]), ["Hydrocortisone IV", "Dex"]),
                           values, ints if ints.any() else None, Coded(np.zeros(len(spec), dtype=np.int64), ["mg"])),
                   [c for c in spec]):
        got, want = cells_at(column, rows), [cell_at(column, i) for i in rows.tolist()]
        assert len(got) == len(want) and all(_same_cell(a, b) for a, b in zip(got, want)), (got, want)


def _same_cell(a: Any, b: Any) -> bool:
    """Cells equal and of one type (5 and 5.0 differ), NaN equal to NaN."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_cell(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b or a is b


@pytest.mark.parametrize("slug", COLUMNAR_SLUGS)
def test_cohort_sized_table_equals_compute(slug: str) -> None:
    """A cohort of recorded-precision values, large enough for the arithmetic coding (bench/columnar.py's table):
    every row equal to `compute`'s, value and type."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "columnar.py"
    spec = importlib.util.spec_from_file_location("bench_columnar", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    frame, mapping = bench.table(slug, 6000, seed=7)
    variant = "published" if slug == "creatinine-clearance-cockcroft-gault" else "benchmark"
    res = compute_many(slug, frame, variant=variant, columns=mapping)
    if slug in bench.SETUPS:  # the hand-written cohorts are clean: no row leaves numpy
        assert res.attrs["row_by_row"] == 0, slug
    for got, err, ents in zip(res["value"].tolist(), res["error"].tolist(), bench.entities(frame, mapping)):
        value, error = _expected(slug, ents, variant)
        assert err == error and _same(got, value), (ents, got, value, err, error)


def test_a_long_text_column_is_coded_in_slices_as_in_one_pass(monkeypatch) -> None:
    """Arrow text columns long enough are coded slice by slice on a thread pool: the codes are the one pass's,
    and a cell outside the options in any slice (here the last) still hands the column to pandas."""
    from solver.library import batch

    rng = np.random.default_rng(7)
    options = ["Black", "White", "Other"]
    cells = pd.Series(rng.choice(options, 5_003), dtype="string[pyarrow]")
    one_pass = batch._option_codes(cells, options)
    monkeypatch.setattr(batch, "_SLICE_ROWS", 1_000)
    monkeypatch.setattr(batch, "cores", lambda: 3)
    sliced = batch._option_codes(cells, options)
    assert one_pass is not None and sliced is not None and sliced.dtype == np.int8
    assert np.array_equal(sliced, one_pass)
    assert [options[k] for k in sliced[:50]] == cells[:50].tolist()
    odd = cells.copy()
    odd.iloc[-1] = "Asian"
    assert batch._option_codes(odd, options) is None
    frame = pd.DataFrame({"age": 60.0, "sex": pd.Series(rng.choice(["Male", "Female"], 5_003), dtype="string[pyarrow]"),
                          "creatinine": 1.1, "Race": cells})
    got = compute_many("mdrd-gfr", frame, columns={"age": ("age", "years"), "creatinine": ("creatinine", "mg/dL")}, variant="benchmark")
    for i in (0, 2_500, 5_002):
        ents = {"age": [60.0, "years"], "sex": frame["sex"][i], "creatinine": [1.1, "mg/dL"], "Race": cells[i]}
        assert got["value"][i] == compute("mdrd-gfr", ents, variant="benchmark").value


def test_a_forked_child_codes_long_columns_with_a_pool_of_its_own(monkeypatch) -> None:
    """The slices' thread pool made in this process is not inherited into a fork (its threads are not): a child
    that codes a long column after the fork still gets its answer instead of waiting for ever."""
    import multiprocessing as mp

    from solver.library import batch

    monkeypatch.setattr(batch, "_SLICE_ROWS", 1_000)
    monkeypatch.setattr(batch, "cores", lambda: 2)
    cells = pd.Series(["Male", "Female"] * 2_500, dtype="string[pyarrow]")
    expected = batch._option_codes(cells, ["Male", "Female"])  # makes the pool here, before the fork
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(batch._option_codes, (cells, ["Male", "Female"])).get(timeout=30)
    assert expected is not None and np.array_equal(got, expected)


def test_chunks_run_side_by_side_give_the_one_at_a_time_answers_and_report_progress_in_order(monkeypatch) -> None:
    """A long table's columnar chunks run on the thread pool: values, row errors (refused rows go through
    `compute`) and the progress steps are those of the chunks run one after another."""
    from solver.library import table_compute

    rng = np.random.default_rng(11)
    n = 10_007
    creatinine = np.round(rng.lognormal(0.1, 0.5, n), 2)
    creatinine[[5, 4_000, 10_006]] = [-1.0, np.nan, 99_999.0]  # refused rows in the first, a middle, the last chunk
    frame = pd.DataFrame({"age": rng.integers(18, 95, n).astype(float), "sex": rng.choice(["Male", "Female"], n),
                          "creatinine": creatinine})
    cols = {"age": ("age", "years"), "creatinine": ("creatinine", "mg/dL")}
    monkeypatch.setattr(table_compute, "VCHUNK", 1_000)
    results, steps = {}, {}
    for cores in (1, 2):
        monkeypatch.setattr(table_compute, "cores", lambda c=cores: c)
        seen: list[int] = []
        results[cores] = compute_many("ckd-epi-2021", frame, columns=cols, progress=seen.append, variant="benchmark")
        steps[cores] = seen
    one, two = results[1], results[2]
    assert steps[1] == steps[2] == [1_000] * 10 + [7]
    assert one["error"].tolist() == two["error"].tolist()
    assert [i for i, e in enumerate(two["error"].tolist()) if e is not None] == [5, 4_000, 10_006]  # nan: missing
    assert all(_same(a, b) for a, b in zip(one["value"].tolist(), two["value"].tolist()))
    for i in (0, 999, 1_000, 5_555, 10_005):
        ents = {"age": [float(frame["age"][i]), "years"], "sex": frame["sex"][i],
                "creatinine": [float(creatinine[i]), "mg/dL"]}
        assert _same(two["value"][i], compute("ckd-epi-2021", ents, variant="benchmark").value)


def test_elementwise_over_continuous_arguments_is_the_python_function_row_by_row() -> None:
    """A float argument with a distinct value per row (a sum of logarithms) is mapped row by row instead of by
    distinct values: every row is still the Python function's own double, and a row it refuses (a log of a
    negative, an exp that overflows, a complex power, NaN) is NaN, as in the distinct-value path; rows outside
    `ok` are NaN and never computed."""
    import operator

    from solver.library import vectorised

    rng = np.random.default_rng(5)
    n = 20_000
    x = rng.uniform(-3, 3, n)
    x[[0, 17, 9_999, n - 1]] = [-1.5, 0.0, np.nan, 1e4]
    ok = rng.random(n) < 0.9
    assert vectorised._continuous(x) and vectorised._arithmetic(x) is None
    for fn, args in ((math.log, (x,)), (math.exp, (x * 300,)), (operator.pow, (x, 0.5)),
                     (operator.pow, (0.88, np.abs(x))), (operator.pow, (np.where(x > 0, 0.9, 0.8), x))):
        for mask in (None, ok):
            got = vectorised.elementwise(fn, *args, ok=mask)
            cols = [a.tolist() if isinstance(a, np.ndarray) else [a] * n for a in args]
            for i, call in enumerate(zip(*cols)):
                try:
                    want = float(fn(*call))
                except (ValueError, ZeroDivisionError, OverflowError, TypeError):
                    want = math.nan
                if mask is not None and not mask[i]:
                    want = math.nan
                assert _same(float(got[i]), want), (fn, i, call, got[i], want)



def test_weeks_and_days_are_lists_of_their_own_and_the_collector_is_left_as_found(monkeypatch) -> None:
    """Gestational age's [weeks, days] column is made with the cyclic collector paused (chunks side by side share
    the pause): every cell is a list of two ints of its own, and the collector is on or off afterwards as it was."""
    import gc

    from solver.library import table_compute

    monkeypatch.setattr(table_compute, "VCHUNK", 500)
    monkeypatch.setattr(table_compute, "cores", lambda: 2)
    days = pd.to_datetime("2024-01-01") + pd.to_timedelta(np.arange(2_000) % 300, unit="D")
    frame = pd.DataFrame({"Current Date": "10/01/2024", "Last menstrual date": days.strftime("%m/%d/%Y")})
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            gc.enable() if enabled else gc.disable()
            res = compute_many("estimated-gestational-age", frame, variant="benchmark")
            assert gc.isenabled() is enabled
            cells = res["value"].tolist()
            assert len({id(c) for c in cells}) == len(cells)
            assert all(type(c) is list and len(c) == 2 and all(type(x) is int for x in c) for c in cells)
            for i in (0, 777, 1_999):
                ents = {"Current Date": "10/01/2024", "Last menstrual date": frame["Last menstrual date"][i]}
                assert cells[i] == list(compute("estimated-gestational-age", ents, variant="benchmark").value)
    finally:
        gc.enable() if was else gc.disable()


@pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning")  # ("\\q", read by ast.literal_eval)
def test_many_distinct_json_pairs_read_by_pyarrow_as_json_loads_reads_them(monkeypatch) -> None:
    """A JSON column of many distinct texts is read with pyarrow's regular expressions and cast: every cell (value,
    its type, unit) is what parsing each text with `json.loads` gives, for numbers of every form (ints, -0,
    exponents, subnormals, 17 digits, ints beyond 10^15, 1e400, NaN), escaped and odd units and texts that are no
    pair at all."""
    import random

    from solver.library import batch, json_cells

    rnd = random.Random(3)

    def number() -> str:
        r = rnd.random()
        if r < 0.3:
            return repr(rnd.uniform(-1e3, 1e3))
        if r < 0.4:
            return str(rnd.randint(-10**6, 10**6))
        if r < 0.45:
            return str(rnd.randint(10**14, 10**17))
        if r < 0.55:
            return rnd.choice(["-0", "0", "-0.0", "1e400", "1E5", "2.5e-320", "1.7976931348623157e308", "01", "1.",
                               ".5", "NaN", "Infinity", "true", "4.9e-324", "123456789012345678901234567890"])
        if r < 0.6:
            return f"{rnd.uniform(0, 1e-300):.17g}"
        return f"{rnd.uniform(0, 500):.{rnd.randint(0, 20)}f}"

    units = ['"mg/dL"', '"µmol/L"', '"\\u00b5mol/L"', '"k\\"g"', '"a\tb"', '"x\ny"', "'mg'", '""', '"\\q"',
             '"\\ud800"']
    texts: list[Any] = []
    for _ in range(12_000):
        sp = rnd.choice(["", " ", "  "])
        texts.append(f"[{sp}{number()}{sp},{rnd.choice(['', ' ', chr(9)])}{rnd.choice(units)}{sp}]"
                     if rnd.random() < 0.97 else rnd.choice(["[1, 2, 3]", "[", "[1]", "abc", "[[1, 'kg']]"]))
    column = pd.Series(texts + [None, np.nan], dtype=object)
    fast = json_cells.json_pairs(list(pd.unique(column.dropna())))
    assert fast is not None and fast[3].sum() > 3_000  # a third of the texts matched by pyarrow
    got = batch._pairs(column)
    monkeypatch.setattr(json_cells, "MANY_TEXTS", 10**9)  # every text through json.loads
    want = batch._pairs(column)
    assert got is not None and want is not None
    for i in range(len(column)):
        a, b = got.cell(i), want.cell(i)
        assert type(a) is type(b) and repr(a) == repr(b), (i, column[i], a, b)
        if isinstance(a, list):
            assert [type(x) for x in a] == [type(x) for x in b], (i, column[i])


@pytest.mark.parametrize("slug", ["pooled-cohort-equations", "prevent-10-year", "framingham-hard-chd"])
def test_risk_equations_over_continuous_scores_with_bad_cells_equal_compute(slug: str) -> None:
    """The risk equations' exp and pow over a cohort large enough for the row-by-row mapping (a distinct score per
    row), with bad cells mixed in (missing, text, out of range, an unknown unit, ages outside the equations'
    range): every value and every error is `compute`'s."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "columnar.py"
    spec = importlib.util.spec_from_file_location("bench_columnar", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    frame, mapping = bench.table(slug, 6000, seed=11)
    cells, pmap = bench.pair_frame(frame, mapping, as_json=False)
    rng = np.random.default_rng(11)
    unit_cols = [c for c in cells.columns if c.endswith(" cells")]
    for k, row in enumerate(rng.choice(len(cells), 60, replace=False).tolist()):
        col = unit_cols[k % len(unit_cols)]
        cell = cells.at[row, col]
        cells.at[row, col] = [None, [cell[0], "furlongs"], "abc", [cell[0] * 50, cell[1]], [10.0, cell[1]]][k % 5]
    res = compute_many(slug, cells, columns=pmap, variant="benchmark")
    assert res.attrs["vectorised"]
    names = {v: k for k, v in pmap.items()}
    for i, (got, err) in enumerate(zip(res["value"].tolist(), res["error"].tolist())):
        ents = {names[c]: cells.at[i, c] for c in cells.columns if c in names and cells.at[i, c] is not None}
        value, error = _expected(slug, {k: v.item() if hasattr(v, "item") else v for k, v in ents.items()}, "benchmark")
        assert err == error and _same(got, value), (i, ents, got, value, err, error)


@pytest.mark.parametrize("slug", ["morphine-milligram-equivalents", "steroid-conversion"])
@pytest.mark.parametrize("layout", ["cells", "json"])
def test_dose_inputs_with_bad_cells_mixed_in_equal_compute(slug: str, layout: str) -> None:
    """The reference cases of the dose calculators, repeated, with cells of other forms, unknown names and units,
    frequencies without their dose, doses without their frequency and rows with no dose mixed in: every row's value
    and error is `compute`'s, in both variants, and the clean rows stay in numpy."""
    import random

    from tests.solver.conftest import reference_cases

    reg = get_registry()
    cid = reg.calculators[slug].medcalc_id
    base = [c["entities"] for c in reference_cases() if c["calculator_id"] == cid]
    rnd = random.Random(31)
    ents: list[dict[str, Any]] = []
    for k in range(600):
        e = dict(base[k % len(base)])
        r = rnd.random()
        if r < 0.1:  # a cell of another form
            name = "input steroid" if slug == "steroid-conversion" else rnd.choice(sorted(e))
            e[name] = rnd.choice(ODD_STEROIDS if slug == "steroid-conversion" else ODD_DOSES)
        elif r < 0.15:  # an input not given (MME: a dose without its frequency, or the reverse)
            del e[rnd.choice(sorted(e))]
        elif r < 0.17 and slug == "morphine-milligram-equivalents":  # no opioid at all
            e = {}
        elif r < 0.2 and slug == "morphine-milligram-equivalents":
            e[rnd.choice(sorted(e))] = [2, "per week"]
        ents.append(dict(sorted(e.items())))
    names = sorted({k for e in ents for k in e})
    frame = pd.DataFrame({n: pd.Series([(json.dumps(e[n]) if layout == "json" and n in e else e.get(n))
                                        for e in ents], dtype=object) for n in names})
    for variant in ("benchmark", "published"):
        res = compute_many(slug, frame, variant=variant)
        assert res.attrs["vectorised"]
        for got, err, e in zip(res["value"].tolist(), res["error"].tolist(), ents):
            if layout == "json":
                texts = {k: json.dumps(v) for k, v in e.items()}  # (only a text starting with "[" is parsed)
                e = {k: json.loads(t) if t.startswith("[") else t for k, t in texts.items()}
            value, error = _expected(slug, e, variant)
            assert err == error and _same(got, value), (variant, e, got, value, err, error)
        # the rows left to `compute`: refused ones, and those where an int among floats could make the result an int
        ints = sum(any(isinstance(c, list) and any(type(x) is int for x in c) for c in e.values()) for e in ents)
        assert res.attrs["row_by_row"] <= int(res["error"].notna().sum()) + ints, res.attrs


def test_sparse_pair_cells_and_triples_read_as_given() -> None:
    """A column of [number, unit] lists with empty cells (None, NaN) and one of [name, number, unit] lists: every
    row's cell as `compute_many` hands it to `compute` (an int stays an int), the empty ones not given."""
    from solver.library import batch
    from solver.library.vectorised import MISSING

    pairs = [[10, "mg"], None, [2.5, "µg"], float("nan"), [3, "mg"], None]
    got = batch._pairs(pd.Series(pairs, dtype=object))
    assert got is not None
    for i, c in enumerate(pairs):
        cell = got.cell(i)
        assert cell is MISSING if not isinstance(c, list) else (cell == c and [type(x) for x in cell] == [type(x) for x in c])
    named = [["PredniSONE PO", 10, "mg"], None, ["Cortisone PO", 2.5, "g"], ["PredniSONE PO", 7, "µg"]]
    for column in (named, [None if c is None else json.dumps(c) for c in named]):
        t = batch._triples(pd.Series(column, dtype=object))
        assert t is not None
        for i, c in enumerate(named):
            cell = t.cell(i)
            assert cell is MISSING if c is None else (cell == c and [type(x) for x in cell] == [type(x) for x in c])
    assert batch._triples(pd.Series([["PredniSONE PO", True, "mg"]], dtype=object)) is None  # (a bool: cell by cell)
