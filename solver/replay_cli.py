"""`formula replay RECORD.json`: recompute a recorded answer and exit non-zero if it differs."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import ValidationError

from registry.cliutil import add_root
from registry.terminal import printable, say
from solver.library import CalculatorError
from solver.records import AnswerRecord
from solver.router.replay import replay
from solver.router.versions import VersionError

DIFFERS = 3


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay",
                       description="Recompute an answer record (from `formula solve --format json`) from the record "
                       "alone: the same calculator version, inputs, route and program, without a model, and compare "
                       "every field but the timestamp (and the executor's timings). Exit 0 when it reproduces, "
                       f"{DIFFERS} when any field differs (each one is listed), 1 when the record cannot be read "
                       "or recomputed.")
    p.add_argument("record", type=Path, help="answer record (JSON)")
    p.add_argument("--format", choices=["table", "json"], default="table",
                   help="table: for reading (default); json: every field compared, for scripts")
    add_root(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        rec = AnswerRecord.model_validate_json(args.record.read_text(encoding="utf-8"))
    except OSError as e:
        say(printable(f"error: cannot read {args.record}: {e.strerror}"), file=sys.stderr)
        return 1
    except UnicodeDecodeError:
        print(f"error: {args.record} is not text (not UTF-8): give an answer record from `formula solve --format "
              "json`", file=sys.stderr)
        return 1
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "(top level)"
        say(printable(f"error: {args.record}: not an answer record ({where}: {first['msg']})"), file=sys.stderr)
        return 1
    try:
        new, diffs = replay(rec)
    except (CalculatorError, VersionError, ValueError) as e:
        say(printable(f"error: {args.record}: cannot recompute: {e}"), file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps({"reproduced": not diffs, "differences": diffs, "replayed": new.model_dump(mode="json")},
                         ensure_ascii=False))
    elif diffs:  # record fields are untrusted text: escaped for the terminal
        say(printable(f"{rec.calculator} {rec.version} ({rec.variant}): DIFFERS"))
        for d in diffs:
            say(printable(f"  {d}"))
    else:
        shown = "abstained" if new.abstained else f"{new.value}" + (f" {new.unit}" if new.unit else "")
        say(printable(f"{rec.calculator} {rec.version} ({new.variant}, {new.route} route): reproduced, {shown}"))
    return DIFFERS if diffs else 0
