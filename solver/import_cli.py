"""`formula import FORMAT FILE... --out DIR`: another tool's evaluation log as a run folder of this toolkit."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from registry.cliutil import add_root
from registry.counted_nouns import agree, counted


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import",
                       description="Read evaluation logs (FORMAT: medcalc-bench, inspect-ai, lm-eval) and write run folders "
                       "(manifest.json + results.jsonl, as `formula run` writes them), every row re-scored with this "
                       "toolkit's scorer under MedCalc-Bench's tolerance rule. Every row whose verdict differs from "
                       "the log's own is listed. One FILE: OUT is the run folder; several: one run folder per file "
                       "under OUT, named after the file (or, with --merge, one run from all of them).")
    p.add_argument("format", metavar="FORMAT", help="log format: medcalc-bench, inspect-ai or lm-eval")
    p.add_argument("files", metavar="FILE", nargs="+", type=Path,
                   help="the tool's evaluation log(s) (for medcalc-bench: its outputs/*.jsonl)")
    p.add_argument("--out", required=True, type=Path, help="run folder (several files: the folder of run folders)")
    p.add_argument("--model", help="model name (default: from the log or its file name)")
    p.add_argument("--arm", help="arm name the run is shown under (default: FORMAT-PROMPT-STYLE)")
    p.add_argument("--dataset", help="the gold set the log was scored on, where the file cannot tell "
                   "(medcalc-bench-2024, medcalc-bench-verified)")
    p.add_argument("--provenance", action="append", default=[], metavar="KEY=VALUE",
                   help="recorded with each file in the manifest, e.g. repository=ncbi-nlp/MedCalc-Bench "
                   "commit=f557a04 licence=CC-BY-SA-4.0 (repeatable)")
    p.add_argument("--merge", action="store_true", help="several files are parts of one run: write one run folder")
    p.add_argument("--format", dest="output", choices=["table", "json"], default="table",
                   help="table: a summary for reading (default); json: every run written and every verdict "
                   "difference, for scripts")
    add_root(p)
    p.set_defaults(handler=_import)


def _folder(f: Path) -> str:
    return f.stem.lower().replace("_", "-").replace("openai-", "")


def _folders(files: list[Path]) -> list[str]:
    """One run folder name per file, each a single safe path component inside --out, no two alike."""
    from solver.importers import ImportFailure
    from solver.importers.common import safe_name

    names = []
    for f in files:
        name = safe_name(_folder(f))
        if name is None:
            raise ImportFailure(f"{f}: its name {f.stem!r} cannot name a run folder inside --out (empty, dots, a "
                                "separator or a control character); rename the file, or import it alone with "
                                "--out naming its folder")
        names.append(name)
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise ImportFailure(f"two files would share the run folder {clash[0]!r}; import them one at a time")
    return names


def _import(args: argparse.Namespace) -> int:
    from solver.importers import ImportFailure
    from solver.importers.run import import_run, read_sources

    files: list[Path] = args.files
    prov: dict[str, str] = {}
    for item in args.provenance:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            print(f"error: --provenance {item!r}: expected KEY=VALUE", file=sys.stderr)
            return 2
        prov[key.strip()] = value.strip()
    try:
        read_sources(args.format, files[:0])  # an unknown FORMAT is refused before any file is read
        if len(files) == 1 or args.merge:
            jobs = [(files, args.out)]
        else:
            names = _folders(files)
            jobs = [([f], args.out / n) for f, n in zip(files, names)]
            for part, _ in jobs:  # every file is read and checked before any folder is written
                read_sources(args.format, part, args.dataset)
        done = [import_run(args.format, part, out, model=args.model, arm=args.arm, dataset=args.dataset,
                           provenance=prov) for part, out in jobs]
    except ImportFailure as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.output == "json":
        print(json.dumps([d.summary() for d in done], indent=1, ensure_ascii=False))
        return 0
    for d in done:
        pct = 100.0 * d.correct / d.rows if d.rows else 0.0
        print(f"{d.out}: {d.arm} ({d.model or 'model unknown'}) on {d.dataset}: {d.correct}/{d.rows} correct "
              f"({pct:.2f}%); {counted(len(d.differences), 'verdict')} {agree(len(d.differences), 'differs', 'differ')} from the log's")
        for x in d.differences:
            print(f"  {x.file}:{x.line} row {x.row_number}: ours {'Correct' if x.ours else 'Incorrect'}, "
                  f"the log's {'Correct' if x.theirs else 'Incorrect'}: {x.why}")
        for w in d.warnings:
            print(f"  warning: {w}")
    return 0
