"""Arms where the model does the arithmetic: one greedy call, answer on the final-answer line."""
from __future__ import annotations

from solver.arms import ARMS
from solver.arms.base import ArmResult, CaseInput, Env, ask_once, user_messages
from solver.arms.spec import ArmSpec
from solver.scoring import read_answer


class TextArm:
    def __init__(self, spec: ArmSpec):
        self.spec = spec

    def prompts(self, case: CaseInput) -> dict[str, str]:
        return {"user": user_messages(self.spec, case, program=False)[0]["content"]}

    async def run(self, case: CaseInput, env: Env) -> ArmResult:
        reply, base = await ask_once(self.spec, case, env)
        kind = "gestational_age" if case.answer_kind == "gestational_age" else case.row.output_type
        outcome, answer = read_answer(reply.text, kind)
        return ArmResult(outcome=outcome, answer=answer, table8=None if outcome == "answered" else "unreadable",
                         **base)


for _name in ("note-only", "note-only-gold", "page-without-formula", "open-book"):
    ARMS.register(_name)(TextArm)
