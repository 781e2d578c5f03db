"""`formula safety ...`: the hazard log, the clinical safety case computed now, one calculator's trace, and the
clinical safety officer's signed sign-off (registry.governance.safety_signing)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from registry.cliutil import CommandError, add_root, find_calculator, load_valid, maintain
from registry.counted_nouns import counted
from registry.terminal import printable, say


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("safety",
                       description="The hazard log (formulas/safety/) and the clinical safety case computed from the "
                       "registry now (DCB0129's shape): scope, evidence per calculator, residual risk, sign-off.")
    s = p.add_subparsers(dest="safety", metavar="ACTION")
    s.required = True
    h = s.add_parser("hazards", help="list the hazard log", description="The hazards with their risk (looked up "
                     "in formulas/safety/risk_matrix.yaml), residual risk and status.")
    add_root(h)
    h.add_argument("--calculator", metavar="SLUG", help="only the hazards that name this calculator (registry-wide "
                   "ones included)")
    h.add_argument("--format", choices=["table", "json"], default="table", help="json: every field, for scripts")
    h.set_defaults(handler=cmd_hazards)
    c = s.add_parser("case", help="the clinical safety case, computed now",
                     description="Document control, intended purpose, scope (every active version and its content "
                     "hash), the log by risk, evidence per calculator, residual risk and the sign-off's state.")
    add_root(c)
    c.add_argument("--format", choices=["markdown", "json"], default="markdown", help="markdown (default) or json")
    c.add_argument("--out", type=Path, metavar="FILE", help="write the case to FILE instead of stdout")
    c.set_defaults(handler=cmd_case)
    t = s.add_parser("trace", help="one calculator: requirement -> hazards -> controls -> evidence",
                     description="The active version and its text, each hazard naming it, each control and the "
                     "evidence behind it, computed now.")
    add_root(t)
    t.add_argument("calculator", help="slug or benchmark id")
    t.add_argument("--format", choices=["text", "json"], default="text", help="json: the whole trace, for scripts")
    t.set_defaults(handler=cmd_trace)
    _register_signoff(s)


def _register_signoff(s: argparse._SubParsersAction) -> None:
    o = s.add_parser("sign-off", help="sign the safety case as its clinical safety officer",
                     description="Record a signed sign-off covering every active version (by content hash) and "
                     "the hazard log (by its hash). Only roles the policy's safety_officer_roles names may sign "
                     "(default: clinical safety officer); anyone else is refused and nothing is written.")
    add_root(o)
    o.add_argument("--key", help="your OpenSSH signing key (or its .pub, the key held by ssh-agent); default "
                   "$FORMULA_SIGNING_KEY")
    o.add_argument("--reason", required=True, help="what the sign-off rests on")
    o.add_argument("--role", help="the role you sign in (default: your first role the policy allows)")
    o.set_defaults(handler=cmd_sign_off)


def sign_off_state(reg: Any) -> dict[str, Any]:
    from registry.trust.safety_signoff import state

    return state(reg).to_json()


def cmd_hazards(args: argparse.Namespace) -> int:
    from registry.hazards import hazard_json, names, read_log
    from registry.tables import render_table

    reg = load_valid(args.root)
    log = read_log(reg.root)
    if log is None or log.entries is None:
        raise CommandError("this registry has no hazard log (formulas/safety/hazards.yaml)")
    hazards = log.entries.hazards
    if args.calculator:
        slug = find_calculator(reg, args.calculator).slug
        hazards = [h for h in hazards if names(h, slug)]
    rows = [hazard_json(log, h) for h in hazards]
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    table = [{"id": r["id"], "risk": r["risk"], "residual": r["residual_risk"], "status": r["status"],
              "hazard": r["title"], "calculators": "all" if r["calculators"] == "all" else len(r["calculators"])}
             for r in rows]
    say(render_table(table, ["id", "risk", "residual", "status", "hazard", "calculators"], whole=["id"]))
    say(counted(len(rows), "hazard") + "; risk looked up in formulas/safety/risk_matrix.yaml")
    return 0


def _case(root: Path | None) -> Any:
    from audit.safety_case import build

    reg = load_valid(root)
    return build(reg, sign_off=sign_off_state(reg))


def cmd_case(args: argparse.Namespace) -> int:
    from audit.safety_case import to_json
    from audit.safety_report import markdown

    case = _case(args.root)
    text = json.dumps(to_json(case), indent=2, ensure_ascii=False) + "\n" if args.format == "json" else markdown(case)
    if args.out is None:
        print(text, end="")
        return 0
    from registry.atomic import atomic_write

    try:
        atomic_write(args.out, text)
    except OSError as e:
        raise CommandError(f"--out {args.out}: {e.strerror or e}") from None
    say(printable(f"wrote the safety case to {args.out}"))
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    from audit.safety_report import trace, trace_text

    case = _case(args.root)
    slug = find_calculator(case.reg, args.calculator).slug
    t = trace(case, slug)
    if args.format == "json":
        print(json.dumps(t, indent=2, ensure_ascii=False))
    else:
        say(printable(trace_text(t), multiline=True))
    return 0


def cmd_sign_off(args: argparse.Namespace) -> int:
    from registry.governance.safety_signing import sign_off

    return maintain(args.root, lambda: sign_off(args.root, args.key, args.reason, args.role))
