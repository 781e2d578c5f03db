"""`formula report tables RUN_DIR...`: the paper's tables and statistics from stored runs."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from audit.runs import RunError
from registry.cliutil import add_root


def _pair(text: str) -> tuple[str, str]:
    if ":" not in text:
        raise argparse.ArgumentTypeError(f"'{text}': expected A:B (two runs, by directory name or arm)")
    return (text, "")  # split later, once the runs are known (names may contain ':')


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report",
                       description="Reports built from stored runs (the runner's manifest.json + results.jsonl).")
    rsub = p.add_subparsers(dest="report", metavar="REPORT")
    rsub.required = True
    t = rsub.add_parser(
        "tables", help="accuracy, audit groups, outcomes, paired gaps, hybrids, seed agreement",
        description="The paper's tables from stored runs: accuracy on the full set and the library-covered, "
        "not-replaced and no-issue subsets; accuracy by audit group (from the registry), category and output "
        "type; outcome accounting; every --compare gap with case and calculator-cluster bootstrap intervals, "
        "sign-flip permutation p, exact McNemar p, Holm p, ICC and effective n; library-first hybrids; agreement "
        "across seeds; per-calculator accuracy with the text version used and a warning where it is stale.",
        epilog="Runs are named by directory name, directory path or arm (when one run has it). "
        "Example: formula report tables runs/prog runs/arith runs/gold --compare prog:arith --compare prog:gold")
    t.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR",
                   help="run folders (manifest.json + results.jsonl), or glob patterns matching them (runs/*/)")
    t.add_argument("--compare", action="append", default=[], type=_pair, metavar="A:B",
                   help="paired gap A minus B on the same cases and seeds; repeatable (one Holm family per subset)")
    t.add_argument("--hybrid", action="append", default=None, type=_pair, metavar="LIB:FALLBACK",
                   help="library-first hybrid: LIB where it answers, FALLBACK elsewhere; repeatable "
                   "(default: every gold-solve/extract-solve run with every other run)")
    t.add_argument("--format", choices=["markdown", "json", "csv"], default="markdown",
                   help="markdown tables for reading (default), json for scripts, csv (table,row,column,value) "
                   "for spreadsheets")
    t.add_argument("--draws", type=_positive, default=10_000, help="bootstrap and permutation draws (default 10000)")
    t.add_argument("--seed", type=int, default=0, help="random seed of every draw (default 0)")
    add_root(t)
    t.set_defaults(handler=cmd_tables)


def cmd_tables(args: argparse.Namespace) -> int:
    from audit.runs import expand_run_dirs, read_run
    from audit.tables import build_report, run_keys, split_pair, to_csv, to_markdown

    try:
        # resolve A:B against the runs' names so a ':' inside a directory name still works
        runs = [read_run(d) for d in expand_run_dirs(args.runs)]
        labels = run_keys(runs)

        def names(pairs: list[tuple[str, str]] | None) -> list[tuple[str, str]] | None:
            if pairs is None:
                return None
            out = []
            for text, _ in pairs:
                i, j = split_pair(text, runs, labels)
                out.append((labels[i], labels[j]))
            return out

        compare = names(args.compare) or []
        hybrids = names(args.hybrid)
        report = build_report(runs, compare, draws=args.draws, seed=args.seed, hybrids=hybrids)
    except RunError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps(report, indent=2, ensure_ascii=False))
    elif args.format == "csv":
        sys.stdout.write(to_csv(report))
    else:
        sys.stdout.write(to_markdown(report))
    for w in report["warnings"]:
        print(f"warning: {w}", file=sys.stderr)
    return 0
