"""Each limit and rule of the executor's pinned contract, tested on both sides where it has two."""
from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from textwrap import dedent

import pytest

from solver import exec_cli
from solver.executor import Executor, Outcome, run_program, server_pids, shutdown
from solver.executor.checker import Rejected, check, check_tree
from solver.executor.extract import extract_program
from solver.executor.outcome import TABLE8
from solver.executor.policy import CLINICAL, MAX_LINES, MAX_SOURCE_CHARS, PAPER, Policy
from solver.executor.procs import descendant_pids

ROOT = Path(__file__).resolve().parents[2]


def prog(body: str) -> str:
    return dedent(body).strip("\n") + "\n"


# --- source size ----------------------------------------------------------------------

def _padded(total: int) -> str:
    head = "def solve():\n    return 7\n#"
    return head + "x" * (total - len(head))


def test_exactly_8000_characters_is_accepted() -> None:
    source = _padded(MAX_SOURCE_CHARS)
    assert len(source) == 8000
    assert run_program(source).kind == "value"


def test_8001_characters_is_rejected() -> None:
    outcome = run_program(_padded(MAX_SOURCE_CHARS + 1))
    assert outcome.kind == "rejected"
    assert "8001" in outcome.detail and "8000" in outcome.detail


def test_limit_counts_characters_not_bytes() -> None:
    head = "def solve():\n    return 7\n#"
    source = head + "é" * (MAX_SOURCE_CHARS - len(head))  # 2 bytes each in UTF-8
    assert len(source) == 8000 and len(source.encode()) > 8000
    assert run_program(source).kind == "value"


def test_limit_applies_to_the_program_not_the_whole_reply() -> None:
    reply = "chatter " * 2000 + "\n```python\ndef solve():\n    return 3\n```\n"
    assert len(reply) > 8000
    assert run_program(reply).value == 3


# --- line limit boundary ---------------------------------------------------------------
# The tracer counts line events of the program's own code.  For
#     def solve():            module level: 1 event
#         n = 0               1
#         for i in range(K):  K + 1 (one per iteration and one at exhaustion)
#             n += 1          K
#         return n            1
# the total is 2K + 4, and one extra statement makes it 2K + 5.

def _loop(k: int, extra: bool) -> str:
    return f"def solve():\n    n = 0\n{'    m = 0' + chr(10) if extra else ''}    for i in range({k}):\n        n += 1\n    return n\n"


def test_exactly_100000_lines_is_allowed() -> None:
    k = (MAX_LINES - 4) // 2
    assert 2 * k + 4 == 100_000
    outcome = run_program(_loop(k, extra=False))
    assert outcome.kind == "value" and outcome.value == k


def test_100001_lines_is_line_limit() -> None:
    k = (MAX_LINES - 4) // 2
    assert 2 * k + 5 == 100_001
    outcome = run_program(_loop(k, extra=True))
    assert outcome.kind == "line_limit"


def test_one_line_infinite_loop_is_counted() -> None:
    # a jump back to the same line makes no line event; the tracer counts it anyway
    assert run_program("def solve():\n    while True: pass\n").kind == "line_limit"


def test_lines_in_helpers_lambdas_and_comprehensions_count() -> None:
    src = prog(
        """
        def helper(x):
            return x + 1
        def solve():
            total = 0
            for i in range(40000):
                total = helper(total)
            return total
        """
    )
    assert run_program(src).kind == "line_limit"  # 3 events per iteration
    comp = "def solve():\n    return len([(lambda v: v)(i) for i in range(60000)])\n"
    assert run_program(comp).kind == "line_limit"


def test_line_cap_still_applies_after_a_caught_recursion_error() -> None:
    src = prog(
        """
        def dive(n):
            try:
                return dive(n + 1)
            except Exception:
                return n
        def solve():
            depth = dive(0)
            while True:
                pass
        """
    )
    assert run_program(src).kind == "line_limit"


