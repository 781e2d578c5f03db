"""Hostile programs: every one must end cleanly, inside the limits, without side effects.

Each case's source may mention CANARY (replaced by a path under tmp_path) and
tries, if its escape worked, to create that file or to return the string
"ESCAPED".  For every case the test asserts: the canary file was never
created, the outcome kind is one of the expected clean kinds, no value leaked,
the wall time stayed within the limit, and no process was left behind.  Slow
cases (those that must run into the 5 s wall/CPU limit) run once, concurrently,
in a module-scoped batch, and are then checked one per test.
"""
from __future__ import annotations

import math
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from textwrap import dedent

import pytest

from solver.executor import Executor, Outcome, run_program, server_pids
from solver.executor.procs import descendant_pids

CLEAN = {"rejected", "timeout", "memory", "line_limit", "raised", "bad_kind"}
REJECTED = {"rejected"}
# Nesting that 3.11's compiler refuses and 3.12+ compiles: then it runs cleanly.
DEEP = REJECTED if sys.version_info < (3, 12) else {"rejected", "bad_kind"}
WALL_MAX = 6.5

# Touches the canary if a real `os` module was reached through an escape.
OS_TOUCH = "os.system('touch CANARY')"


@dataclass(frozen=True)
class Case:
    id: str
    source: str
    kinds: frozenset[str]
    slow: bool = False


def case(cid: str, source: str, kinds: set[str] = REJECTED, slow: bool = False) -> Case:
    return Case(cid, dedent(source).strip("\n") + "\n", frozenset(kinds), slow)


