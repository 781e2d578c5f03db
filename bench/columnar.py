"""Columnar `compute_many` on 1,000,000 rows of plain numeric columns with a fixed unit, every calculator.

Each of the registry's calculators is listed: a columnar one is timed on its hand-written setup (the
cohort's columns) or on columns generated from its registry inputs (MME's opioid doses as numbers with a fixed
unit, steroid conversion's [name, dose, unit] list cells: `_doses`); the others say they run row by row.

Against, in the same run and on the same table:
(a) `compute` in a Python loop, one row at a time, timed on --loop-rows rows and scaled;
(b) `clincalc.batch` (PyPI `clincalc`) where it has the calculator, timed on --clincalc-rows rows and
    scaled (its MELD is MELD without sodium, its Cockcroft-Gault uses actual body weight: compared
    with our `published` variant there). Each side is the best of --repeat timings, taken in turn.
    Every value of the loop subsample must equal compute_many's to the bit (checked here too).

    python bench/columnar.py [--rows 1000000] [--loop-rows 3000] [--clincalc-rows 20000] [--repeat 3] [--only SLUG]
                             [--pairs] [--format json]
    python bench/columnar.py --frames benchmark [--split FILE] [--rows 1000000] [--sample-rows 2000] [--only SLUG]

`--frames benchmark` times frames built from the benchmark's own entities instead (bench/benchmark_frames.py);
`--frames parquet` times the whole `formula batch` process on Parquet files of them (bench/parquet_frames.py):

    python bench/columnar.py --frames parquet [--rows 1000000] [--loop-rows 3000] [--repeat 3] [--only SLUG]

Prints per calculator the ratios loop/compute_many (issue 31: >= 30; as `[value, unit]` cells or their JSON text,
--pairs: >= 20) and clincalc/compute_many. With --pairs, `ceiling` is the loop over the time `entity_columns` alone
takes to read that layout's cells into arrays: the ratio compute_many would reach if its kernel, rounding and checks
took no time at all. A summary at the end counts the calculators that meet each target and names the others.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from registry.loader import get_registry  # noqa: E402
from solver.library import CalculatorError, compute, compute_many  # noqa: E402
from solver.library.batch import entity_columns  # noqa: E402
from solver.library.vectorised import columnar  # noqa: E402

FLAGS = ["Congestive Heart Failure", "Hypertension history", "Stroke", "Transient Ischemic Attacks History",
         "Thromboembolism history", "Vascular disease history", "Diabetes history",
         "Dialysis at least twice in the past week"]
HAS_BLED_FLAGS = ["Hypertension", "Liver disease criteria for the HAS-BLED rule",
                  "Renal disease criteria for the HAS-BLED rule", "Prior major bleeding or predisposition to bleeding",
                  "Labile international normalized ratio", "Medication usage predisposing to bleeding"]


def cohort(n: int, seed: int = 20261201) -> pd.DataFrame:
    """Plain numeric columns (one unit per column), with the precision of recorded data."""
    rng = np.random.default_rng(seed)
    data: dict[str, Any] = {
        "sex": rng.choice(["Male", "Female"], n), "Race": rng.choice(["Black", "White", "Other"], n),
        "age": rng.integers(18, 95, n).astype(float), "weight": np.round(rng.normal(78, 17, n).clip(38, 180), 1),
        "height": np.round(rng.normal(170, 10, n).clip(140, 205), 1),
        "creatinine": np.round(rng.lognormal(0.1, 0.5, n).clip(0.3, 12), 2),
        "sbp": rng.integers(85, 200, n).astype(float), "dbp": rng.integers(45, 120, n).astype(float),
        "sodium": rng.integers(120, 156, n).astype(float), "chloride": rng.integers(85, 120, n).astype(float),
        "bicarbonate": rng.integers(8, 36, n).astype(float), "calcium": np.round(rng.normal(9.2, 0.8, n), 1),
        "albumin": np.round(rng.normal(3.6, 0.7, n).clip(1.0, 5.5), 1),
        "bilirubin": np.round(rng.lognormal(0.3, 0.8, n).clip(0.2, 30), 1),
        "inr": np.round(rng.normal(1.4, 0.4, n).clip(0.8, 5), 1),
        "hr": rng.integers(40, 160, n).astype(float), "qt": rng.integers(300, 560, n).astype(float),
        "drinks": rng.integers(0, 20, n).astype(float),
    }
    for f in FLAGS + HAS_BLED_FLAGS:
        data[f] = rng.random(n) < 0.2
    return pd.DataFrame(data)


# slug -> columns= mapping (entity -> column or (column, fixed unit))
SETUPS: dict[str, dict[str, Any]] = {
    "body-mass-index": {"weight": ("weight", "kg"), "height": ("height", "cm")},
    "ideal-body-weight": {"sex": "sex", "height": ("height", "cm"), "weight": ("weight", "kg")},
    "adjusted-body-weight": {"sex": "sex", "weight": ("weight", "kg"), "height": ("height", "cm")},
    "has-bled": {"age": ("age", "years"), "Number of Alcoholic Drinks Per Week": "drinks", "Stroke": "Stroke",
                 **{f: f for f in HAS_BLED_FLAGS}},
    "ckd-epi-2021": {"age": ("age", "years"), "sex": "sex", "creatinine": ("creatinine", "mg/dL")},
    "mdrd-gfr": {"age": ("age", "years"), "sex": "sex", "creatinine": ("creatinine", "mg/dL"), "Race": "Race"},
    "creatinine-clearance-cockcroft-gault": {"age": ("age", "years"), "sex": "sex", "weight": ("weight", "kg"),
                                             "height": ("height", "cm"), "creatinine": ("creatinine", "mg/dL")},
    "mean-arterial-pressure": {"Systolic Blood Pressure": ("sbp", "mm hg"), "Diastolic Blood Pressure": ("dbp", "mm hg")},
    "anion-gap": {"Sodium": ("sodium", "mmol/L"), "Chloride": ("chloride", "mmol/L"),
                  "Bicarbonate": ("bicarbonate", "mmol/L")},
    "calcium-correction": {"Calcium": ("calcium", "mg/dL"), "Albumin": ("albumin", "g/dL")},
    "cha2ds2-vasc": {"age": ("age", "years"), "sex": "sex", **{f: f for f in FLAGS[:7]}},
    "meld-na": {"creatinine": ("creatinine", "mg/dL"), "Bilirubin": ("bilirubin", "mg/dL"),
                "international normalized ratio": "inr", "Sodium": ("sodium", "mmol/L"),
                "Dialysis at least twice in the past week": "Dialysis at least twice in the past week"},
    "qtc-bazett": {"Heart Rate or Pulse": ("hr", "beats per minute"), "QT Interval": ("qt", "msec")},
}


# input -> the suffix of the registry constants min_<x>/max_<x> that bound the range an equation covers
COVERED = {"age": "age", "Total cholesterol": "total_cholesterol", "high-density lipoprotein cholesterol": "hdl",
           "Systolic Blood Pressure": "sbp", "estimated glomerular filtration rate": "egfr",
           "Body Mass Index (BMI)": "bmi", "Triglycerides": "triglycerides"}


def _covered(calc: Any, spec: Any) -> tuple[float, float] | None:
    """The range of `spec` the calculator's equations cover (registry constants), where it names one."""
    key = COVERED.get(spec.name)
    consts = {k: c.value for k, c in calc.constants.items()}
    if key is None or (f"min_{key}" not in consts and f"max_{key}" not in consts):
        return None
    lo, hi = spec.range if spec.range is not None else (0.0, 1000.0)
    return float(consts.get(f"min_{key}", lo)), float(consts.get(f"max_{key}", hi))