_KNOCK_OUT = r"""
import json, sys
sys.path.insert(0, {root!r})
from solver.executor import sandbox
plain = sandbox.make_globals
def with_knock(*args):
    namespace = plain(*args)
    namespace["__builtins__"]["knock"] = lambda: sys.settrace(None)
    return namespace
sandbox.make_globals = with_knock
code = compile("def solve():\n    knock()\n    return 1\n", "<program>", "exec")
print(json.dumps(sandbox.execute(code, 1)))
"""


def test_a_value_computed_after_the_tracer_was_lost_is_discarded() -> None:
    # CPython silently drops a trace function that raises (e.g. MemoryError inside
    # it).  Simulate that loss: the answer must not be reported as a value.
    out = subprocess.run([sys.executable, "-c", _KNOCK_OUT.format(root=str(ROOT))],
                         capture_output=True, text=True, timeout=30)
    result = json.loads(out.stdout)
    assert result["kind"] == "line_limit" and "interrupted" in result["detail"]


# --- parse-time rejections, each with its reason -----------------------------------------

REJECTIONS = [
    ("import_os", "import os\ndef solve():\n    return 1\n", "import of 'os'"),
    ("import_dotted", "import os.path\ndef solve():\n    return 1\n", "import of 'os.path'"),
    ("from_import_other", "from os import path\ndef solve():\n    return 1\n", "import from 'os'"),
    ("from_import_star", "from math import *\ndef solve():\n    return 1\n", "import *"),
    ("relative_import", "from . import x\ndef solve():\n    return 1\n", "relative import"),
    ("from_math_unlisted", "from math import sys\ndef solve():\n    return 1\n", "math.sys"),
    ("eval", "def solve():\n    return eval('1')\n", "dynamic evaluation"),
    ("exec", "def solve():\n    exec('x=1')\n    return 1\n", "dynamic evaluation"),
    ("compile", "def solve():\n    return compile('1','','eval')\n", "dynamic evaluation"),
    ("dunder_import", "def solve():\n    return __import__('os')\n", "underscore"),
    ("open", "def solve():\n    return open('/etc/passwd')\n", "file access"),
    ("underscore_attribute", "def solve():\n    return (1).__class__\n", "'__class__'"),
    ("global", "x = 1\ndef solve():\n    global x\n    return x\n", "global"),
    ("nonlocal", "def solve():\n    x = 1\n    def f():\n        nonlocal x\n    return x\n", "nonlocal"),
    ("dot_format_attribute", "def solve():\n    return len('{0.real}'.format(3))\n", "string formatting"),
    ("dot_format_item", "def solve():\n    return len('{0[0]}'.format([3]))\n", "string formatting"),
    ("dot_format_nested", "def solve():\n    return len('{:{w}}'.format(3, w=4))\n", "string formatting"),
    ("dot_format_variable", "def solve():\n    s = '{}'\n    return len(s.format(3))\n", "string formatting"),
    ("format_map", "def solve():\n    return len('{a}'.format_map({'a': 1}))\n", "string formatting"),
    ("async_def", "async def f():\n    pass\ndef solve():\n    return 1\n", "async"),
    ("await", "async def f():\n    await g()\ndef solve():\n    return 1\n", "async"),
    ("yield", "def g():\n    yield 1\ndef solve():\n    return 1\n", "yield"),
    ("yield_from", "def g():\n    yield from [1]\ndef solve():\n    return 1\n", "yield from"),
    ("getattr", "def solve():\n    return getattr(1, 'real')\n", "reflection"),
    ("setattr", "def solve():\n    setattr(1, 'a', 2)\n", "reflection"),
    ("delattr", "def solve():\n    delattr(1, 'a')\n", "reflection"),
    ("globals", "def solve():\n    return globals()\n", "reflection"),
    ("locals", "def solve():\n    return locals()\n", "reflection"),
    ("vars", "def solve():\n    return vars()\n", "reflection"),
    ("dir", "def solve():\n    return dir()\n", "reflection"),
    ("type", "def solve():\n    return type(1)\n", "reflection"),
    ("object", "def solve():\n    return object()\n", "reflection"),
    ("breakpoint", "def solve():\n    breakpoint()\n", "interactive"),
    ("input", "def solve():\n    return input()\n", "interactive"),
    ("help", "def solve():\n    help()\n", "interactive"),
    ("memoryview", "def solve():\n    return memoryview(b'')\n", "raw memory"),
    ("no_solve", "def main():\n    return 1\n", "def solve()"),
    ("solve_lambda", "solve = lambda: 1\n", "def solve()"),
    ("solve_nested_only", "if True:\n    def solve():\n        return 1\n", "def solve()"),
    ("solve_with_param", "def solve(x):\n    return x\n", "no parameters"),
    ("solve_with_default_param", "def solve(x=1):\n    return x\n", "no parameters"),
    ("solve_with_varargs", "def solve(*args):\n    return 1\n", "no parameters"),
    ("solve_with_kwonly", "def solve(*, k=1):\n    return k\n", "no parameters"),
    ("syntax_error", "def solve(:\n    return 1\n", "does not parse"),
    ("null_byte", "def solve():\n    return 1\x00\n", "does not parse"),
    ("class", "class A:\n    pass\ndef solve():\n    return 1\n", "class definitions"),
    ("decorator", "def d(f):\n    return f\n@d\ndef solve():\n    return 1\n", "decorators"),
    ("with", "def solve():\n    with x:\n        pass\n", "with statements"),
    ("attribute_assignment", "import math\ndef solve():\n    math.pi = 3\n    return 1\n", "assigning"),
    ("attribute_augassign", "import math\ndef solve():\n    math.pi += 1\n    return 1\n", "assigning"),
    ("attribute_delete", "import math\ndef solve():\n    del math.pi\n    return 1\n", "deleting"),
    ("unlisted_attribute", "def solve():\n    return [].mro\n", "'mro'"),
    ("unlisted_module_attribute", "import calendar\ndef solve():\n    return calendar.datetime\n", "calendar.datetime"),
    ("module_alias_attribute", "import time as t\ndef solve():\n    return t.time()\n", "time.time"),
    ("match_class_attr", "def solve():\n    match 1:\n        case int(tb_frame=f):\n            return 1\n", "'tb_frame'"),
    ("except_star", "def solve():\n    try:\n        pass\n    except* ValueError:\n        pass\n", "except*"),
    ("async_comprehension", "async def f():\n    return [x async for x in y]\ndef solve():\n    return 1\n", "async"),
]


