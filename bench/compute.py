"""`compute` per case against the original benchmark's calculator functions, and per call against clincalc.

Both sides run in this one process, on the same cases, timed alternately (best of --repeat), each timing
starting with the harness's own objects frozen out of the cyclic collector's reach (`settle`):

(a) the shipped reference cases (solver/embedded/reference_cases.jsonl) through `compute`, against
    medcalc-bench 1.7.0's own functions (PyPI `medcalc-bench`, module `medcalc`; they also write an
    explanation text, as the benchmark's reference does). medcalc-bench reads snake_case keys for
    some calculators; KEYS renames the entities for those (outside the timing). Only cases both
    sides compute are timed; the count is printed.
(b) one call of BMI and of CKD-EPI 2021 through `compute` against `clincalc.calculate`.

    python bench/compute.py [--repeat 5] [--format json] [--by-calculator]

--by-calculator adds each calculator's microseconds per case on both sides (where the gap is).

Prints the ratios (medcalc-bench time / compute time; clincalc time / compute time): the targets
are >= 1.0 (issue 31: `compute` at par with medcalc-bench over all shared cases) and >= 1.0.
"""
from __future__ import annotations

import argparse
import copy
import gc
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from solver.data import REFERENCE_CASES  # noqa: E402
from solver.library import CalculatorError, compute  # noqa: E402

TARGET_VS_MEDCALC = 1.0  # issue 31: at par over all shared cases (issue 22 had asked for 1.5)

# benchmark calculator id -> medcalc-bench function (module.function)
FUNCTIONS = {
    2: "creatinine_clearance.generate_cockcroft_gault_explanation", 3: "ckd_epi_2021_creatinine.ckd_epi_2021_explanation",
    4: "cha2ds2_vasc_score.generate_cha2ds2_vasc_explanation", 5: "mean_arterial_pressure.mean_arterial_pressure_explanation",
    6: "bmi_calculator.bmi_calculator_explanation", 7: "calcium_correction.calculate_corrected_calcium_explanation",
    9: "mdrd_gfr.mrdr_gfr_explanation", 10: "ideal_body_weight.ibw_explanation",
    11: "qt_calculator_bazett.bazett_calculator_explanation", 16: "wells_criteria_dvt.compute_wells_criteria_dvt_explanation",
    17: "cardiac_risk_index.compute_cardiac_index_explanation", 18: "heart_score.compute_heart_score_explanation",
    22: "maintenance_fluid_calc.maintenance_fluid_explanation", 23: "meldna.compute_meldna_explanation",
    24: "steroid_conversion.compute_steroid_conversion_explanation", 32: "cci.compute_cci_explanation",
    33: "feverpain.compute_fever_pain_explanation", 36: "caprini_score.caprini_score_explanation",
    39: "anion_gap.compute_anion_gap_explanation", 49: "mme.mme_explanation",
    56: "qt_calculator_fredericia.fredericia_calculator_explanation",
    57: "qt_calculator_framingham.framingham_calculator_explanation",
    58: "qt_calculator_hodges.hodges_calculator_explanation", 59: "qt_calculator_rautaharju.rautaharju_calculator_explanation",
    60: "bsa_calculator.bsa_calculator_explaination", 62: "adjusted_body_weight.abw_explanation",
}
_QT = {"Heart Rate or Pulse": "heart_rate", "QT Interval": "qt_interval"}
KEYS: dict[int, dict[str, str]] = {  # entity name -> medcalc-bench's key, where it differs
    4: {"Congestive Heart Failure": "chf", "Diabetes history": "diabetes", "Hypertension history": "hypertension",
        "Stroke": "stroke", "Thromboembolism history": "thromboembolism", "Transient Ischemic Attacks History": "tia",
        "Vascular disease history": "vascular_disease"},
    5: {"Systolic Blood Pressure": "sys_bp", "Diastolic Blood Pressure": "dia_bp"},
    7: {"Albumin": "albumin", "Calcium": "calcium"},
    9: {"Race": "race"},
    11: _QT, 56: _QT, 57: _QT, 58: _QT, 59: _QT,
    23: {"Bilirubin": "bilirubin", "Dialysis at least twice in the past week": "dialysis_twice",
         "Continuous veno-venous hemodialysis for ≥24 hours in the past week": "cvvhd", "Sodium": "sodium",
         "international normalized ratio": "inr"},
    39: {"Sodium": "sodium", "Chloride": "chloride", "Bicarbonate": "bicarbonate"},
}


def _medcalc() -> dict[int, Callable[[dict[str, Any]], Any]]:
    out = {}
    for cid, path in FUNCTIONS.items():
        module, name = path.split(".")
        out[cid] = getattr(importlib.import_module("medcalc." + module), name)
    return out


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        settle()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def settle() -> None:
    """Move every object alive now (both libraries' modules, the cases, the input copies) out of the cyclic
    collector's reach before a timing: a collection that either side's allocations trigger then walks what
    that side made, not the harness's heap (which would charge the side that allocates more containers
    for objects that are not its own). `timeit` goes further and turns the collector off."""
    gc.collect()
    gc.freeze()


