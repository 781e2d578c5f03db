"""Arms where the model does the arithmetic: one greedy call, answer on the final-answer line."""
from __future__ import annotations

from solver.arms import ARMS
from solver.arms.base import ArmResult, CaseInput, Env, call_record, messages_sha256, user_messages
from solver.arms.spec import ArmSpec
from solver.scoring import read_answer


class TextArm:
    def __init__(self, spec: ArmSpec):
        self.spec = spec

    def prompts(self, case: CaseInput) -> dict[str, str]:
        return {"user": user_messages(self.spec, case, program=False)[0]["content"]}

    async def run(self, case: CaseInput, env: Env) -> ArmResult:
        msgs = user_messages(self.spec, case, program=False)
        temperature, max_tokens = self.spec.decoding()
        reply = await env.chat(msgs, temperature=temperature, max_tokens=max_tokens, call=0)
        kind = "gestational_age" if case.answer_kind == "gestational_age" else case.row.output_type
        outcome, answer = read_answer(reply.text, kind)
        return ArmResult(outcome=outcome, answer=answer, reply=reply.text, prompt_sha256=messages_sha256(msgs),
                         calls=[call_record(0, msgs, reply, temperature, max_tokens)],
                         table8=None if outcome == "answered" else "unreadable")


for _name in ("note-only", "note-only-gold", "page-without-formula", "open-book"):
    ARMS.register(_name)(TextArm)
