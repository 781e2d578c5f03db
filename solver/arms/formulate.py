"""Formulate-Solve tree: the model states the formula as an expression tree, evaluated exactly here."""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from solver.arms import ARMS
from solver.arms.base import (
    ArmResult,
    CaseInput,
    Env,
    ask_once,
    find_json_object,
    user_messages,
)
from solver.arms.spec import ArmSpec

MAX_NODES = 2_000
MAX_EXPONENT = 64


class TreeError(ValueError):
    """An invalid tree, a missing variable, or an evaluation that raised."""


def _number(x: Any, what: str) -> Fraction:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TreeError(f"{what} is not a number: {x!r}")
    try:
        return Fraction(str(x)) if isinstance(x, float) else Fraction(x)
    except (ValueError, OverflowError):
        raise TreeError(f"{what} is not a finite number: {x!r}") from None


def evaluate(tree: Any, variables: dict[str, Fraction], missing: set[str]) -> Fraction:  # noqa: C901  one case per tree node kind
    count = 0

    def ev(node: Any) -> Fraction:  # noqa: C901  one case per tree node kind
        nonlocal count
        count += 1
        if count > MAX_NODES:
            raise TreeError(f"the tree has more than {MAX_NODES} nodes")
        if isinstance(node, str):
            if node in missing:
                raise TreeError(f"variable {node!r} is listed as missing")
            if node not in variables:
                raise TreeError(f"unknown variable {node!r}")
            return variables[node]
        if isinstance(node, (int, float)) and not isinstance(node, bool):
            return _number(node, "a constant")
        if not isinstance(node, dict) or set(node) != {"op", "args"} or not isinstance(node["args"], list):
            raise TreeError(f"not a node: {str(node)[:80]}")
        op, args = node["op"], [ev(a) for a in node["args"]]
        if op in ("+", "*") and len(args) >= 2:
            out = args[0]
            for a in args[1:]:
                out = out + a if op == "+" else out * a
            return out
        if op == "neg" and len(args) == 1:
            return -args[0]
        if len(args) != 2:
            raise TreeError(f"operator {op!r} with {len(args)} arguments")
        a, b = args
        if op == "-":
            return a - b
        if op == "/":
            if b == 0:
                raise TreeError("division by zero")
            return a / b
        if op == "^":
            if b.denominator != 1 or abs(b) > MAX_EXPONENT:
                raise TreeError("a power needs a whole-number exponent of at most 64")
            if a == 0 and b < 0:
                raise TreeError("zero to a negative power")
            return a ** int(b)
        compare = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}
        if op in compare:
            return Fraction(int(compare[op]))
        raise TreeError(f"unknown operator {op!r}")

    return ev(tree)


def solve_reply(obj: dict[str, Any]) -> Fraction:
    if "tree" not in obj or not isinstance(obj.get("variables", {}), dict):
        raise TreeError("the reply needs 'tree' and a 'variables' object")
    missing = obj.get("missing") or []
    if not isinstance(missing, list):
        raise TreeError("'missing' must be a list")
    variables = {str(k): _number(v, f"variable {k!r}") for k, v in obj.get("variables", {}).items()}
    return evaluate(obj["tree"], variables, {str(m) for m in missing})


class FormulateArm:
    def __init__(self, spec: ArmSpec):
        self.spec = spec

    def prompts(self, case: CaseInput) -> dict[str, str]:
        if case.answer_kind in self.spec.skip_output_kinds:
            return {}
        return {"user": user_messages(self.spec, case, program=False)[0]["content"]}

    async def run(self, case: CaseInput, env: Env) -> ArmResult:
        if case.answer_kind in self.spec.skip_output_kinds:
            return ArmResult(outcome="no_answer", error=f"{case.answer_kind} case: the arm abstains before any call")
        reply, base = await ask_once(self.spec, case, env)
        obj = find_json_object(reply.text)
        if obj is None:
            return ArmResult(outcome="unreadable", error="no JSON object in the reply", table8="unreadable", **base)
        try:
            value = solve_reply(obj)
        except TreeError as e:
            return ArmResult(outcome="no_answer", error=str(e), table8="raised", **base)
        answer: Any = int(value) if value.denominator == 1 and case.answer_kind == "integer" else float(value)
        return ArmResult(outcome="answered", answer=answer, extra={"tree": obj.get("tree")}, **base)


ARMS.register("formulate-solve")(FormulateArm)
