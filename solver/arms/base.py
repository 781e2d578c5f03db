"""What an arm sees (one case), what it may ask (the model and the executor), and what it returns."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from solver.arms.spec import ArmSpec, environment, first_words

if TYPE_CHECKING:  # pragma: no cover
    from registry.schema import Calculator
    from solver.data import BenchmarkRow
    from solver.executor import Outcome

# What the final answer must be, per output kind: in words for text replies, as a Python value for programs.
TEXT_FORMAT = {
    "decimal": "the number alone",
    "integer": "the whole number alone",
    "date": "the date as MM/DD/YYYY",
    "gestational_age": "the gestational age as (weeks, days)",
}
PROGRAM_FORMAT = {
    "decimal": "the answer as a number",
    "integer": "the answer as a whole number (int)",
    "date": "the answer as a datetime.date",
    "gestational_age": "the answer as a tuple (weeks, days) of two ints",
}


@dataclass(frozen=True)
class ChatReply:
    text: str
    finish_reason: str | None = None


@dataclass
class CaseInput:
    """One case of one seed, with what the registry says about its calculator.

    The row's answer, explanation and limits stay on `row` for the scorer; `context()` never
    copies them into a prompt (and the templates' access check admits no name that could).
    """

    row: "BenchmarkRow"
    seed: int
    calc: "Calculator"
    formula_text: str
    text_version: str
    text_sha256: str
    example: "BenchmarkRow | None" = None
    registry: Any = None

    @property
    def answer_kind(self) -> str:
        return self.calc.output.kind.value


class Env(Protocol):
    """The runner's services for one case: model turns and program runs."""

    async def chat(self, messages: list[dict[str, str]], *, temperature: float, max_tokens: int,
                   call: int) -> ChatReply:
        """One model turn; `call` numbers the case's turns 0, 1, ... (replay matches on it)."""
        ...

    async def execute(self, source: str) -> "Outcome": ...


@dataclass
class ArmResult:
    outcome: str  # executor kind, or answered / no_answer / unreadable
    answer: Any = None
    reply: str | None = None
    program: str | None = None
    prompt_sha256: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    table8: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def messages_sha256(messages: list[dict[str, str]]) -> str:
    blob = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _input_how(i: Any) -> str:
    kind = i.kind.value
    if i.options:
        return "one of " + ", ".join(json.dumps(o, ensure_ascii=False) for o in i.options)
    if kind == "boolean":
        return "true or false"
    if kind in ("number", "count"):
        return "a number"
    if kind == "date":
        return 'a date "MM/DD/YYYY"'
    if kind == "age":
        return '[number, "years"]'
    if kind == "special":
        return "see the calculator's description" + (f" ({i.description})" if i.description else "")
    unit = i.unit or ""
    units = [u for u in ([unit] + list(i.accepted_units)) if u]
    seen: list[str] = []
    for u in units:
        if u not in seen:
            seen.append(u)
    return "[number, unit] with unit one of " + ", ".join(json.dumps(u, ensure_ascii=False) for u in seen) if seen \
        else "[number, unit]"


_ENV = None


def template_env():
    global _ENV
    if _ENV is None:
        _ENV = environment()
    return _ENV


def context(spec: ArmSpec, case: CaseInput, *, program: bool) -> dict[str, Any]:
    """The names a template may use, restricted to what the arm's access rules give it."""
    kind = case.answer_kind
    ctx: dict[str, Any] = {
        "note": first_words(case.row.note, spec.note_budget_words or 0),
        "question": case.row.question,
        "answer_kind": kind,
        "answer_format": (PROGRAM_FORMAT if program else TEXT_FORMAT)[kind],
    }
    if spec.names_calculator:
        ctx["calculator_name"] = case.row.calculator_name
    if spec.formula_access == "given":
        ctx["formula_text"] = case.formula_text.strip()
    if spec.variable_access == "given":
        ctx["variables"] = dict(case.row.entities)
    if spec.worked_example != "none":
        ex = case.example
        if ex is None:
            raise ValueError(f"arm {spec.name} needs a worked example; give --one-shot")
        ctx["example"] = {
            "note": first_words(ex.note, spec.example_note_words),
            "question": ex.question,
            "explanation": first_words(ex.explanation, spec.example_explanation_words),
            "answer": ex.answer if not isinstance(ex.answer, tuple) else f"({ex.answer[0]}, {ex.answer[1]})",
        }
    if spec.kind == "extract":
        ctx["needed_inputs"] = [{"name": i.name, "how": _input_how(i)} for i in case.calc.inputs if i.used]
    return ctx


def render(spec: ArmSpec, role: str, ctx: dict[str, Any]) -> str:
    return template_env().get_template(spec.templates[role]).render(**ctx).strip() + "\n"


def user_messages(spec: ArmSpec, case: CaseInput, *, program: bool) -> list[dict[str, str]]:
    return [{"role": "user", "content": render(spec, "user", context(spec, case, program=program))}]


def call_record(call: int, messages: list[dict[str, str]], reply: ChatReply, temperature: float,
                max_tokens: int) -> dict[str, Any]:
    from solver.replies import stored

    return {"call": call, "prompt_sha256": messages_sha256(messages), "temperature": temperature, "max_tokens": max_tokens,
            **stored(reply.text), "finish_reason": reply.finish_reason}


async def ask_once(spec: ArmSpec, case: CaseInput, env: Env) -> tuple[ChatReply, dict[str, Any]]:
    """One user turn with the arm's decoding settings: the reply, and the ArmResult fields every
    single-call arm records (the raw reply, the prompt hash, the call)."""
    msgs = user_messages(spec, case, program=False)
    temperature, max_tokens = spec.decoding()
    reply = await env.chat(msgs, temperature=temperature, max_tokens=max_tokens, call=0)
    return reply, dict(reply=reply.text, prompt_sha256=messages_sha256(msgs),
                       calls=[call_record(0, msgs, reply, temperature, max_tokens)])


MAX_JSON_STARTS = 64
_OBJECT_START = re.compile(r'\{\s*["}]')  # only where a JSON object can begin


def find_json_object(reply: str | None) -> dict[str, Any] | None:
    """The first JSON object of a reply (a ```json block first), or None. Bounded work: a reply over the
    cap is not read, and at most MAX_JSON_STARTS places that can open an object are tried (each failed
    try costs up to the text's length)."""
    if not reply:
        return None
    from solver.replies import too_long

    if too_long(reply):
        return None
    blocks = re.findall(r"```(?:json)?\s*\n(.*?)```", reply, flags=re.DOTALL)
    decoder = json.JSONDecoder()
    tries = 0
    for text in blocks + [reply]:
        for m in _OBJECT_START.finditer(text):
            tries += 1
            if tries > MAX_JSON_STARTS:
                return None
            try:
                obj, _ = decoder.raw_decode(text, m.start())
                if isinstance(obj, dict):
                    return obj
            except (json.JSONDecodeError, RecursionError):
                pass
    return None