# Rejected under `paper` only (Table 17's string formatting, generator syntax and
# underscore names); `clinical` accepts them (test_executor_policies.py).
PAPER_ONLY_REJECTIONS = [
    ("underscore_name", "def solve():\n    _x = 1\n    return _x\n", "'_x'"),
    ("fstring", "def solve():\n    return len(f'{1}')\n", "f-strings"),
    ("percent_format", "def solve():\n    return len('%d' % 3)\n", "string formatting (%)"),
    ("strftime", "import datetime\ndef solve():\n    return datetime.date(2020,1,1).strftime('%Y')\n", "string formatting"),
    ("format_builtin", "def solve():\n    return format(3, 'd')\n", "string formatting"),
    ("dot_format", "def solve():\n    return len('{}'.format(3))\n", "string formatting"),
    ("statistics", "import statistics\ndef solve():\n    return statistics.mean([1, 2])\n", "import of 'statistics'"),
    ("generator_expression", "def solve():\n    return sum(x for x in [1, 2])\n", "generator expressions"),
    ("keyword_underscore", "def solve():\n    return dict(_a=1)\n", "keyword argument '_a'"),
    ("walrus_underscore", "def solve():\n    return (_x := 1)\n", "'_x'"),
]


@pytest.mark.parametrize("policy", ["paper", "clinical"])
@pytest.mark.parametrize("source, reason", [r[1:] for r in REJECTIONS], ids=[r[0] for r in REJECTIONS])
def test_construct_is_rejected_with_reason(source: str, reason: str, policy: str) -> None:
    outcome = run_program(source, policy=policy)
    assert outcome.kind == "rejected", outcome
    assert reason in outcome.detail, outcome.detail
    assert outcome.value is None and outcome.policy == policy


