"""`formula impact PREDECESSOR SUCCESSOR`: what changes for patients when a formula is replaced."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from audit.impact import ImpactError, impact, markdown
from registry.cliutil import add_root
from registry.loader import get_registry
from solver.data import REFERENCE_CASES, DatasetError, file_hash, read_cases
from solver.library import VARIANTS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("impact",
                       description="Compute a predecessor and its successor on every case of the predecessor in "
                       "the data whose inputs the successor can use; report how many cannot be compared and why, "
                       "the distribution of the differences, and reclassification across the clinically used "
                       "bands held in the registry (CKD G-stages, anticoagulation categories, 10-year risk "
                       "categories).")
    p.add_argument("predecessor", help="registry slug or benchmark id, e.g. mdrd-gfr")
    p.add_argument("successor", help="registry slug, e.g. ckd-epi-2021")
    p.add_argument("--data", type=Path, default=None,
                   help="cases (.jsonl reference cases or the benchmark's .csv); default: the shipped reference cases")
    p.add_argument("--variant", choices=VARIANTS, default="published",
                   help="library variant for both formulas (default: published)")
    p.add_argument("--unlinked", action="store_true",
                   help="compare a pair the registry does not link as successor or alternative (refused otherwise)")
    p.add_argument("--format", choices=["markdown", "json"], default="markdown",
                   help="markdown: the report for reading (default); json: every figure, for scripts")
    add_root(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    path = args.data or REFERENCE_CASES
    try:
        cases = read_cases(path)
        rep = impact(get_registry(), args.predecessor, args.successor, cases, variant=args.variant,
                     unlinked=args.unlinked)
    except (DatasetError, ImpactError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    label = "shipped reference cases" if args.data is None else str(path)
    if args.format == "json":
        print(json.dumps({"data": str(path), "data_hash": file_hash(path), **rep.to_json()}, indent=2,
                         ensure_ascii=False))
    else:
        sys.stdout.write(markdown(rep, f"{label} ({file_hash(path)[:19]})"))
    return 0