def _generated(spec: Any, n: int, rng: np.random.Generator, covered: tuple[float, float] | None = None
               ) -> tuple[Any, str | None]:
    """A column for an input no hand-written setup covers: values inside its plausible range (or the range its
    equations cover), recorded precision, in its canonical unit (None: a bare value)."""
    kind = spec.kind.value
    if covered is not None and kind in ("age", "quantity", "measurement"):
        values = rng.integers(int(covered[0]), int(covered[1]) + 1, n).astype(float) if kind == "age" else \
            np.round(rng.uniform(covered[0], covered[1], n), 1)
        return values, "years" if kind == "age" else spec.unit
    lo, hi = spec.range if spec.range is not None else (0.0, 100.0)
    if kind == "boolean":
        return rng.random(n) < 0.25, None
    if kind == "date":  # MM/DD/YYYY within a year and a half
        days = pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.integers(0, 540, n), unit="D")
        return days.strftime("%m/%d/%Y").to_numpy(dtype=object), None
    if kind == "choice":
        return rng.choice(spec.options, n), None
    if kind == "count":
        return rng.integers(int(lo), int(min(hi, lo + 40)) + 1, n), None
    if kind == "number":
        return np.round(rng.uniform(lo, min(hi, lo + 40), n), 1), None
    if kind == "age":
        return rng.integers(18, 95, n).astype(float), "years"
    if kind == "weight":
        return np.round(rng.normal(78, 17, n).clip(38, 180), 1), "kg"
    if kind == "height":
        return np.round(rng.normal(170, 10, n).clip(140, 205), 1), "cm"
    if kind == "temperature":
        return np.round(rng.uniform(35, 41, n), 1), "degrees celsius"
    if kind == "count per volume":
        return np.round(rng.uniform(lo / 1e6, hi / 1e6 / 4, n), 0), "µL"
    unit = spec.unit if not spec.accepted_units or spec.unit in spec.accepted_units else spec.accepted_units[0]
    span = (hi - lo) / 4  # the lower part of the plausible range: most rows ordinary, some extreme
    return np.round(rng.uniform(lo + span / 4, lo + 2 * span, n), 1), unit