@pytest.mark.parametrize("policy", [PAPER, CLINICAL], ids=["paper", "clinical"])
@pytest.mark.parametrize("source, reason", [r[1:] for r in REJECTIONS], ids=[r[0] for r in REJECTIONS])
def test_checker_alone_gives_same_reason(source: str, reason: str, policy: Policy) -> None:
    with pytest.raises(Rejected) as info:
        check(source, policy)
    assert reason in info.value.reason


@pytest.mark.parametrize("source, reason", [r[1:] for r in PAPER_ONLY_REJECTIONS], ids=[r[0] for r in PAPER_ONLY_REJECTIONS])
def test_paper_policy_rejects_with_reason(source: str, reason: str) -> None:
    outcome = run_program(source, policy="paper")
    assert outcome.kind == "rejected" and reason in outcome.detail, outcome
    with pytest.raises(Rejected) as info:
        check(source, PAPER)
    assert reason in info.value.reason
    check(source, CLINICAL)  # accepted by the checker under `clinical`


def test_modulo_on_numbers_and_variables_is_allowed() -> None:
    assert run_program("def solve():\n    x = 17\n    return x % 5 + 9 % 4\n").value == 3


def test_rejection_happens_before_anything_runs() -> None:
    src = "import time\ntime.sleep(3)\nimport os\ndef solve():\n    return 1\n"
    start = time.monotonic()
    outcome = run_program(src)
    assert outcome.kind == "rejected" and time.monotonic() - start < 2.5


def test_unknown_ast_node_type_is_rejected() -> None:
    class Weird(ast.expr):
        _fields = ()

    tree = ast.Module(body=[ast.Expr(value=Weird())], type_ignores=[])
    with pytest.raises(Rejected, match="unsupported syntax: Weird"):
        check_tree(tree)


def test_parser_too_deep_is_rejected_not_crashed() -> None:
    # 3.11's parser and compiler refuse these depths; 3.12+ compile some of them,
    # and then the program simply runs (never a crash).
    clean = {"rejected"} if sys.version_info < (3, 12) else {"rejected", "value"}
    for bomb in ("(" * 3000 + ")" * 3000, "-" * 7900 + "1", "+".join(["1"] * 3900), "lambda:" * 1100 + "1"):
        outcome = run_program("def solve():\n    return 1\nx = " + bomb + "\n")
        assert outcome.kind in clean, outcome
        assert outcome.kind == "rejected" or outcome.value == 1


# --- allowed builtins and modules ----------------------------------------------------------

def test_allowed_builtins_are_usable() -> None:
    src = prog(
        """
        def solve():
            xs = sorted([3, 1, 2])
            pairs = list(zip(xs, reversed(xs)))
            ok = all([isinstance(x, int) for x in xs]) and any([x > 2 for x in xs])
            m = dict(enumerate(map(abs, filter(lambda v: v != 2, [-1, 2, -3]))))
            q, r = divmod(pow(2, 10), 7)
            s = set(xs) | set(tuple([4]))
            total = sum(xs) + len(pairs) + max(xs) + min(xs) + round(2.6) + int("4") + int(float("1.5"))
            if bool(ok) and str(1) == "1" and len(s) == 4 and m[1] == 3 and len(range(3)) == 3:
                return total + q + r
            return -1
        """
    )
    assert run_program(src).value == (6 + 3 + 3 + 1 + 3 + 4 + 1) + 146 + 2


def test_the_six_exception_types_can_be_raised_and_caught() -> None:
    src = prog(
        """
        def solve():
            caught = 0
            for exc in [Exception, ValueError, TypeError, ZeroDivisionError, KeyError, IndexError]:
                try:
                    raise exc("x")
                except Exception:
                    caught += 1
            return caught
        """
    )
    assert run_program(src).value == 6


