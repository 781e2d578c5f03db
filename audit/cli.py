"""`formula audit ...`: the audits that read the registry and the library."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from registry import codes
from registry.cliutil import CommandError, add_root, load_registry
from registry.tables import render_table
from registry.terminal import printable, say
from solver.data import REFERENCE_CASES, DatasetError, file_hash, read_cases


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("audit",
                       description="Audits: `deviations` (benchmark fidelity of the published formulas).")
    asub = p.add_subparsers(dest="audit", metavar="AUDIT")
    asub.required = True
    d = asub.add_parser("deviations", help="per calculator, where the benchmark departs from the publication",
                        description="For each calculator: its recorded deviations, and the share of cases whose "
                        "answer under the published formula scores differently from the benchmark's answer.")
    d.add_argument("--data", type=Path, action="append", default=[],
                   help="also score a benchmark split (.csv with the benchmark's columns, or .jsonl); repeatable")
    d.add_argument("--format", choices=["table", "json"], default="table",
                   help="table: for reading (default); json: the whole result, for scripts")
    add_root(d)
    d.set_defaults(handler=cmd_deviations)
    c = asub.add_parser("completeness", help="is every supplied text complete against its registry entry",
                        description="Completeness is the text's: every active text names every input, "
                        "constant and table its calculation uses, states units and names nothing unknown. "
                        "Agreement is the answers', reported apart: how many of the benchmark's reference answers "
                        "the library, reading the same constants, reproduces (a deliberate factor change moves "
                        "answers and leaves the text complete). Exit 1 when a text is incomplete.")
    add_root(c)
    c.add_argument("--format", choices=["table", "json"], default="table",
                   help="table: for reading (default); json: the whole result, for scripts")
    c.add_argument("--no-cases", action="store_true", help="skip the agreement with the reference answers")
    c.set_defaults(handler=cmd_completeness)


def cmd_deviations(args: argparse.Namespace) -> int:
    from audit.deviations import fidelity

    reg = load_registry(args.root)
    sources = [REFERENCE_CASES, *args.data]
    report: list[dict[str, Any]] = []
    for path in sources:
        try:
            cases = read_cases(path)
        except DatasetError as e:
            raise CommandError(str(e)) from None
        rows = fidelity(reg, cases)
        report.append({"data": str(path), "data_hash": file_hash(path), "cases": len(cases),
                       "rows": [r.to_json() for r in rows],
                       "benchmark_wide": [d.id for d in (reg.units.deviations if reg.units else [])]})
    if args.format == "json":
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    for block in report:
        print(f"{block['data']} ({block['cases']} cases, {block['data_hash'][:19]})")
        table = [{"id": r["medcalc_id"], "slug": r["slug"], "deviations": len(r["deviations"]),
                  "verified": r["verified_deviations"], "cases": r["cases"], "differ": r["differ"],
                  "share": "-" if r["share_differ"] is None else f"{100 * r['share_differ']:.1f}%",
                  "errors": r["errors"], "which": ", ".join(r["deviations"]) or "-"} for r in block["rows"]]
        print(render_table(table, list(table[0]) if table else ["slug"], whole=["share"], drop=["verified", "cases", "errors", "which"]))
        n = sum(r["cases"] for r in block["rows"])
        k = sum(r["differ"] for r in block["rows"])
        nd = sum(len(r["deviations"]) for r in block["rows"])
        print(f"\n{nd} deviations in {sum(1 for r in block['rows'] if r['deviations'])} calculators; "
              f"{k} of {n} cases ({100 * k / max(n, 1):.1f}%) score differently under the published formulas")
        print()
    if reg.units is not None and reg.units.deviations:
        print("\nBenchmark-wide (formulas/units.yaml):")
        for d in reg.units.deviations:
            say(printable(f"  - {d.id}: {d.benchmark}"))
    return 0


def _agreement_summary(rows: list[Any]) -> str:
    """Agreement with the benchmark, apart from completeness: a deliberate factor change moves answers, not the text."""
    from audit.completeness import AGREEMENT_RULE

    asked = [r for r in rows if r.cases]
    short = [f"{r.slug} {r.agree} of {r.cases}" for r in asked if r.wrong]
    return (f"agreement with the benchmark: {len(asked) - len(short)} of {len(asked)} calculators agree on every "
            f"reference answer" + (f"; {', '.join(short)}" if short else "") + f" ({AGREEMENT_RULE})")


def cmd_completeness(args: argparse.Namespace) -> int:
    from audit.completeness import audit

    # the static check may run on an unreleased edit; the executable one computes with the library, which refuses it
    reg = load_registry(args.root, tolerate=codes.UNRELEASED)
    if reg.problems and not args.no_cases:
        for p in reg.problems:
            say(printable(p), file=sys.stderr)
        raise CommandError("the registry has unreleased edits, which the library refuses to compute from: release "
                           "them first (`formula release SLUG --reason ...`) or pass --no-cases")
    cases = [] if args.no_cases else read_cases(REFERENCE_CASES)
    rows = audit(reg, cases)
    bad = [r for r in rows if not r.complete]
    if args.format == "json":
        print(json.dumps([r.to_json() for r in rows], indent=2, ensure_ascii=False))
    else:
        table = [{"id": r.medcalc_id, "slug": r.slug, "version": r.version,
                  "current text": "complete" if r.complete else "INCOMPLETE",
                  "agreement": f"{r.agree} of {r.cases}" if r.cases else "-",
                  "missing": "; ".join(r.missing) or "-"} for r in rows]
        print(render_table(table, ["id", "slug", "version", "current text", "agreement", "missing"],
                           whole=["current text", "agreement"]))
        print(f"\ncurrent text: {len(rows) - len(bad)} of {len(rows)} complete (the registry's texts today; "
              "`formula list` shows the paper's audit of the original texts)")
        if cases:
            print(_agreement_summary(rows))
    return 1 if bad else 0
