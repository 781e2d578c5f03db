"""Program arms: the model writes `def solve():`, the restricted executor runs it.

Program-Solve and + syntax (formula and gold variables given), Blind Program-Solve (neither), and
the blind levers: vote (five samples at 0.7, a value that occurs twice wins, ties to the first
sampled, else the first computed answer), repair (one corrective turn showing the executor's own
error string) and repair + vote (five samples, at most three corrective turns, then the vote).
"""
from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

from solver.arms import ARMS
from solver.arms.base import (
    ArmResult,
    CaseInput,
    ChatReply,
    Env,
    call_record,
    context,
    messages_sha256,
    render,
    user_messages,
)
from solver.arms.spec import ArmSpec


def readable(kind: str, value: Any) -> bool:
    """Can the scorer read this value as an answer of this output kind?"""
    if kind == "gestational_age":
        return isinstance(value, tuple)
    if kind == "date":
        return isinstance(value, dt.date)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def vote_key(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, int):
        return float(value)
    return value


def answer_of(value: Any) -> Any:
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    return value


class ProgramArm:
    def __init__(self, spec: ArmSpec):
        self.spec = spec

    def prompts(self, case: CaseInput) -> dict[str, str]:
        return {"user": user_messages(self.spec, case, program=True)[0]["content"]}

    async def run(self, case: CaseInput, env: Env) -> ArmResult:
        from solver.executor.extract import extract_program
        from solver.replies import too_long

        spec = self.spec
        kind = case.answer_kind
        msgs = user_messages(spec, case, program=True)
        calls: list[dict[str, Any]] = []
        counter = iter(range(1_000))
        temperature, max_tokens = spec.decoding()

        def ok(out: Any) -> bool:
            return out.kind == "value" and readable(kind, out.value)

        async def turn(messages: list[dict[str, str]]) -> tuple[ChatReply, Any]:
            n = next(counter)
            reply = await env.chat(messages, temperature=temperature, max_tokens=max_tokens, call=n)
            calls.append(call_record(n, messages, reply, temperature, max_tokens))
            out = await env.execute(reply.text)
            calls[-1]["executor"] = out.kind
            return reply, out

        if spec.samples == 1:
            cands = [await turn(msgs)]
        else:
            cands = list(await asyncio.gather(*(turn(msgs) for _ in range(spec.samples))))
        repairs = spec.max_repairs if spec.repair else 0
        for i, (reply, out) in enumerate(cands):
            if repairs <= 0:
                break
            if ok(out):
                continue
            error = f"{out.kind}: {out.detail}" if out.detail else out.kind
            if out.kind == "value":
                error = f"the program returned {out.display_value()!r}, which is not {context(spec, case, program=True)['answer_format']}"
            follow = render(spec, "repair", {**context(spec, case, program=True), "error": error,
                                              "previous_reply": reply.text})
            cands[i] = await turn(msgs + [{"role": "assistant", "content": reply.text},
                                          {"role": "user", "content": follow}])
            repairs -= 1
        chosen = self._choose(cands, ok)
        reply, out = cands[chosen]
        policy = getattr(out, "policy", None)
        program = None if too_long(reply.text) else extract_program(reply.text)  # over the cap: never parsed
        result = ArmResult(outcome=out.kind, reply=reply.text, program=program,
                           prompt_sha256=messages_sha256(msgs), calls=calls,
                           error=(out.detail or None) if out.kind != "value" else None, table8=out.table8,
                           extra={"executor_policy": policy} if policy else {})
        if out.kind == "value":
            if readable(kind, out.value):
                result.answer = answer_of(out.value)
            else:
                result.outcome, result.table8 = "unreadable", "unreadable"
                result.error = f"returned {out.display_value()!r} for a {kind} answer"
        if spec.samples > 1:
            result.extra["votes"] = [answer_of(o.value) if ok(o) else None for _, o in cands]
        return result

    @staticmethod
    def _choose(cands: list[tuple[ChatReply, Any]], ok) -> int:
        if len(cands) == 1:
            return 0
        keys = [vote_key(o.value) if ok(o) else None for _, o in cands]
        for i, k in enumerate(keys):
            if k is not None and keys.count(k) >= 2:
                return i
        for i, k in enumerate(keys):
            if k is not None:
                return i
        return 0


for _name in ("program-solve", "program-solve-syntax", "blind-program-solve", "blind-vote", "blind-repair",
              "blind-repair-vote"):
    ARMS.register(_name)(ProgramArm)