def test_unlisted_builtin_is_a_name_error() -> None:
    outcome = run_program("def solve():\n    return hash(1)\n")
    assert outcome.kind == "raised" and outcome.detail.startswith("NameError")


def test_module_views_hold_only_listed_attributes() -> None:
    src = "import calendar\ndef solve():\n    c = calendar\n    return c.datetime\n"
    outcome = run_program(src)  # `datetime` passes the checker (it is a datetime attribute) ...
    assert outcome.kind == "raised" and "AttributeError" in outcome.detail  # ... but not on calendar


def test_time_sleep_is_allowed_within_the_wall_limit() -> None:
    outcome = run_program("import time\ndef solve():\n    time.sleep(0.05)\n    return 1\n")
    assert outcome.kind == "value" and outcome.wall_s >= 0.05


def test_import_inside_function_and_alias() -> None:
    src = "def solve():\n    import math as m\n    from datetime import date as d\n    return m.floor(d(2020, 1, 2).day * 2.5)\n"
    assert run_program(src).value == 5


def test_int_to_str_digit_cap_is_kept() -> None:
    outcome = run_program("def solve():\n    return len(str(10 ** 5000))\n")
    assert outcome.kind == "raised" and "ValueError" in outcome.detail


# --- return kinds --------------------------------------------------------------------------

KINDS = [
    ("int", "return 3", "value", 3),
    ("negative_int", "return -3", "value", -3),
    ("float", "return 2.5", "value", 2.5),
    ("date", "import datetime\n    return datetime.date(2024, 2, 29)", "value", dt.date(2024, 2, 29)),
    ("midnight_datetime", "import datetime\n    return datetime.datetime(2024, 2, 29)", "value", dt.date(2024, 2, 29)),
    ("weeks_days", "return (39, 6)", "value", (39, 6)),
    ("int64_max", "return 2 ** 63 - 1", "value", 2**63 - 1),
    ("int64_min_plus_one", "return -(2 ** 63 - 1)", "value", -(2**63 - 1)),
    ("big_int", "return 2 ** 63", "bad_kind", None),
    ("bool", "return True", "bad_kind", None),
    ("none", "return None", "bad_kind", None),
    ("nan", "return float('nan')", "bad_kind", None),
    ("inf", "return float('inf')", "bad_kind", None),
    ("str", "return '5'", "bad_kind", None),
    ("list", "return [39, 6]", "bad_kind", None),
    ("three_tuple", "return (1, 2, 3)", "bad_kind", None),
    ("float_tuple", "return (39.0, 6.0)", "bad_kind", None),
    ("bool_tuple", "return (True, 6)", "bad_kind", None),
    ("datetime_with_time", "import datetime\n    return datetime.datetime(2024, 1, 1, 12, 30)", "bad_kind", None),
    ("timedelta", "import datetime\n    return datetime.timedelta(days=3)", "bad_kind", None),
    ("complex", "return 1j", "bad_kind", None),
    ("tuple_subclass", "import datetime\n    return datetime.date(2024, 1, 1).isocalendar()", "bad_kind", None),
]


@pytest.mark.parametrize("body, kind, value", [k[1:] for k in KINDS], ids=[k[0] for k in KINDS])
def test_return_kinds(body: str, kind: str, value: object) -> None:
    outcome = run_program(f"def solve():\n    {body}\n")
    assert outcome.kind == kind, outcome
    assert outcome.value == value
    if value is not None:
        assert type(outcome.value) is type(value)


def test_raised_detail_has_type_and_message_trimmed() -> None:
    outcome = run_program("def solve():\n    raise ValueError('y' * 1000)\n")
    assert outcome.kind == "raised"
    assert outcome.detail.startswith("ValueError: yyy") and len(outcome.detail) <= 300


