"""Batch speed: `compute_many` on 100,000 synthetic patients for five calculators, against two baselines.

Baselines, in the same run and on the same rows:
(a) `compute` called in a Python loop, one row at a time: timed on a subsample (--loop-rows) and
    scaled to the full table (printed as scaled);
(b) `clincalc.batch` (PyPI `clincalc`, a Rust engine with a pandas helper), where it has the
    calculator and is installed: timed on --clincalc-rows rows and scaled the same way. Its
    Cockcroft-Gault uses actual body weight, so it is compared with our `published` variant.

The cohort has the precision of recorded data (ages in years, weights to 0.1 kg, heights to
0.1 cm, creatinine to 0.01 mg/dL or whole µmol/L). Every value of the loop subsample must equal
compute_many's (checked here too).

    python bench/batch.py [--rows 100000] [--loop-rows 5000] [--clincalc-rows 20000] [--format json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from registry.loader import get_registry  # noqa: E402
from solver.library import CalculatorError, compute, compute_many  # noqa: E402


def cohort(n: int, seed: int = 20260701) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    unit = rng.choice(["mg/dL", "µmol/L"], n, p=[0.6, 0.4])
    mg = np.round(rng.lognormal(0.1, 0.5, n).clip(0.3, 12), 2)
    creat = np.where(unit == "µmol/L", np.round(mg * 88.4), mg)
    return pd.DataFrame({
        "sex": rng.choice(["Male", "Female"], n),
        "age": rng.integers(18, 95, n), "age_unit": "years",
        "weight": np.round(rng.normal(78, 17, n).clip(38, 180), 1), "weight_unit": "kg",
        "height": np.round(rng.normal(170, 10, n).clip(140, 205), 1), "height_unit": "cm",
        "creatinine": creat, "creatinine_unit": unit,
        "Bilirubin": np.round(rng.lognormal(0.3, 0.8, n).clip(0.2, 30), 1), "Bilirubin_unit": "mg/dL",
        "international normalized ratio": np.round(rng.normal(1.4, 0.4, n).clip(0.8, 5), 1),
        "Sodium": rng.integers(120, 146, n), "Sodium_unit": "mmol/L",
        "Dialysis at least twice in the past week": rng.random(n) < 0.05,
        "Number of Alcoholic Drinks Per Week": rng.integers(0, 20, n),
        "Hypertension": rng.random(n) < 0.4, "Stroke": rng.random(n) < 0.1,
        "Labile international normalized ratio": rng.random(n) < 0.2,
        "Medication usage predisposing to bleeding": rng.random(n) < 0.3,
    })


def _clincalc_frame(slug: str, f: pd.DataFrame) -> tuple[str, pd.DataFrame] | None:
    umol = {"mg/dL": "mg/dL", "µmol/L": "umol/L"}
    if slug == "body-mass-index":
        return "bmi", pd.DataFrame({"weight_kg": f["weight"], "height_cm": f["height"]})
    if slug == "ckd-epi-2021":
        return "egfr", pd.DataFrame({"age": f["age"], "sex": f["sex"].str.lower(), "creatinine": f["creatinine"],
                                     "creatinine_unit": f["creatinine_unit"].map(umol)})
    if slug == "creatinine-clearance-cockcroft-gault":
        return "cockcroft_gault", pd.DataFrame({"age": f["age"], "weight_kg": f["weight"], "sex": f["sex"].str.lower(),
                                                "creatinine": f["creatinine"],
                                                "creatinine_unit": f["creatinine_unit"].map(umol)})
    if slug == "has-bled":
        return "hasbled", pd.DataFrame({
            "hypertension_uncontrolled": f["Hypertension"], "abnormal_renal_function": False,
            "abnormal_liver_function": False, "stroke": f["Stroke"], "bleeding_history": False,
            "labile_inr": f["Labile international normalized ratio"], "elderly_over_65": f["age"] > 65,
            "drugs_antiplatelet_nsaid": f["Medication usage predisposing to bleeding"],
            "alcohol_excess": f["Number of Alcoholic Drinks Per Week"] >= 8})
    return None  # clincalc has MELD and MELD 3.0, not MELD-Na


def _entities(f: pd.DataFrame, slug: str, cols: list[str]) -> list[dict]:
    rows = []
    for rec in f[cols].to_dict("records"):
        e = {}
        for c in cols:
            if c.endswith("_unit"):
                continue
            v = rec[c]
            v = v.item() if hasattr(v, "item") else v
            u = rec.get(f"{c}_unit")
            e[c] = [v, u] if u is not None else v
        rows.append(e)
    return rows


COLUMNS = {
    "body-mass-index": ["weight", "weight_unit", "height", "height_unit"],
    "ckd-epi-2021": ["age", "age_unit", "sex", "creatinine", "creatinine_unit"],
    "meld-na": ["creatinine", "creatinine_unit", "Bilirubin", "Bilirubin_unit", "international normalized ratio",
                "Sodium", "Sodium_unit", "Dialysis at least twice in the past week"],
    "has-bled": ["age", "age_unit", "Number of Alcoholic Drinks Per Week", "Hypertension", "Stroke",
                 "Labile international normalized ratio", "Medication usage predisposing to bleeding"],
    "creatinine-clearance-cockcroft-gault": ["sex", "age", "age_unit", "weight", "weight_unit", "height",
                                             "height_unit", "creatinine", "creatinine_unit"],
}


def main() -> int:
    # long: argument declarations and one timing loop
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000, help="rows per calculator (default 100,000)")
    ap.add_argument("--loop-rows", type=int, default=5_000, help="rows the compute loop is timed on, scaled (default 5,000)")
    ap.add_argument("--clincalc-rows", type=int, default=20_000, help="rows clincalc is timed on, scaled (default 20,000)")
    ap.add_argument("--format", choices=["table", "json"], default="table", help="table for people, json for scripts")
    args = ap.parse_args()
    try:
        import clincalc
    except ImportError:
        clincalc = None
    get_registry()
    compute_many(6, cohort(10), variant="benchmark")  # warm: registry, library functions
    f = cohort(args.rows)
    results = []
    for slug, cols in COLUMNS.items():
        variants = ["benchmark"] + (["published"] if slug == "creatinine-clearance-cockcroft-gault" else [])
        for variant in variants:
            frame = f[cols]
            t = time.perf_counter()
            res = compute_many(slug, frame, variant=variant)
            t_many = time.perf_counter() - t
            assert res.attrs["vectorised"], slug
            sub = frame.iloc[: args.loop_rows]
            ents = _entities(sub, slug, cols)
            t = time.perf_counter()
            loop = []
            for e in ents:
                try:
                    loop.append(compute(slug, e, variant=variant).value)
                except CalculatorError:
                    loop.append(None)
            t_loop = (time.perf_counter() - t) * len(frame) / len(sub)
            got = res["value"].tolist()[: len(sub)]
            assert got == loop, f"{slug}: compute_many differs from compute"
            row = {"calculator": slug, "variant": variant, "rows": len(frame), "compute_many_s": round(t_many, 3),
                   "loop_s_scaled": round(t_loop, 2), "loop_ratio": round(t_loop / t_many, 1),
                   "row_errors": int(res["error"].notna().sum())}
            cc = _clincalc_frame(slug, frame.assign(**{c: f[c] for c in f.columns if c not in cols}))
            wanted = variant == ("published" if slug == "creatinine-clearance-cockcroft-gault" else "benchmark")
            if clincalc is not None and cc is not None and wanted:
                name, cframe = cc
                csub = cframe.iloc[: args.clincalc_rows]
                t = time.perf_counter()
                clincalc.batch(name, csub)
                t_cc = (time.perf_counter() - t) * len(frame) / len(csub)
                row.update({"clincalc": name, "clincalc_s_scaled": round(t_cc, 2),
                            "clincalc_ratio": round(t_cc / t_many, 1)})
            results.append(row)
    if args.format == "json":
        print(json.dumps({"results": results, "clincalc": getattr(clincalc, "__name__", None)}, indent=2))
        return 0
    print(f"{args.rows:,} rows per calculator; compute loop timed on {args.loop_rows:,} rows and clincalc.batch on "
          f"{args.clincalc_rows:,} rows, both scaled to {args.rows:,} (marked ~)")
    print(f"{'calculator':38} {'variant':9} {'compute_many':>12} {'loop~':>8} {'ratio':>6} {'clincalc~':>10} {'ratio':>6}")
    for r in results:
        cc = f"{r['clincalc_s_scaled']:>9.2f}s {r['clincalc_ratio']:>5.1f}x" if "clincalc" in r else f"{'n/a':>10} {'':>6}"
        print(f"{r['calculator']:38} {r['variant']:9} {r['compute_many_s']:>11.3f}s {r['loop_s_scaled']:>7.2f}s "
              f"{r['loop_ratio']:>5.1f}x {cc}")
    if clincalc is None:
        print("clincalc is not installed (pip install clincalc): its column is n/a")
    return 0


if __name__ == "__main__":
    sys.exit(main())
