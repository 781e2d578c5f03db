"""`formula solve`: one calculator from a gold-variable block, on the command line, as an answer record."""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from registry import jsontext
from registry.cliutil import CommandError, add_root
from registry.loader import Registry, get_registry
from registry.schema import Calculator
from registry.terminal import printable, say
from solver.library import VARIANTS, CalculatorError, resolve
from solver.library.errors import MissingInput, UnknownInput
from solver.records import AnswerRecord, cleaned
from solver.router.core import MODES, solve
from solver.router.versions import VersionError

ABSTAINED = 3


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("solve",
                       description="Compute a calculator and print its answer record. Entities are the benchmark's "
                       "gold-variable block as JSON, inline or @FILE. Route auto: the verified library where the "
                       "calculator has a function (cross-checked against --program when one is given: a mismatch "
                       "beyond the benchmark's tolerance abstains), else the program in the restricted executor, "
                       f"else an abstention with its reason. Exit {ABSTAINED} when it abstains.")
    p.add_argument("--calculator", required=True, help="benchmark id or registry slug")
    p.add_argument("--entities", required=True, help="JSON object, or @FILE holding one")
    p.add_argument("--variant", choices=VARIANTS, default="published",
                   help="published: the formula as published, for a patient's value (default); benchmark: "
                   "MedCalc-Bench's reference implementation, quirks included, for evaluation")
    p.add_argument("--version", help="compute with this released version (default: the active one)")
    p.add_argument("--route", choices=MODES, default="auto",
                   help="auto: the library where it has the calculator, else --program, else abstain (default); "
                   "library: the library only; program: --program only, in the restricted executor")
    p.add_argument("--program", type=Path, help="a model-written program (def solve(): ...) to run or cross-check")
    p.add_argument("--format", choices=["table", "json"], default="table",
                   help="table: for reading (default); json: the whole answer record (what `formula replay` reads)")
    p.add_argument("--explain", action="store_true",
                   help="also print the working: each step from the inputs to the answer (conversions, points "
                   "with the running total, terms, rounding), numbered")
    add_root(p)
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
        data = jsontext.loads(text, object_pairs_hook=_unique_keys)
    except jsontext.JsonError as e:
        raise ValueError(f"--entities is not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise ValueError("--entities must be a JSON object mapping entity names to values")
    return data


def _names(reg: Registry, calc: Calculator, ents: dict, first: CalculatorError) -> Failure:
    """Every unknown input (with did-you-mean) and every required one missing, in one message: the library
    stops at the first; the tools' completeness gate names them all, and so does this."""
    from solver.tools.gates import completeness, summary

    try:
        found = completeness(reg, calc.slug, ents)
    except Exception:  # noqa: BLE001 - no schema for this calculator: the library's own message stands
        found = []
    if not found:
        return Failure(str(first), first)
    slug = calc.slug
    return Failure(f"{slug}: {summary(found)} (`formula show {slug}` lists its inputs and units)",
                   first, [{"variable": f.variable, "problem": f.message} for f in found])


class Failure(Exception):
    """A refused solve: its message, and what `--format json` prints about it."""

    def __init__(self, message: str, cause: Exception | None = None, findings: list[dict] | None = None):
        super().__init__(message)
        self.cause = cause
        self.findings = findings or []

    def as_json(self) -> dict:
        c = self.cause
        kind = re.sub(r"(?<!^)(?=[A-Z])", "_", type(c).__name__ if c is not None else "ValueError").lower()
        out: dict = {"message": str(self), "kind": kind,  # missing_input, unknown_unit, out_of_range, value_error...
                     "calculator": getattr(c, "calculator", None), "variable": getattr(c, "variable", None),
                     "exit_code": 1}
        if self.findings:
            out["findings"] = self.findings
        return {"error": out}


def _solve(args: argparse.Namespace) -> AnswerRecord:
    ents = _entities(args.entities)
    program = None
    if args.program is not None:
        try:
            program = args.program.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"cannot read --program {args.program}: {getattr(e, 'strerror', None) or e}") from None
    reg = get_registry(args.root)
    calc = resolve(int(args.calculator) if args.calculator.isdigit() else args.calculator, reg)  # once per command
    try:  # names, units and codes are read in the registry's spelling by `solve` itself, as the tools read them
        return solve(calc, ents, variant=args.variant, version=args.version, route=args.route, program=program,
                     registry=reg)
    except (MissingInput, UnknownInput) as e:
        raise _names(reg, calc, cleaned(reg, calc, ents).entities, e) from None


def run(args: argparse.Namespace) -> int:
    try:
        rec = _solve(args)
    except (Failure, CalculatorError, VersionError, ValueError, CommandError) as e:
        failure = e if isinstance(e, Failure) else Failure(str(e), e)
        if args.format != "json":
            raise CommandError(str(failure)) from None
        print(json.dumps(failure.as_json(), ensure_ascii=False))  # for scripts, on stdout; the exit code as ever
        say(printable(f"error: {failure}"), file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps(rec.model_dump(mode="json"), ensure_ascii=False))
    else:  # every field may carry text from the registry or a program: escaped for the terminal
        head = f"{rec.calculator} {rec.version} ({rec.variant})"
        if rec.abstained:
            say(printable(f"{head}: abstained ({rec.route} route): {rec.reason}"))
        else:
            say(printable(f"{head}: {rec.value}" + (f" {rec.unit}" if rec.unit else "")))
            if rec.route != "library" or rec.cross_check:
                how = f"route {rec.route}" + (", program agrees" if rec.cross_check else "")
                say(f"  ({how})")
        if args.explain:
            from solver.library.working_text import numbered

            for line in numbered(rec.working):
                say(printable(line))
        for w in rec.warnings:
            say(printable(f"warning: {w}"), file=sys.stderr)
    return ABSTAINED if rec.abstained else 0