def test_missing_solve_at_runtime_is_raised() -> None:
    outcome = run_program("def solve():\n    return 1\ndel solve\n")
    assert outcome.kind == "raised" and "KeyError" in outcome.detail


# --- no program and fenced extraction -----------------------------------------------------------

@pytest.mark.parametrize("reply", ["", "   \n\t", "```python\n```", "```json\n{\"a\": 1}\n```"], ids=["empty", "blank", "empty_block", "only_json_block"])  # noqa: E501
def test_no_program(reply: str) -> None:
    outcome = run_program(reply)
    assert outcome.kind == "no_program" and outcome.table8 == "no program"


def test_non_text_input_is_no_program() -> None:
    outcome = run_program(b"def solve():\n    return 1\n")  # type: ignore[arg-type]
    assert outcome.kind == "no_program" and "bytes" in outcome.detail


def test_lone_surrogates_are_rejected_not_crashed() -> None:
    assert run_program("def solve():\n    return 1\n#\udcff").kind == "rejected"


def test_python_fence_is_extracted() -> None:
    assert run_program("Sure!\n```python\ndef solve():\n    return 11\n```\nDone.").value == 11


def test_bare_fence_is_extracted() -> None:
    assert run_program("```\ndef solve():\n    return 12\n```").value == 12


def test_first_python_block_wins_and_other_languages_are_skipped() -> None:
    reply = (
        "```json\n{\"x\": 1}\n```\n"
        "```python\ndef solve():\n    return 1\n```\n"
        "```python\ndef solve():\n    return 2\n```\n"
    )
    assert extract_program(reply) == "def solve():\n    return 1\n"
    assert run_program(reply).value == 1


def test_truncated_fence_runs_to_end_of_reply() -> None:
    assert run_program("```python\ndef solve():\n    return 4\n").value == 4


def test_plain_source_without_fence_is_the_program() -> None:
    assert extract_program("def solve():\n    return 1\n") == "def solve():\n    return 1\n"


# --- isolation and limits applied in the child ------------------------------------------------------

_PROBE = r"""
import json, os, resource, sys
sys.path.insert(0, {root!r})
from solver.executor import sandbox
r, w = os.pipe()
extra = os.open(os.devnull, os.O_RDONLY)   # an inherited descriptor that must be closed
pid = os.fork()
if pid == 0:
    sandbox.isolate(w)
    sandbox.apply_limits()
    open_fds = [fd for fd in range(64) if _is_open(fd)] if False else None
    fds = []
    for fd in range(64):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            pass
    lim = {{name: resource.getrlimit(getattr(resource, name))
           for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_CORE")}}
    report = {{"fds": fds, "limits": lim, "env": dict(os.environ), "pgid": os.getpgid(0), "pid": os.getpid(),
              "digits": sys.get_int_max_str_digits()}}
    os.write(sandbox.RESULT_FD, json.dumps(report).encode())
    os._exit(0)
os.close(w)
data = b""
while True:
    chunk = os.read(r, 65536)
    if not chunk:
        break
    data += chunk
os.waitpid(pid, 0)
print(data.decode())
"""


def test_child_isolation_and_resource_limits() -> None:
    env = {**os.environ, "SECRET_TOKEN": "do-not-leak"}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(root=str(ROOT))], capture_output=True, text=True, env=env, timeout=30
    )
    report = json.loads(out.stdout)
    assert report["fds"] == [0, 1, 2, 3]  # /dev/null x3 and the result pipe, nothing inherited
    assert report["env"] == {"TZ": "UTC0"}  # nothing inherited; only the fixed time zone (POSIX rule for UTC)
    assert report["pgid"] == report["pid"]  # own process group, killable as a group
    lim = report["limits"]
    assert lim["RLIMIT_AS"] == [256 * 1024 * 1024] * 2
    assert lim["RLIMIT_CPU"] == [5, 6]
    assert lim["RLIMIT_FSIZE"] == [0, 0]
    assert lim["RLIMIT_NOFILE"] == [4, 4]
    assert lim["RLIMIT_NPROC"] == [0, 0]
    assert lim["RLIMIT_CORE"] == [0, 0]
    assert report["digits"] == 4300