CASES: list[Case] = [
    # --- the classic object-graph escapes ------------------------------------------------------
    case("subclasses_via_base", """
        def solve():
            for c in ().__class__.__base__.__subclasses__():
                if c.__name__ == '_wrap_close':
                    c.__init__.__globals__['system']('touch CANARY')
            return 'ESCAPED'
        """),
    case("subclasses_via_mro", """
        def solve():
            return ''.__class__.__mro__[1].__subclasses__()
        """),
    case("subclasses_via_bases", """
        def solve():
            return [].__class__.__bases__[0].__subclasses__()
        """),
    case("subclasses_of_int_type", """
        def solve():
            return int.__subclasses__()
        """),
    case("function_globals_builtins", """
        def f():
            return 1
        def solve():
            b = f.__globals__['__builtins__']
            b['open']('CANARY', 'w').write('x')
            return 'ESCAPED'
        """),
    case("solve_globals", """
        def solve():
            return solve.__globals__
        """),
    case("builtins_name_subscript", """
        def solve():
            __builtins__['open']('CANARY', 'w')
            return 'ESCAPED'
        """),
    case("builtins_name_attribute", """
        def solve():
            return __builtins__.open('CANARY', 'w')
        """),
    case("print_globals", """
        def solve():
            return print.__globals__
        """),
    case("builtin_self", """
        def solve():
            return abs.__self__.open('CANARY', 'w')
        """),
    case("code_object", """
        def solve():
            return solve.__code__.co_consts
        """),
    case("code_replace", """
        def solve():
            f = lambda: 0
            return f.__code__.replace(co_code=b'')
        """),
    case("traceback_frame", """
        def solve():
            try:
                1 / 0
            except ZeroDivisionError as e:
                g = e.__traceback__.tb_frame.f_back.f_globals
                g['__builtins__']['open']('CANARY', 'w')
            return 'ESCAPED'
        """),
    case("traceback_frame_without_dunder", """
        def solve():
            try:
                1 / 0
            except ZeroDivisionError as e:
                tb = e.args
                return tb.tb_frame.f_back
        """),
    case("with_traceback", """
        def solve():
            e = ValueError('x')
            return e.with_traceback(None)
        """),
    case("generator_frame", """
        def gen():
            yield 1
        def solve():
            return gen().gi_frame.f_back.f_globals
        """),
    case("generator_expression_frame", """
        def solve():
            g = (x for x in [1])
            return g.gi_frame.f_back
        """),
    case("frame_back_attribute", """
        def solve():
            x = [1]
            return x.f_back
        """),
    case("reduce_ex", """
        def solve():
            return (1).__reduce_ex__(2)
        """),
    case("reduce", """
        def solve():
            return [].__reduce__()
        """),
    case("class_getitem_dict", """
        def solve():
            return dict.__dict__
        """),
    case("mro_method", """
        def solve():
            return str.mro()
        """),
    case("init_subclass_hook", """
        def solve():
            return int.__init_subclass__
        """),
    # --- format strings -------------------------------------------------------------------------
    case("format_attribute_walk", """
        def solve():
            return '{0.__class__.__base__}'.format(1)
        """),
    case("format_map_walk", """
        def solve():
            return '{x.__class__}'.format_map({'x': 1})
        """),
    case("unbound_str_format", """
        def solve():
            f = str.format
            return f('{0.__class__}', 1)
        """),
    case("fstring_walk", """
        def solve():
            return f'{().__class__}'
        """),
    case("percent_format", """
        def solve():
            return '%s' % (solve,)
        """, {"rejected", "bad_kind"}),  # `clinical` formats it: a str, never a value
    case("strftime_format", """
        import datetime
        def solve():
            return datetime.date(2020, 1, 1).strftime('%Y')
        """, {"rejected", "bad_kind"}),
    # --- unicode look-alikes (NFKC-normalised by the parser) ---------------------------------
    case("fullwidth_low_line_dunder", """
        def solve():
            return ().\uff3f\uff3fclass\uff3f\uff3f
        """),
    case("fullwidth_builtins_name", """
        def solve():
            return \uff3f\uff3fbuiltins\uff3f\uff3f
        """),
    case("modifier_letter_dunder", """
        def solve():
            return ().__\u1d9class__
        """),
    case("fullwidth_open", """
        def solve():
            return \uff4f\uff50\uff45\uff4e('CANARY', 'w')
        """),
    case("mathematical_bold_eval", """
        def solve():
            return \U0001d41e\U0001d42f\U0001d41a\U0001d425('1')
        """),
    case("fullwidth_getattr", """
        def solve():
            return \uff47\uff45\uff54\uff41\uff54\uff54\uff52((), 'x')
        """),
    # --- walks through the allowed modules ------------------------------------------------------
    case("math_loader", """
        import math
        def solve():
            return math.__loader__
        """),
    case("math_dict", """
        import math
        def solve():
            return math.__dict__
        """),
    case("datetime_sys", """
        import datetime
        def solve():
            return datetime.sys
        """),
    case("time_spec", """
        import time
        def solve():
            return time.__spec__
        """),
    case("calendar_sys_modules", """
        import calendar
        def solve():
            calendar.sys.modules['os'].system('touch CANARY')
            return 'ESCAPED'
        """),
    case("calendar_datetime_module", """
        import calendar
        def solve():
            return calendar.datetime
        """),
    case("calendar_datetime_via_alias_rebind", """
        import calendar
        def solve():
            c = calendar
            return c.datetime.sys
        """),
    case("calendar_datetime_via_rebind_runtime", """
        import calendar
        def solve():
            c = [calendar][0]
            return c.datetime
        """, {"raised"}),
    case("datetime_capi", """
        import datetime
        def solve():
            return datetime.datetime_CAPI
        """),
    case("from_calendar_import_sys", """
        from calendar import sys
        def solve():
            return sys.modules
        """),
    case("from_math_import_star", """
        from math import *
        def solve():
            return 1
        """),
    case("module_view_dunder_class", """
        import math
        def solve():
            return math.__class__.__init__.__globals__
        """),
    case("calendar_main", """
        import calendar
        def solve():
            return calendar.main(['x'])
        """),
    case("time_localtime", """
        import time
        def solve():
            return time.localtime()
        """),
    # --- imports ----------------------------------------------------------------------------------
    case("import_os", f"""
        import os
        def solve():
            {OS_TOUCH}
            return 'ESCAPED'
        """),
    case("import_subprocess", """
        import subprocess
        def solve():
            subprocess.run(['touch', 'CANARY'])
        """),
    case("import_builtins", """
        import builtins
        def solve():
            builtins.open('CANARY', 'w')
        """),
    case("import_sys", """
        import sys
        def solve():
            return sys.modules
        """),
    case("import_socket", """
        import socket
        def solve():
            return socket.socket()
        """),
    case("import_ctypes", """
        import ctypes
        def solve():
            return ctypes.CDLL(None)
        """),
    case("import_importlib", """
        import importlib
        def solve():
            return importlib.import_module('os')
        """),
    case("import_in_function_alias", """
        def solve():
            import os as math
            return math.getcwd()
        """),
    case("relative_import", """
        from . import sandbox
        def solve():
            return 1
        """),
    case("dunder_import_call", """
        def solve():
            return __import__('os').system('touch CANARY')
        """),
    case("import_via_list_comprehension_name", """
        def solve():
            return [__import__ for x in [1]]
        """),
    # --- reflection and dynamic evaluation -----------------------------------------------------
    case("eval_call", """
        def solve():
            return eval("__import__('os').system('touch CANARY')")
        """),
    case("exec_call", """
        def solve():
            exec("open('CANARY','w')")
        """),
    case("compile_call", """
        def solve():
            return compile('1', 'x', 'eval')
        """),
    case("open_call", """
        def solve():
            open('CANARY', 'w').write('x')
            return 'ESCAPED'
        """),
    case("getattr_built_name", """
        def solve():
            return getattr((), '__cla' + 'ss__')
        """),
    case("type_three_arguments", """
        def solve():
            return type('X', (), {})
        """),
    case("vars_globals_locals", """
        def solve():
            return vars() or globals() or locals()
        """),
    case("object_subclasses", """
        def solve():
            return object.__subclasses__()
        """),
    case("memoryview_bytes", """
        def solve():
            return memoryview(b'abc')
        """),
    case("breakpoint_call", """
        def solve():
            breakpoint()
        """),
    case("input_call", """
        def solve():
            return input()
        """),
    # --- metaclasses, decorators and other statement forms ---------------------------------------
    case("metaclass", """
        class Meta(type):
            pass
        class X(metaclass=Meta):
            pass
        def solve():
            return 1
        """),
    case("class_with_dunder_str", """
        class Evil(int):
            def __str__(self):
                return 'x'
        def solve():
            return Evil(3)
        """),
    case("decorator_lambda", """
        @(lambda f: f)
        def solve():
            return 1
        """),
    case("decorator_name", """
        def deco(f):
            return f
        @deco
        def solve():
            return 1
        """),
    case("global_statement", """
        x = 1
        def solve():
            global x
            x = 2
            return x
        """),
    case("with_open", """
        def solve():
            with open('CANARY', 'w') as f:
                return 1
        """),
    case("async_function", """
        async def solve():
            return 1
        """),
    case("match_class_dunder_kwd", """
        def solve():
            try:
                1 / 0
            except ZeroDivisionError as e:
                match e:
                    case ZeroDivisionError(__traceback__=tb):
                        return tb
        """),
    case("match_class_frame_kwd", """
        def solve():
            match 1:
                case int(gi_frame=f):
                    return f
        """),
    case("keyword_dunder", """
        def solve():
            return dict(__class__=1)
        """),
    case("attribute_store", """
        import math
        def solve():
            math.sqrt = print
            return 1
        """),
    case("attribute_delete", """
        import math
        def solve():
            del math.sqrt
            return 1
        """),
    case("double_star_dunder_keys_is_just_a_dict", """
        def solve():
            return dict(**{'__class__': 1})
        """, {"bad_kind"}),
    case("lambda_default_dunder", """
        def solve():
            f = lambda x=().__class__: x
            return f()
        """),
    # --- memory bombs ------------------------------------------------------------------------------
    case("string_times_1e10", """
        def solve():
            return len('x' * 10 ** 10)
        """, {"memory"}),
    case("list_times_1e9", """
        def solve():
            return len([0] * 10 ** 9)
        """, {"memory"}),
    case("growing_list_of_megabytes", """
        def solve():
            keep = []
            while True:
                keep.append('y' * 10 ** 6)
        """, {"memory"}),
    case("list_doubling", """
        def solve():
            x = [0]
            for i in range(64):
                x = x + x
            return len(x)
        """, {"memory"}),
    case("nested_comprehension_matrix", """
        def solve():
            m = [[0] * 100000 for i in range(100000)]
            return len(m)
        """, {"memory"}),
    case("dict_comprehension_huge", """
        def solve():
            return len({i: i for i in range(10 ** 8)})
        """, {"line_limit", "memory"}),
    case("power_tower", """
        def solve():
            return 10 ** 10 ** 8
        """, {"timeout", "memory"}, slow=True),
    # --- CPU loops ----------------------------------------------------------------------------
    case("while_true_two_lines", """
        def solve():
            while True:
                pass
        """, {"line_limit"}),
    case("while_true_one_line", """
        def solve():
            while True: pass
        """, {"line_limit"}),
    case("caught_exception_loop", """
        def solve():
            while True:
                try:
                    raise ValueError('again')
                except Exception:
                    pass
        """, {"line_limit"}),
    case("sum_range_no_line_events", """
        def solve():
            return sum(range(10 ** 10))
        """, {"timeout"}, slow=True),
    case("factorial_huge", """
        import math
        def solve():
            return math.factorial(10 ** 7) % 7
        """, {"timeout", "memory"}, slow=True),
    case("sleep_100", """
        import time
        def solve():
            time.sleep(100)
            return 1
        """, {"timeout"}, slow=True),
    case("sorted_key_loop", """
        def solve():
            return sorted(range(10 ** 6), key=lambda v: -v)[0]
        """, {"line_limit"}),
    # --- recursion bombs ------------------------------------------------------------------------
    case("plain_recursion", """
        def f(n):
            return f(n + 1)
        def solve():
            return f(0)
        """, {"raised"}),
    case("lambda_recursion", """
        def solve():
            f = lambda: f()
            return f()
        """, {"raised"}),
    case("mutual_recursion", """
        def a(n):
            return b(n + 1)
        def b(n):
            return a(n + 1)
        def solve():
            return a(0)
        """, {"raised"}),
    case("deep_nested_list_repr", """
        def solve():
            x = []
            for i in range(30000):
                x = [x]
            return len(str(x))
        """, {"raised", "memory"}),
    case("recursion_then_loop_forever", """
        def dive(n):
            try:
                return dive(n + 1)
            except Exception:
                return dive(n + 1)
        def solve():
            return dive(0)
        """, {"raised", "line_limit", "timeout"}, slow=True),  # the tracer can be lost at max depth
    # --- output floods ---------------------------------------------------------------------------
    case("print_flood", """
        def solve():
            for i in range(1000):
                print('x' * 10 ** 6)
            return 'ESCAPED'
        """, {"bad_kind"}),
    # --- huge integer <-> string conversion -------------------------------------------------------
    case("str_of_huge_int", """
        def solve():
            return len(str(10 ** 100000))
        """, {"raised"}),
    case("int_of_huge_string", """
        def solve():
            return int('9' * 5000)
        """, {"raised"}),
    # --- parser and compiler bombs -----------------------------------------------------------------
    case("parens_200000", "def solve():\n    return " + "(" * 200000 + "1" + ")" * 200000, REJECTED),
    case("unary_minus_100000", "def solve():\n    return " + "-" * 100000 + "1", REJECTED),
    case("parens_within_limit", "def solve():\n    return " + "(" * 3900 + "1" + ")" * 3900, REJECTED),
    case("unary_minus_within_limit", "def solve():\n    return " + "-" * 7900 + "1", REJECTED),
    case("plus_chain_within_limit", "def solve():\n    return str(" + "+".join(["1"] * 3900) + ")", DEEP),
    case("nested_lambdas", "def solve():\n    return " + "lambda:" * 1100 + "1", DEEP),
    case("nested_lists", "def solve():\n    return " + "[" * 3000 + "]" * 3000, REJECTED),
    case("attribute_chain", "def solve():\n    return x" + ".real" * 3000, REJECTED),
    case("null_bytes", "def solve():\n    return 1\x00\x00\n", REJECTED),
    case("nested_ifs", "def solve():\n" + "".join("    " * (i + 1) + "if True:\n" for i in range(99)) + "    " * 100 + "return 1\n", REJECTED),  # noqa: E501
    # --- return-value abuse ----------------------------------------------------------------------
    case("return_bool", "def solve():\n    return True\n", {"bad_kind"}),
    case("return_nan", "def solve():\n    return float('nan')\n", {"bad_kind"}),
    case("return_inf", "import math\ndef solve():\n    return math.inf\n", {"bad_kind"}),
    case("return_str", "def solve():\n    return 'ESCAPED'\n", {"bad_kind"}),
    case("return_list", "def solve():\n    return [1, 2]\n", {"bad_kind"}),
    case("return_three_tuple", "def solve():\n    return (1, 2, 3)\n", {"bad_kind"}),
    case("return_float_tuple", "def solve():\n    return (1.0, 2.0)\n", {"bad_kind"}),
    case("return_huge_int", "def solve():\n    return 10 ** 5000\n", {"bad_kind"}),
    case("return_int_just_over_int64", "def solve():\n    return 2 ** 63\n", {"bad_kind"}),
    case("return_datetime_with_time", "import datetime\ndef solve():\n    return datetime.datetime(2020, 1, 1, 8)\n", {"bad_kind"}),
    case("return_lambda", "def solve():\n    return lambda: 1\n", {"bad_kind"}),
    case("return_tuple_subclass", "import datetime\ndef solve():\n    return datetime.date(2020, 1, 1).isocalendar()\n", {"bad_kind"}),
    case("return_module_view", "import math\ndef solve():\n    return math\n", {"bad_kind"}),
    case("return_exception", "def solve():\n    return ValueError('ESCAPED')\n", {"bad_kind"}),
    case("return_solve_itself", "def solve():\n    return solve\n", {"bad_kind"}),
    case("return_range", "def solve():\n    return range(3)\n", {"bad_kind"}),
]

