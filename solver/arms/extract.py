"""Extract-Solve library: one greedy extraction call over the whole note, then the library function."""
from __future__ import annotations

from solver.arms import ARMS
from solver.arms.base import (
    ArmResult,
    CaseInput,
    Env,
    ask_once,
    find_json_object,
    user_messages,
)
from solver.arms.library import plain
from solver.arms.spec import ArmSpec
from solver.replies import too_long


class ExtractArm:
    def __init__(self, spec: ArmSpec):
        self.spec = spec

    def prompts(self, case: CaseInput) -> dict[str, str]:
        return {"user": user_messages(self.spec, case, program=False)[0]["content"]}

    async def run(self, case: CaseInput, env: Env) -> ArmResult:
        from solver.library import CalculatorError, compute

        reply, base = await ask_once(self.spec, case, env)
        entities = find_json_object(reply.text)
        if entities is None:
            return ArmResult(outcome="unreadable", error=too_long(reply.text) or "no JSON object in the extraction reply",
                             table8="unreadable", **base)
        try:
            res = compute(case.calc.slug, entities, variant=self.spec.library_variant or "benchmark",
                          registry=case.registry)
        except CalculatorError as e:
            return ArmResult(outcome="no_answer", error=str(e), table8="raised", **base)
        return ArmResult(outcome="answered", answer=plain(res.value), extra={"entities": entities}, **base)


ARMS.register("extract-solve")(ExtractArm)
