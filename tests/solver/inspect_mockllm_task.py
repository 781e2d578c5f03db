"""A two-sample MedCalc-Bench-style task run by inspect_ai itself on its `mockllm` model; the test of the
`.eval` importer runs this file in a child process (`python inspect_mockllm_task.py LOG_DIR`) and imports the
log it writes, with inspect_ai's default settings (the `.eval` format, zstd members).

The mock's replies carry their token usage, since without it mockllm counts tokens with tiktoken, which
downloads its encoding (no network here). The notes are invented placeholders that must never reach an
imported run. Row 1's gold is 25.238 and the reply 25.9 (right within MedCalc-Bench's 5 %, wrong for
inspect_ai's exact `match()` scorer: a verdict difference); row 2's gold is 4 and the reply 4.
"""
from __future__ import annotations

import sys
from typing import Any

from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

NOTE = "PLACEHOLDER PATIENT NOTE 5e1d: must never reach the imported run."
REPLIES = {"creatinine clearance": "Creatinine clearance = (140 - 53) x 48 / (72 x 1.4).\nAnswer: 25.9",
           "CHA2DS2-VASc": "Two points for age.\nAnswer: 4"}


def reply(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    """The mock's answer to a question, whichever order the samples run in."""
    asked = messages[-1].text
    text = next(r for q, r in REPLIES.items() if q in asked)
    out = ModelOutput.from_content(model="mockllm/model", content=text)
    out.usage = ModelUsage(input_tokens=20, output_tokens=10, total_tokens=30)
    return out


def task() -> Task:
    samples = [Sample(id=1, input=f"{NOTE}\nWhat is the creatinine clearance?", target="25.238",
                      metadata={"Row Number": 1, "Calculator ID": "2", "Note ID": "pmc-1"}),
               Sample(id=2, input=f"{NOTE}\nWhat is the CHA2DS2-VASc score?", target="4",
                      metadata={"Row Number": 2, "Calculator ID": "4", "Note ID": "pmc-2"})]
    return Task(name="medcalc_bench", dataset=MemoryDataset(samples, name="medcalc-bench-mock"), solver=generate(),
                scorer=match())


if __name__ == "__main__":
    model = get_model("mockllm/model", custom_outputs=reply)
    [log] = eval(task(), model=model, log_dir=sys.argv[1], display="none")
    print(log.location)
    sys.exit(0 if log.status == "success" else 1)