FAST = [c for c in CASES if not c.slow]
SLOW = [c for c in CASES if c.slow]


def _source(c: Case, canary: Path) -> str:
    return c.source.replace("CANARY", str(canary))


def _check(outcome: Outcome, c: Case, canary: Path) -> None:
    assert outcome.kind in c.kinds, outcome
    assert outcome.kind in CLEAN
    assert not canary.exists(), "escape: canary file was created"
    assert outcome.value is None and outcome.value != "ESCAPED"
    assert "ESCAPED" not in outcome.detail or outcome.kind == "rejected"
    assert outcome.wall_s <= WALL_MAX


def _strays(before: set[int], servers: set[int]) -> set[int]:
    """Processes below this one that were not there before and are not fork servers."""
    return descendant_pids() - before - servers


def test_the_suite_has_at_least_60_hostile_programs() -> None:
    assert len(CASES) >= 60
    assert len({c.id for c in CASES}) == len(CASES)


POLICIES = ["paper", "clinical"]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("c", FAST, ids=[c.id for c in FAST])
def test_hostile_program(c: Case, policy: str, tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    before = descendant_pids()
    outcome = run_program(_source(c, canary), policy=policy)
    _check(outcome, c, canary)
    assert outcome.policy == policy
    assert _strays(before, set(server_pids())) == set()
    for server in server_pids():  # the fork server reaped its child before answering
        assert descendant_pids(server) == set()


@pytest.fixture(scope="module")
def slow_batch(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], tuple[Outcome, Path, set[int]]]:
    """Run the slow cases concurrently once per policy (both policies at the same
    time, on separate executors); record strays after the executors shut down."""
    import threading

    base = tmp_path_factory.mktemp("slow")
    canaries = {(c.id, p): base / f"{c.id}.{p}.canary" for c in SLOW for p in POLICIES}
    before = descendant_pids()
    results: dict[str, list[Outcome]] = {}

    def run(policy: str) -> None:
        with Executor(workers=len(SLOW), policy=policy) as executor:
            results[policy] = executor.map([_source(c, canaries[(c.id, policy)]) for c in SLOW])

    threads = [threading.Thread(target=run, args=(p,)) for p in POLICIES]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    strays = descendant_pids() - before
    return {
        (c.id, p): (o, canaries[(c.id, p)], strays)
        for p in POLICIES
        for c, o in zip(SLOW, results[p])
    }


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("c", SLOW, ids=[c.id for c in SLOW])
def test_hostile_program_hitting_time_limits(
    c: Case, policy: str, slow_batch: dict[tuple[str, str], tuple[Outcome, Path, set[int]]]
) -> None:
    outcome, canary, strays = slow_batch[(c.id, policy)]
    _check(outcome, c, canary)
    assert outcome.policy == policy
    assert strays == set()