def _doses(calc: Any, n: int, rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Any]]:
    """Columns of the dose inputs (special forms): MME's opioids, one to three a row (a dose in the input's unit,
    doses per day 1 to 4; empty where not taken), steroid conversion's [name, dose, 'mg'] cells."""
    extra: dict[str, Any] = {}
    mapping: dict[str, Any] = {}
    if calc.slug == "steroid-conversion":
        spec = next(i for i in calc.inputs if i.name == "input steroid")
        names = list(calc.tables["equivalence_factor"].lookup or {})
        drugs, doses = rng.choice(names, n).tolist(), np.round(rng.uniform(1, 200, n), 1).tolist()
        extra["in:input steroid"] = pd.Series([[d, v, spec.unit] for d, v in zip(drugs, doses)], dtype=object)
        mapping["input steroid"] = "in:input steroid"
        return extra, mapping
    drugs = [i.name[: -len(" Dose")] for i in calc.inputs if i.name.endswith(" Dose")]
    taken = rng.random((n, len(drugs))) < 1.5 / len(drugs)
    taken[~taken.any(axis=1), 0] = True  # every row takes one at least (a row with none is refused)
    for k, drug in enumerate(drugs):
        spec = next(i for i in calc.inputs if i.name == drug + " Dose")
        if spec.range is not None and spec.range[1] <= 1:  # the patch: its strength in µg
            values, unit = rng.choice([12.0, 25.0, 50.0, 75.0, 100.0], n), "µg"
        elif spec.unit == "µg":
            values, unit = np.round(rng.uniform(100, 800, n), 0), "µg"
        else:
            values, unit = np.round(rng.uniform(1, 60, n), 1), "mg"
        extra[f"in:{drug} Dose"] = np.where(taken[:, k], values, np.nan)
        extra[f"in:{drug} Dose Per Day"] = np.where(taken[:, k], rng.integers(1, 5, n).astype(float), np.nan)
        mapping[f"{drug} Dose"] = (f"in:{drug} Dose", unit)
        mapping[f"{drug} Dose Per Day"] = (f"in:{drug} Dose Per Day", "per day")
    return extra, mapping


