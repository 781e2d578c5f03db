"""The paper's arms: each a YAML definition (`defs/`) plus jinja2 prompt templates (`templates/`).

    from solver.arms import ARMS, load_arm
    arm = load_arm("program-solve")        # an `Arm`
    result = await arm.run(case, env)      # env: the runner's model and executor access

An arm registers itself with `@ARMS.register(name)`; its definition's access rules (Table 16)
are checked against its templates' syntax trees when it loads.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

from solver.plugins import Plugins

if TYPE_CHECKING:  # pragma: no cover
    from solver.arms.base import ArmResult, CaseInput, Env
    from solver.arms.spec import ArmSpec


class Arm(Protocol):
    """One arm: renders its prompts, asks the model through `env`, and reads the answer."""

    spec: "ArmSpec"

    async def run(self, case: "CaseInput", env: "Env") -> "ArmResult": ...

    def prompts(self, case: "CaseInput") -> dict[str, str]:
        """The arm's first-turn prompt(s), rendered (for hashes and leak checks); {} without a model."""
        ...


ARMS: Plugins[Callable[[Any], Arm]] = Plugins("arm", "solver.arms")


def load_arm(name: str) -> Arm:
    from solver.arms.spec import load_spec

    factory = ARMS.get(name)
    return factory(load_spec(name))