def test_print_flood_does_not_reach_the_parent(capfd: pytest.CaptureFixture[str]) -> None:
    outcome = run_program("def solve():\n    for i in range(200):\n        print('FLOOD' * 10000)\n    return 1\n")
    assert outcome.value == 1
    captured = capfd.readouterr()
    assert "FLOOD" not in captured.out and "FLOOD" not in captured.err


def test_huge_reply_is_rejected_without_reaching_the_server() -> None:
    outcome = run_program("#" * 50_000_000)
    assert outcome.kind == "rejected" and "over 65536" in outcome.detail


def test_parent_keeps_working_after_every_hostile_program() -> None:
    assert run_program("import math\ndef solve():\n    return math.sqrt(16.0)\n").value == 4.0


def test_a_child_killed_by_a_signal_is_crashed_not_a_value() -> None:
    # SIGKILL the running child from outside: the server must report it, not hang.
    import threading
    import time

    with Executor(workers=1) as executor:
        (server,) = executor.server_pids()

        def kill_child() -> None:
            for _ in range(200):
                kids = descendant_pids(server)
                if kids:
                    time.sleep(0.5)  # let it pass the checker and start sleeping
                    for pid in kids:
                        os.kill(pid, signal.SIGKILL)
                    return
                time.sleep(0.01)

        killer = threading.Thread(target=kill_child)
        killer.start()
        outcome = executor.run("import time\ndef solve():\n    time.sleep(3)\n    return 1\n")
        killer.join()
    assert outcome.kind == "crashed" and "SIGKILL" in outcome.detail
    assert math.isfinite(outcome.wall_s) and outcome.wall_s < 3