def test_memory_limit_both_sides() -> None:
    small = run_program("def solve():\n    return len('x' * (50 * 1024 * 1024))\n")
    assert small.kind == "value" and small.value == 50 * 1024 * 1024
    big = run_program("def solve():\n    return len('x' * (300 * 1024 * 1024))\n")
    assert big.kind == "memory", big


def test_printed_output_is_discarded(capfd: pytest.CaptureFixture[str]) -> None:
    outcome = run_program("def solve():\n    print('LOUD' * 100)\n    return 1\n")
    assert outcome.value == 1
    captured = capfd.readouterr()
    assert "LOUD" not in captured.out and "LOUD" not in captured.err


# --- wall clock and CPU time (one batch, about 5 s) --------------------------------------------------

TIMED = {
    "sleep_past_wall": "import time\ndef solve():\n    time.sleep(6)\n    return 1\n",
    "cpu_loop_without_lines": "def solve():\n    return sum(range(10 ** 11))\n",
    "short_sleep": "import time\ndef solve():\n    time.sleep(0.2)\n    return 2\n",
}


@pytest.fixture(scope="module")
def timed() -> dict[str, Outcome]:
    with Executor(workers=len(TIMED)) as executor:
        return dict(zip(TIMED, executor.map(TIMED.values())))


def test_wall_clock_limit(timed: dict[str, Outcome]) -> None:
    outcome = timed["sleep_past_wall"]
    assert outcome.kind == "timeout" and 4.9 <= outcome.wall_s <= 6.0
    assert outcome.cpu_s < 1.0


def test_cpu_or_wall_limit_on_busy_loop(timed: dict[str, Outcome]) -> None:
    outcome = timed["cpu_loop_without_lines"]
    assert outcome.kind == "timeout" and outcome.wall_s <= 6.0


def test_short_sleep_is_fine(timed: dict[str, Outcome]) -> None:
    assert timed["short_sleep"].kind == "value" and timed["short_sleep"].value == 2


# --- Outcome model ------------------------------------------------------------------------------------

def test_outcome_is_frozen_and_typed() -> None:
    outcome = Outcome(kind="value", value=(40, 1))
    with pytest.raises(Exception):
        outcome.kind = "raised"  # type: ignore[misc]
    with pytest.raises(Exception):
        Outcome(kind="nonsense")  # type: ignore[arg-type]
    assert Outcome(kind="value", value=3).value == 3 and type(Outcome(kind="value", value=3).value) is int


def test_table8_mapping_covers_every_kind() -> None:
    assert TABLE8 == {
        "value": None, "no_program": "no program", "rejected": "rejected", "raised": "raised",
        "timeout": "raised", "memory": "raised", "line_limit": "raised", "crashed": "raised",
        "bad_kind": "bad kind",
    }


def test_json_form_of_values() -> None:
    assert Outcome(kind="value", value=dt.date(2024, 1, 2)).to_json_dict()["value"] == "2024-01-02"
    assert Outcome(kind="value", value=(38, 2)).to_json_dict()["value"] == [38, 2]


# --- Executor and processes ------------------------------------------------------------------------

def test_map_keeps_input_order() -> None:
    sources = [f"def solve():\n    return {i}\n" for i in range(25)] + ["import os"]
    with Executor(workers=3) as executor:
        outcomes = executor.map(sources)
        assert len(executor.server_pids()) == 3
    assert [o.value for o in outcomes[:-1]] == list(range(25))
    assert outcomes[-1].kind == "rejected"


def test_executor_leaves_no_processes() -> None:
    before = descendant_pids()
    with Executor(workers=2) as executor:
        executor.map(["def solve():\n    return 1\n"] * 4)
        servers = set(executor.server_pids())
        assert servers <= descendant_pids()
    assert not (descendant_pids() - before)
    assert not (servers & descendant_pids())


