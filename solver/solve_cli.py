"""`formula solve`: one calculator from a gold-variable block, on the command line."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from solver.library import VARIANTS, CalculatorError, compute


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("solve", help="compute one calculator from its gold variables",
                       description="Compute a calculator with the verified library. Entities are the benchmark's "
                       "gold-variable block as JSON, inline or @FILE.")
    p.add_argument("--calculator", required=True, help="benchmark id or registry slug")
    p.add_argument("--entities", required=True, help="JSON object, or @FILE holding one")
    p.add_argument("--variant", choices=VARIANTS, default="benchmark")
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.set_defaults(handler=run)


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """Refuse a key given twice (json keeps the last silently), as the registry's YAML loader does."""
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"--entities gives {k!r} twice; give each entity once")
        out[k] = v
    return out


def _entities(arg: str) -> dict:
    text = arg
    if arg.startswith("@"):
        path = Path(arg[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise ValueError(f"cannot read {path}: {e.strerror}") from None
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as e:
        raise ValueError(f"--entities is not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    if not isinstance(data, dict):
        raise ValueError("--entities must be a JSON object mapping entity names to values")
    return data


def run(args: argparse.Namespace) -> int:
    try:
        ents = _entities(args.entities)
        res = compute(int(args.calculator) if args.calculator.isdigit() else args.calculator, ents,
                      variant=args.variant)
    except (CalculatorError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for w in res.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if args.format == "json":
        out = res.to_json()
        out["inputs"] = {k: {"given": r.given, "value": r.value if not hasattr(r.value, "isoformat")
                             else r.value.isoformat(), "unit": r.unit} for k, r in res.inputs.items()}
        print(json.dumps(out, ensure_ascii=False))
    else:
        v = res.to_json()["value"]
        print(f"{res.calculator} {res.version} ({res.variant}): {v}" + (f" {res.unit}" if res.unit else ""))
    return 0
