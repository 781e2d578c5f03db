"""`formula solve`: one calculator from a gold-variable block, on the command line."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from registry.cliutil import CommandError, add_root
from registry.loader import get_registry
from solver.library import VARIANTS, CalculatorError, compute


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("solve", help="compute one calculator from its gold variables",
                       description="Compute a calculator with the verified library. Entities are the benchmark's "
                       "gold-variable block as JSON, inline or @FILE.")
    p.add_argument("--calculator", required=True, help="benchmark id or registry slug")
    p.add_argument("--entities", required=True, help="JSON object, or @FILE holding one")
    p.add_argument("--variant", choices=VARIANTS, default="benchmark")
    p.add_argument("--format", choices=["table", "json"], default="table")
    add_root(p)
    p.set_defaults(handler=run)


def _entities(arg: str) -> dict:
    text = arg
    if arg.startswith("@"):
        path = Path(arg[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise ValueError(f"cannot read {path}: {e.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"--entities is not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    if not isinstance(data, dict):
        raise ValueError("--entities must be a JSON object mapping entity names to values")
    return data


def run(args: argparse.Namespace) -> int:
    try:
        ents = _entities(args.entities)
        res = compute(int(args.calculator) if args.calculator.isdigit() else args.calculator, ents,
                      variant=args.variant, registry=get_registry(args.root))
    except (CalculatorError, ValueError) as e:
        raise CommandError(str(e)) from None
    if args.format == "json":
        out = res.to_json()
        out["inputs"] = {k: {"given": r.given, "value": r.value if not hasattr(r.value, "isoformat")
                             else r.value.isoformat(), "unit": r.unit} for k, r in res.inputs.items()}
        print(json.dumps(out, ensure_ascii=False))
    else:
        v = res.to_json()["value"]
        print(f"{res.calculator} {res.version} ({res.variant}): {v}" + (f" {res.unit}" if res.unit else "")
              + f"  [{res.content_hash[:19]}]")
    return 0