def _cases(fns: dict[int, Callable[[dict[str, Any]], Any]]) -> list[tuple[int, dict, Callable, dict]]:
    """(id, entities, medcalc function, medcalc's input) for every case both sides compute."""
    out = []
    for line in REFERENCE_CASES.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        cid, ents = r["calculator_id"], r["entities"]
        fn = fns.get(cid)
        if fn is None:
            continue
        keys = KEYS.get(cid, {})
        theirs = {keys.get(k, k): v for k, v in ents.items()}
        try:
            compute(cid, ents, variant="benchmark")
            fn(copy.deepcopy(theirs))
        except Exception:  # noqa: BLE001 - either side refusing the case leaves it out of the timing
            continue
        out.append((cid, ents, fn, theirs))
    return out


def _alternate(cases: list[tuple[int, dict, Callable, dict]], repeat: int, rounds: int = 1) -> tuple[list, list]:
    """Best times of both sides over `cases` (each pass `rounds` times over them), timed alternately."""
    def ours() -> None:
        for _ in range(rounds):
            for cid, ents, _, _ in cases:
                try:
                    compute(cid, ents, variant="benchmark")
                except CalculatorError:
                    pass

    t_ours, t_theirs = [], []
    for _ in range(repeat):  # alternate, so contention on a shared machine hits both sides alike
        t_ours.append(best(ours, 1))
        fresh = [(fn, copy.deepcopy(inp)) for _ in range(rounds) for _, _, fn, inp in cases]  # it edits its input

        def theirs(fresh: list = fresh) -> None:
            for fn, inp in fresh:
                fn(inp)

        t_theirs.append(best(theirs, 1))
    return t_ours, t_theirs


def _by_calculator(cases: list[tuple[int, dict, Callable, dict]], repeat: int) -> list[dict[str, Any]]:
    rows = []
    for cid in sorted({c[0] for c in cases}):
        mine = [c for c in cases if c[0] == cid]
        t_ours, t_theirs = _alternate(mine, repeat, rounds=10)
        n = 10 * len(mine)
        rows.append({"id": cid, "compute_us": round(min(t_ours) / n * 1e6, 2),
                     "medcalc_bench_us": round(min(t_theirs) / n * 1e6, 2),
                     "ratio": round(min(t_theirs) / min(t_ours), 2)})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="timings per side, the best kept (default 5)")
    ap.add_argument("--calls", type=int, default=20_000, help="calls per single-call timing")
    ap.add_argument("--format", choices=["table", "json"], default="table", help="table for people, json for scripts")
    ap.add_argument("--by-calculator", action="store_true", help="also time each calculator's cases on both sides")
    args = ap.parse_args()
    cases = _cases(_medcalc())
    t_ours, t_theirs = _alternate(cases, args.repeat)
    result: dict[str, Any] = {"cases": len(cases), "calculators": len({c[0] for c in cases}),
                              "compute_cases_per_s": round(len(cases) / min(t_ours)),
                              "medcalc_bench_cases_per_s": round(len(cases) / min(t_theirs)),
                              "ratio_vs_medcalc_bench": round(min(t_theirs) / min(t_ours), 2)}
    try:
        import clincalc
    except ImportError:
        clincalc = None
    single = {
        "body-mass-index": ({"weight": [70.0, "kg"], "height": [170.0, "cm"]}, "bmi",
                            {"weight_kg": 70.0, "height_cm": 170.0}),
        "ckd-epi-2021": ({"age": [60, "years"], "sex": "Male", "creatinine": [1.1, "mg/dL"]}, "egfr",
                         {"age": 60, "sex": "male", "creatinine": 1.1, "creatinine_unit": "mg/dL"}),
    }
    for slug, (ents, name, inp) in single.items():
        compute(slug, ents, variant="benchmark")
        n = args.calls
        t_ours_1 = min(best(lambda s=slug, e=ents, k=n: [compute(s, e, variant="benchmark") for _ in range(k)], 1)
                       for _ in range(args.repeat))
        row: dict[str, Any] = {"compute_calls_per_s": round(n / t_ours_1)}
        if clincalc is not None:
            t_cc = min(best(lambda c=name, i=inp, k=n: [clincalc.calculate(c, i) for _ in range(k)], 1)
                       for _ in range(args.repeat))
            row.update({"clincalc_calls_per_s": round(n / t_cc), "ratio_vs_clincalc": round(t_cc / t_ours_1, 2)})
        result[slug] = row
    if args.by_calculator:
        result["by_calculator"] = _by_calculator(cases, args.repeat)
    if args.format == "json":
        print(json.dumps(result, indent=2))
        return 0
    print(f"reference cases both sides compute: {result['cases']} ({result['calculators']} calculators)")
    print(f"  compute        {result['compute_cases_per_s']:>9,} cases/s")
    print(f"  medcalc-bench  {result['medcalc_bench_cases_per_s']:>9,} cases/s")
    print(f"  ratio compute/medcalc-bench: {result['ratio_vs_medcalc_bench']:.2f}x (target >= {TARGET_VS_MEDCALC:.1f}x)")
    for slug in single:
        r = result[slug]
        cc = (f"clincalc {r['clincalc_calls_per_s']:>9,}/s  ratio {r['ratio_vs_clincalc']:.2f}x (target >= 1.0x)"
              if "clincalc_calls_per_s" in r else "clincalc not installed")
        print(f"one call {slug:16} compute {r['compute_calls_per_s']:>9,}/s  {cc}")
    if args.by_calculator:
        print("per case, by calculator (us; slowest of ours first):  id  compute  medcalc-bench  ratio")
        for row in sorted(result["by_calculator"], key=lambda r: -r["compute_us"]):
            print(f"  {row['id']:>3}  {row['compute_us']:7.2f}  {row['medcalc_bench_us']:7.2f}  {row['ratio']:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
