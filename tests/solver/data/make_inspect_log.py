"""Writes inspect_medcalc.json and inspect_medcalc.eval with inspect_ai's own classes (not run by the tests).

    python -m venv /tmp/ia && /tmp/ia/bin/pip install inspect_ai && /tmp/ia/bin/python make_inspect_log.py

A small MedCalc-Bench-style evaluation: each sample's metadata names the benchmark row and calculator,
the target is the gold answer, the scorer's verdict is "C" or "I". The notes are invented placeholders.
"""
from __future__ import annotations

from pathlib import Path

from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, ModelOutput
from inspect_ai.scorer import Score

HERE = Path(__file__).resolve().parent
NOTE = "PLACEHOLDER PATIENT NOTE: must never reach the imported run."
# (id, calculator id, note id, gold, the model's final message, scorer verdict, scorer answer)
CASES = [
    (1, 2, "pmc-1", "25.238", "CrCl = 53*48/(1.4*72).\nAnswer: 25.9", "C", "25.9"),
    (2, 4, "pmc-2", "4", "Points: age 2, sex 1, HTN 1.\nAnswer: 4", "C", "4"),
    (3, 13, "pmc-3", "09/23/2014", "LMP plus 280 days.\nAnswer: 09/23/2014", "C", "09/23/2014"),
    (4, 69, "pmc-4", "('14 weeks', '1 days')", "Answer: (14 weeks, 2 days)", "I", "(14 weeks, 2 days)"),
    (5, 5, "pmc-5", "93.333", "I cannot compute this from the note.", "I", None),
]


def sample(case: tuple) -> EvalSample:
    sid, calc, note, gold, reply, verdict, answer = case
    return EvalSample(
        id=sid, epoch=1, input=f"{NOTE}\n\nQuestion: compute calculator {calc}.", target=gold,
        messages=[ChatMessageSystem(content="You are a clinical calculator."),
                  ChatMessageUser(content=f"{NOTE}\n\nQuestion: compute calculator {calc}."),
                  ChatMessageAssistant(content=reply)],
        output=ModelOutput.from_content(model="openai/gpt-4o-mini", content=reply),
        scores={"medcalc_match": Score(value=verdict, answer=answer)},
        metadata={"Row Number": sid, "Calculator ID": str(calc), "Note ID": note},
    )


def main() -> None:
    spec = EvalSpec(created="2026-01-01T00:00:00+00:00", task="medcalc_bench", dataset=EvalDataset(
        name="ncbi/MedCalc-Bench-v1.0", samples=len(CASES)), model="openai/gpt-4o-mini", config=EvalConfig())
    log = EvalLog(status="success", eval=spec, samples=[sample(c) for c in CASES])
    write_eval_log(log, HERE / "inspect_medcalc.json", format="json")
    write_eval_log(log, HERE / "inspect_medcalc.eval", format="eval")


if __name__ == "__main__":
    main()