def test_each_program_gets_a_fresh_process() -> None:
    # state written by one program is invisible to the next (a module view is read-only,
    # and a program's own globals are new each time)
    first = run_program("import math\ndef solve():\n    return math.floor(1.5)\ncounter = 1\n")
    second = run_program("def solve():\n    return counter\n")
    assert first.value == 1
    assert second.kind == "raised" and "NameError" in second.detail


def test_run_program_survives_a_killed_server() -> None:
    assert run_program("def solve():\n    return 1\n").value == 1
    (pid,) = server_pids()
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.05)
    outcome = run_program("def solve():\n    return 2\n")
    assert outcome.kind in {"value", "crashed"}
    assert run_program("def solve():\n    return 3\n").value == 3
    assert server_pids() and server_pids()[0] != pid


def test_shutdown_reaps_the_default_server() -> None:
    run_program("def solve():\n    return 1\n")
    (pid,) = server_pids()
    shutdown()
    assert server_pids() == []
    assert pid not in descendant_pids()
    assert run_program("def solve():\n    return 5\n").value == 5  # restarts lazily


# --- CLI ----------------------------------------------------------------------------------------------

def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="formula")
    sub = parser.add_subparsers(dest="command")
    exec_cli.register(sub)
    args = parser.parse_args(argv)
    return args.handler(args)


def test_cli_json_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.py"
    path.write_text("import datetime\ndef solve():\n    return datetime.date(2021, 12, 20)\n")
    assert _cli(["exec", str(path), "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["kind"] == "value" and payload["value"] == "2021-12-20" and payload["detail"] == ""


def test_cli_weeks_days_and_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.py"
    path.write_text("def solve():\n    return divmod(275, 7)\n")
    assert _cli(["exec", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == [39, 2]
    assert _cli(["exec", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("value: [39, 2]") and len(out.strip().splitlines()) <= 2


def test_cli_failure_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.py"
    path.write_text("import os\ndef solve():\n    return 1\n")
    assert _cli(["exec", str(path)]) == 3  # the program failed: not a tool error (1)
    out = capsys.readouterr().out
    assert out.startswith("rejected") and "import of 'os'" in out
    assert _cli(["exec", str(path), "--format", "json"]) == 3
    assert json.loads(capsys.readouterr().out)["kind"] == "rejected"


def test_cli_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["exec", str(tmp_path / "absent.py")]) == 1
    captured = capsys.readouterr()
    assert "no such file" in captured.err and "Traceback" not in captured.err + captured.out


def test_cli_module_entry_point(tmp_path: Path) -> None:
    path = tmp_path / "p.py"
    path.write_text("def solve():\n    return 2.5\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "solver.exec_cli", str(path), "--format", "json"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and json.loads(done.stdout)["value"] == 2.5
    missing = subprocess.run([sys.executable, "-m", "solver.exec_cli", str(tmp_path / "nope.py")],
                             capture_output=True, text=True, env=env, timeout=60)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr


def test_map_of_nothing_is_empty() -> None:
    with Executor(workers=2) as executor:
        assert executor.map([]) == []


# --- the paper's way (fresh interpreter per program), used as the benchmark baseline --------------

def test_fresh_interpreter_mode_agrees_with_the_fork_server() -> None:
    from solver.executor.isolated import run_fresh

    sources = [
        "from datetime import datetime, timedelta\ndef solve():\n    d = datetime.strptime('01/02/2020', '%m/%d/%Y')\n    return (d + timedelta(days=280)).date()\n",  # noqa: E501
        "def solve():\n    return ().\uff3f\uff3fclass\uff3f\uff3f\n",
        "def solve():\n    while True: pass\n",
        "def solve():\n    return len('x' * 10 ** 10)\n",
        "",
    ]
    for source in sources:
        fresh, forked = run_fresh(source), run_program(source)
        assert (fresh.kind, fresh.value) == (forked.kind, forked.value), source