def table(slug: str, n: int, seed: int = 20261201) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The cohort and the `columns=` mapping of one calculator: its hand-written setup, or columns generated from
    its registry inputs (every input, optional ones included)."""
    f = cohort(n, seed)
    if slug in SETUPS:
        return f, SETUPS[slug]
    rng = np.random.default_rng(seed + 1)
    mapping: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    calc = get_registry().calculators[slug]
    if any(spec.kind.value == "special" for spec in calc.inputs):
        extra, mapping = _doses(calc, n, rng)
    for spec in calc.inputs:
        if spec.name == "*" or spec.kind.value == "special":
            continue
        values, unit = _generated(spec, n, rng, _covered(calc, spec))
        extra[f"in:{spec.name}"] = values
        mapping[spec.name] = (f"in:{spec.name}", unit) if unit is not None else f"in:{spec.name}"
    return pd.concat([f, pd.DataFrame(extra)], axis=1), mapping


def pair_frame(f: pd.DataFrame, mapping: dict[str, Any], *, as_json: bool) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The columns with a unit as one column of [value, unit] cells (or their JSON text); the others as they are."""
    out, pmap = {}, {}
    for name, spec in mapping.items():
        col, unit = spec if isinstance(spec, tuple) else (spec, None)
        if unit is None and f[col].dtype == object and isinstance(f[col].iloc[0], list):  # cells already
            out[col] = pd.Series([json.dumps(c) for c in f[col].tolist()], dtype=object) if as_json else f[col]
            pmap[name] = col
            continue
        if unit is None:
            out[col], pmap[name] = f[col], col
            continue
        cells = [None if v != v else [v, unit] for v in f[col].tolist()]  # (NaN: not given)
        out[f"{col} cells"] = pd.Series([None if c is None else json.dumps(c) for c in cells] if as_json else cells,
                                        dtype=object)
        pmap[name] = f"{col} cells"
    return pd.DataFrame(out), pmap


def clincalc_frame(slug: str, f: pd.DataFrame) -> tuple[str, pd.DataFrame] | None:
    sex = f["sex"].str.lower()
    if slug == "body-mass-index":
        return "bmi", pd.DataFrame({"weight_kg": f["weight"], "height_cm": f["height"]})
    if slug == "ckd-epi-2021":
        return "egfr", pd.DataFrame({"age": f["age"].astype(int), "sex": sex, "creatinine": f["creatinine"],
                                     "creatinine_unit": "mg/dL"})
    if slug == "creatinine-clearance-cockcroft-gault":
        return "cockcroft_gault", pd.DataFrame({"age": f["age"].astype(int), "weight_kg": f["weight"], "sex": sex,
                                                "creatinine": f["creatinine"], "creatinine_unit": "mg/dL"})
    if slug == "anion-gap":
        return "anion_gap", pd.DataFrame({"sodium_mmol_l": f["sodium"], "chloride_mmol_l": f["chloride"],
                                          "bicarbonate_mmol_l": f["bicarbonate"]})
    if slug == "calcium-correction":
        return "corrected_calcium", pd.DataFrame({"calcium": f["calcium"], "calcium_unit": "mg/dL",
                                                  "albumin": f["albumin"], "albumin_unit": "g/dL"})
    if slug == "cha2ds2-vasc":
        return "cha2ds2vasc", pd.DataFrame({
            "age": f["age"].astype(int), "sex": sex, "congestive_heart_failure": f["Congestive Heart Failure"],
            "hypertension": f["Hypertension history"], "diabetes": f["Diabetes history"],
            "stroke_tia_thromboembolism": f["Stroke"] | f["Transient Ischemic Attacks History"]
            | f["Thromboembolism history"], "vascular_disease": f["Vascular disease history"]})
    if slug == "meld-na":
        return "meld", pd.DataFrame({"bilirubin": f["bilirubin"], "bilirubin_unit": "mg/dL", "inr": f["inr"],
                                     "creatinine": f["creatinine"], "creatinine_unit": "mg/dL",
                                     "dialysis_twice_past_week": f["Dialysis at least twice in the past week"]})
    return None  # clincalc has no MDRD, mean arterial pressure or QTc Bazett


def entities(f: pd.DataFrame, mapping: dict[str, Any]) -> list[dict[str, Any]]:
    """Each row's entities as `compute_many` hands them to `compute`: in the order of the input names, an empty
    (NaN) cell not given."""
    cols = {k: (v if isinstance(v, tuple) else (v, None)) for k, v in sorted(mapping.items())}
    out = []
    for rec in f.to_dict("records"):
        e = {}
        for name, (col, unit) in cols.items():
            v = rec[col]
            v = v.item() if hasattr(v, "item") else v
            if isinstance(v, float) and math.isnan(v):
                continue
            e[name] = [v, unit] if unit is not None else v
        out.append(e)
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b and type(a) is type(b)


