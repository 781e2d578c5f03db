"""`formula convert --to parquet IN OUT.parquet`: benchmark-shaped entity objects as a cohort table.

IN is a .jsonl file (one entity object a line, or records holding it under "Relevant Entities") or a .csv file
with a "Relevant Entities" column; OUT gets the schema `formula batch` and `compute_many` read without a Python
object per cell (solver/cohort_table.py says how each entity becomes columns). The write is atomic.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from registry.cliutil import add_root
from registry.terminal import printable, say

INPUTS = (".jsonl", ".csv")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("convert",
                       description="Turn entity objects as the benchmark writes them (one JSON object a line, or a "
                       "'Relevant Entities' column of a CSV) into the cohort schema that `formula batch` reads: a "
                       "number column and a dictionary <name>_unit column per quantity (four-part heights folded "
                       "into inches by the library's rule), bool criteria, dictionary-encoded choices, null where "
                       "a row gives nothing.")
    p.add_argument("source", metavar="IN", help="a .jsonl file of entity objects, or a .csv with 'Relevant Entities'")
    p.add_argument("out", metavar="OUT", help="the parquet file to write (replaced atomically)")
    p.add_argument("--to", choices=["parquet"], required=True, help="the output format")
    p.add_argument("--struct", action="store_true",
                   help="one struct<value, unit> column per quantity instead of a value and a <name>_unit column")
    add_root(p)
    p.set_defaults(handler=run)


def _problem(src: Path, dst: Path) -> str | None:
    if src.suffix.lower() not in INPUTS:
        return f"input {src} must end in .jsonl or .csv"
    if dst.suffix.lower() != ".parquet":
        return f"output {dst} must end in .parquet"
    if not src.is_file():
        return f"cannot read {src}: no such file"
    if not dst.parent.is_dir():
        return f"cannot write {dst}: folder {dst.parent} does not exist"
    if dst.exists() and dst.resolve() == src.resolve():
        return f"output {dst} is the input: write to another file"
    return None


def run(args: argparse.Namespace) -> int:
    src, dst = Path(args.source), Path(args.out)
    problem = _problem(src, dst)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    from registry.terminal import install_hint

    try:
        import pyarrow  # noqa: F401
    except ImportError as e:
        print(f"error: parquet needs pyarrow: {install_hint('parquet')} ({e})", file=sys.stderr)
        return 1
    from registry.loader import get_registry
    from solver.cohort_table import ConvertError, entities_table, entity_rows, write_parquet
    from solver.library.units import Converter

    units = get_registry().units
    assert units is not None
    try:
        rows = entity_rows(src)
        table = entities_table(rows, Converter(units, exact=False), struct=args.struct)
    except (ConvertError, UnicodeDecodeError) as e:
        say(printable(f"error: {e}"), file=sys.stderr)
        return 1
    try:
        write_parquet(table, dst)
    except OSError as e:
        print(f"error: cannot write {dst}: {e.strerror or e}", file=sys.stderr)
        return 1
    entities = [n for n in table.schema.names if not (n.endswith("_unit") and n[:-5] in table.schema.names)]
    print(f"{table.num_rows} rows, {len(entities)} entities -> {dst}", file=sys.stderr)
    return 0
