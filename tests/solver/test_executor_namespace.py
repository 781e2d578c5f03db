"""The fork server builds each policy's namespace before forking; every child takes its own copy.

So nothing a program binds reaches the next program on the same server, and
each policy still sees exactly its own builtins.
"""
from __future__ import annotations

from solver.executor import Executor, run_program
from solver.executor.policy import get_policy
from solver.executor.sandbox import fresh_namespace, make_globals

SETS_A_GLOBAL = "leak = 41\nord = len\ndef solve():\n    return leak + 1\n"
READS_THE_GLOBAL = "def solve():\n    return leak + 1\n"
USES_ORD = "def solve():\n    return ord('A')\n"


def test_a_programs_globals_do_not_reach_the_next_one() -> None:
    assert run_program(SETS_A_GLOBAL).value == 42
    later = run_program(READS_THE_GLOBAL)
    assert later.kind == "raised" and "NameError" in later.detail
    assert run_program(USES_ORD).value == 65  # the shadowed builtin is back


def test_the_same_holds_on_one_server_within_a_batch() -> None:
    with Executor(workers=1) as executor:
        outcomes = executor.map([SETS_A_GLOBAL, READS_THE_GLOBAL, USES_ORD] * 3)
    assert [o.kind for o in outcomes] == ["value", "raised", "value"] * 3
    assert [o.value for o in outcomes[::3]] == [42, 42, 42]


def test_each_policy_gets_its_own_builtins() -> None:
    assert run_program(USES_ORD, policy="clinical").value == 65
    paper = run_program(USES_ORD, policy="paper")
    assert paper.kind in {"raised", "rejected"} and paper.value is None


def test_without_a_prebuilt_namespace_one_is_built() -> None:
    # Outside a fork server (the fresh-interpreter runner, this test process) nothing is prebuilt.
    for name in ("paper", "clinical"):
        policy = get_policy(name)
        built = fresh_namespace(policy)
        assert set(built["__builtins__"]) == set(make_globals(policy)["__builtins__"])
        assert built is not fresh_namespace(policy)