def run_one(slug: str, variant: str, args: argparse.Namespace, clincalc: Any) -> dict[str, Any]:
    f, mapping = table(slug, args.rows)
    sub = f.iloc[: args.loop_rows]
    ents = entities(sub, mapping)
    t_many = t_loop = math.inf
    extra: dict[str, Any] = {}
    for _ in range(args.repeat):  # alternate the sides, best of --repeat each: a busy moment hits both alike
        t = time.perf_counter()
        res = compute_many(slug, f, variant=variant, columns=mapping)
        t_many = min(t_many, time.perf_counter() - t)
        assert res.attrs["vectorised"], slug
        t = time.perf_counter()
        loop = []
        for e in ents:
            try:
                v = compute(slug, e, variant=variant).value
                loop.append(v.isoformat() if hasattr(v, "isoformat") else list(v) if isinstance(v, tuple) else v)
            except CalculatorError:
                loop.append(None)
        t_loop = min(t_loop, (time.perf_counter() - t) * len(f) / len(sub))
    if args.pairs:  # the same rows as [value, unit] cells, and as their JSON text (a CSV of MedCalc-Bench entities)
        for layout in ("pairs", "json"):
            pf, pmap = pair_frame(f, mapping, as_json=layout == "json")
            t_p = t_read = math.inf
            for _ in range(args.repeat):
                t = time.perf_counter()
                pres = compute_many(slug, pf, variant=variant, columns=pmap)
                t_p = min(t_p, time.perf_counter() - t)
                t = time.perf_counter()  # the cells read into arrays alone: no kernel can make the whole faster
                entity_columns(pf, get_registry().calculators[slug], pmap)
                t_read = min(t_read, time.perf_counter() - t)
            extra[f"{layout}_read_s"], extra[f"{layout}_ceiling"] = round(t_read, 3), round(t_loop / t_read, 1)
            assert pres["value"].tolist()[: len(sub)] == res["value"].tolist()[: len(sub)], slug
            extra[f"{layout}_s"], extra[f"{layout}_ratio"] = round(t_p, 3), round(t_loop / t_p, 1)
            extra[f"{layout}_row_by_row"] = pres.attrs["row_by_row"]
    got = res["value"].tolist()[: len(sub)]
    assert all(_same(a, b) for a, b in zip(got, loop)), f"{slug}: compute_many differs from compute"
    row: dict[str, Any] = {"calculator": slug, "columnar": True, "variant": variant, "rows": len(f), "compute_many_s": round(t_many, 3),
                           "row_by_row": res.attrs["row_by_row"], "loop_s_scaled": round(t_loop, 2),
                           "loop_ratio": round(t_loop / t_many, 1), **extra}
    cc = clincalc_frame(slug, f.iloc[: args.clincalc_rows]) if clincalc is not None else None
    if cc is not None:
        name, cframe = cc
        t_cc = math.inf
        for _ in range(args.repeat):
            t = time.perf_counter()
            clincalc.batch(name, cframe)
            t_cc = min(t_cc, (time.perf_counter() - t) * len(f) / len(cframe))
        row.update({"clincalc": name, "clincalc_s_scaled": round(t_cc, 2), "clincalc_ratio": round(t_cc / t_many, 1)})
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows per calculator for compute_many (default 1,000,000)")
    ap.add_argument("--loop-rows", type=int, default=3_000,
                    help="rows the compute loop is timed on, scaled to --rows (default 3,000)")
    ap.add_argument("--clincalc-rows", type=int, default=20_000,
                    help="rows clincalc.batch is timed on, scaled to --rows (default 20,000)")
    ap.add_argument("--repeat", type=int, default=3, help="timings per side, the best kept (default 3)")
    ap.add_argument("--only", action="append", help="calculator slug (repeatable)")
    ap.add_argument("--format", choices=["table", "json"], default="table", help="table for people, json for scripts")
    ap.add_argument("--pairs", action="store_true",
                    help="also time the same rows as [value, unit] cells and as their JSON text")
    ap.add_argument("--frames", choices=["uniform", "benchmark", "parquet"], default="uniform",
                    help="uniform: generated numeric columns (default); benchmark: frames of the benchmark's own "
                         "entities, units varying by row and criteria missing (bench/benchmark_frames.py); parquet: "
                         "the whole formula batch process on Parquet files of those entities (bench/parquet_frames.py)")
    ap.add_argument("--row-group", type=int, default=262_144,
                    help="with --frames parquet: rows per row group of the files written (default 262,144)")
    ap.add_argument("--split", metavar="FILE", help="with --frames benchmark: the test split (CSV or parquet) whose "
                    "entities build the frames (default: the shipped reference cases and one-shot rows)")
    ap.add_argument("--sample-rows", type=int, default=2_000,
                    help="with --frames benchmark: rows of the small frame (default 2,000)")
    args = ap.parse_args()
    if args.frames == "parquet":
        import parquet_frames

        found = parquet_frames.run(args)
        print(json.dumps({"results": found}, indent=2) if args.format == "json" else parquet_frames.table(found, args))
        return 0
    if args.frames == "benchmark":
        import benchmark_frames

        found = benchmark_frames.run(args)
        print(json.dumps({"results": found}, indent=2) if args.format == "json" else benchmark_frames.table(found, args))
        return 0
    try:
        import clincalc
    except ImportError:
        clincalc = None
    reg = get_registry()
    slugs = args.only or sorted(reg.calculators)
    results = []
    for slug in slugs:
        variant = "published" if slug == "creatinine-clearance-cockcroft-gault" else "benchmark"
        if columnar(slug, reg) is None:
            results.append({"calculator": slug, "variant": variant, "columnar": False})
            continue
        small, mapping = table(slug, 50)
        compute_many(slug, small, variant=variant, columns=mapping)  # warm: library functions, registry plans
        results.append(run_one(slug, variant, args, clincalc))
    if args.format == "json":
        print(json.dumps({"results": results}, indent=2))
        return 0
    print(f"{args.rows:,} rows per calculator (plain numeric columns, fixed units); loop timed on {args.loop_rows:,} "
          f"rows and clincalc.batch on {args.clincalc_rows:,}, both scaled (~)")
    pairs = f" {'pairs':>7} {'ceiling':>7} {'json':>7} {'ceiling':>7}" if args.pairs else ""
    print(f"{'calculator':38} {'variant':9} {'compute_many':>12} {'loop~':>8} {'ratio':>7} {'clincalc~':>10} {'ratio':>7}"
          + pairs)
    for r in results:
        if r.get("columnar") is False:
            print(f"{r['calculator']:38} {r['variant']:9} {'row by row (not columnar yet)':>37}")
            continue
        cc = f"{r['clincalc_s_scaled']:>9.2f}s {r['clincalc_ratio']:>6.1f}x" if "clincalc" in r else f"{'n/a':>10} {'':>7}"
        p = (f" {r['pairs_ratio']:>6.1f}x {r['pairs_ceiling']:>6.1f}x {r['json_ratio']:>6.1f}x {r['json_ceiling']:>6.1f}x"
             if args.pairs else "")
        print(f"{r['calculator']:38} {r['variant']:9} {r['compute_many_s']:>11.3f}s {r['loop_s_scaled']:>7.1f}s "
              f"{r['loop_ratio']:>6.1f}x {cc}{p}")
    print(_summary(results, args.pairs))
    return 0


def _summary(results: list[dict[str, Any]], pairs: bool) -> str:
    """How many calculators meet issue 31's targets, and which do not, with their ratios."""
    timed = [r for r in results if r.get("columnar") is not False]
    lines = [_target("loop", timed, "loop_ratio", 30.0)]
    if pairs:
        for layout in ("pairs", "json"):
            lines.append(_target(layout, timed, f"{layout}_ratio", 20.0))
            low = sorted(r["calculator"] for r in timed if r[f"{layout}_ceiling"] < 20.0)
            lines.append(f"  {layout}: reading the cells alone leaves less than 20x for {len(low)}"
                         + (f": {', '.join(low)}" if low else ""))
    return "\n".join(textwrap.fill(line, width=110, subsequent_indent="    ", break_on_hyphens=False) for line in lines)


def _target(label: str, rows: list[dict[str, Any]], key: str, target: float) -> str:
    below = sorted((r for r in rows if r[key] < target), key=lambda r: r[key])
    text = f"{label}: {len(rows) - len(below)} of {len(rows)} at {target:.0f}x or more"
    return text + ("; below: " + ", ".join(f"{r['calculator']} {r[key]:.1f}x" for r in below) if below else "")


if __name__ == "__main__":
    sys.exit(main())
