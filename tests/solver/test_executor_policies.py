"""The two policies, honest idioms, reply extraction, integrity findings and Python-version behaviour.

`clinical` (the default) must accept the idioms ordinary programs use and
return the exact value; `paper` must reject exactly what Table 17 of the paper
lists.  Every expected value is computed here with plain Python, outside the
executor, from the same inputs.
"""
from __future__ import annotations

import calendar
import datetime as dt
import time
from textwrap import dedent

import pytest

from solver.executor import Executor, run_program
from solver.executor.checker import Rejected, check
from solver.executor.extract import extract_program
from solver.executor.policy import CLINICAL, HASH_SEED, PAPER, POLICIES, get_policy


def prog(body: str) -> str:
    return dedent(body).strip("\n") + "\n"


WEIGHTS = [1.5, 2.0, 0.25]
XS = [3, 9, 4]

# (id, program, expected value, why paper refuses it (the rejection reason, or
# NameError for a builtin it does not have) or None when paper accepts it)
IDIOMS: list[tuple[str, str, object, str | None]] = [
    ("underscore_loop", """
        def solve():
            total = 0
            for _ in range(7):
                total += 3
            return total
        """, 21, "'_'"),
    ("main_guard", """
        def solve():
            return 42
        if __name__ == "__main__":
            print(solve())
        """, 42, "'__name__'"),
    ("generator_sum", f"""
        def solve():
            ws = {WEIGHTS!r}
            return sum(w * w for w in ws)
        """, sum(w * w for w in WEIGHTS), "generator expressions"),
    ("generator_any", f"""
        def solve():
            xs = {XS!r}
            return 1 if any(x > 8 for x in xs) else 0
        """, 1, "generator expressions"),
    ("fstring_print", """
        def solve():
            bmi = 70 / 1.75 ** 2
            print(f"BMI: {bmi:.1f}")
            return round(bmi, 1)
        """, round(70 / 1.75 ** 2, 1), "f-strings"),
    ("percent_print", """
        def solve():
            x = 2 / 3
            print("value %.2f" % x)
            return x
        """, 2 / 3, "string formatting (%)"),
    ("strftime_day_of_year", """
        import datetime
        def solve():
            d = datetime.date(2024, 3, 1)
            return int(d.strftime("%j"))
        """, dt.date(2024, 3, 1).timetuple().tm_yday, "string formatting"),
    ("fstring_value", """
        def solve():
            x = 12.3456
            return float(f"{x:.2f}")
        """, 12.35, "f-strings"),
    ("calendar_timegm", """
        import calendar
        def solve():
            return calendar.timegm((2024, 1, 2, 0, 0, 0, 0, 0, 0))
        """, int((dt.datetime(2024, 1, 2) - dt.datetime(1970, 1, 1)).total_seconds()), None),
    ("calendar_monthcalendar", """
        import calendar
        def solve():
            weeks = calendar.monthcalendar(2024, 2)
            return len(weeks) * 100 + weeks[0].count(0)
        """, 5 * 100 + dt.date(2024, 2, 1).weekday(), None),
    ("time_gmtime_fields", """
        import time
        def solve():
            t = time.gmtime(86400 * 400)
            return t.tm_year * 1000 + t.tm_yday
        """, (dt.date(1970, 1, 1) + dt.timedelta(days=400)).year * 1000
        + (dt.date(1970, 1, 1) + dt.timedelta(days=400)).timetuple().tm_yday, None),
    ("timetuple_yday", """
        import datetime
        def solve():
            d = datetime.date(2023, 12, 31)
            return d.timetuple().tm_yday
        """, 365, None),
    ("iter_next_repr_hasattr", """
        def solve():
            it = iter([5, 6, 7])
            first = next(it)
            second = next(it)
            label = repr(first)
            return first + second + len(label) + (1 if hasattr(label, "upper") else 0)
        """, 5 + 6 + 1 + 1, "NameError"),  # not in the paper's builtins: raised, not rejected
    ("calendar_weekday_is_int", """
        import calendar
        def solve():
            return calendar.weekday(2024, 7, 4)
        """, dt.date(2024, 7, 4).weekday(), None),
    ("calendar_monthrange_first_is_int", """
        import calendar
        def solve():
            first, days = calendar.monthrange(2023, 10)
            return (first, days)
        """, (dt.date(2023, 10, 1).weekday(), 31), None),
    ("strptime", """
        from datetime import datetime
        def solve():
            return datetime.strptime("02/29/2024", "%m/%d/%Y").date()
        """, dt.date(2024, 2, 29), None),
    ("syntax_warning_escape", r"""
        def solve():
            pattern = "\d+"
            return len(pattern)
        """, 3, None),
    ("big_int_division", """
        def solve():
            big = 2 ** 20000
            divisor = 2 ** 9100 + 1
            return (big // divisor).bit_length()
        """, (2 ** 20000 // (2 ** 9100 + 1)).bit_length(), None),
]

EXCEPTIONS = ["OverflowError", "ArithmeticError", "AttributeError", "RuntimeError", "RecursionError", "MemoryError"]


def _assert_value(outcome, expected) -> None:  # noqa: ANN001
    assert outcome.kind == "value", outcome
    assert type(outcome.value) is type(expected), (outcome.value, expected)
    assert outcome.value == expected


@pytest.mark.parametrize("source, expected", [(prog(i[1]), i[2]) for i in IDIOMS], ids=[i[0] for i in IDIOMS])
def test_clinical_accepts_the_idiom_with_the_exact_value(source: str, expected: object) -> None:
    _assert_value(run_program(source), expected)  # default policy
    _assert_value(run_program(source, policy="clinical"), expected)


PAPER_REJECTED = [i for i in IDIOMS if i[3] is not None]
PAPER_ACCEPTED = [i for i in IDIOMS if i[3] is None]


@pytest.mark.parametrize("source, reason", [(prog(i[1]), i[3]) for i in PAPER_REJECTED], ids=[i[0] for i in PAPER_REJECTED])
def test_paper_refuses_the_idiom(source: str, reason: str) -> None:
    outcome = run_program(source, policy="paper")
    kind = "raised" if reason == "NameError" else "rejected"
    assert outcome.kind == kind and reason in outcome.detail, outcome
    assert outcome.policy == "paper"


@pytest.mark.parametrize("source, expected", [(prog(i[1]), i[2]) for i in PAPER_ACCEPTED], ids=[i[0] for i in PAPER_ACCEPTED])
def test_paper_accepts_what_table17_does_not_list(source: str, expected: object) -> None:
    _assert_value(run_program(source, policy="paper"), expected)


@pytest.mark.parametrize("name", EXCEPTIONS)
def test_clinical_knows_more_exception_types(name: str) -> None:
    source = prog(f"""
        def solve():
            try:
                raise {name}("x")
            except {name}:
                return 1
        """)
    _assert_value(run_program(source), 1)
    paper = run_program(source, policy="paper")  # the paper's six: the name does not exist
    assert paper.kind == "raised" and paper.detail.startswith("NameError"), paper


def test_overflow_is_caught_as_overflow_error() -> None:
    source = prog("""
        import math
        def solve():
            try:
                return math.exp(1000)
            except OverflowError:
                return -1
        """)
    _assert_value(run_program(source), -1)


# --- Table 17 under `paper`: each listed construct, rejected at parse time -------------------

TABLE17 = [
    ("dynamic_evaluation", "def solve():\n    return eval('1')\n", "dynamic evaluation"),
    ("file_access", "def solve():\n    return open('x')\n", "file access"),
    ("attribute_access", "def solve():\n    return getattr(1, 'real')\n", "reflection"),
    ("global_access", "x = 1\ndef solve():\n    global x\n    return x\n", "global"),
    ("globals_builtin", "def solve():\n    return globals()\n", "reflection"),
    ("fstring", "def solve():\n    return len(f'{1}')\n", "f-strings"),
    ("percent_string", "def solve():\n    return len('%d' % 3)\n", "string formatting (%)"),
    ("str_format", "def solve():\n    return len('{}'.format(3))\n", "string formatting"),
    ("str_format_attribute", "def solve():\n    return len('{0.real}'.format(3))\n", "string formatting"),
    ("format_map", "def solve():\n    return len('{a}'.format_map({'a': 1}))\n", "string formatting"),
    ("strftime", "import datetime\ndef solve():\n    return len(datetime.date(2020, 1, 1).strftime('%Y'))\n", "string formatting"),
    ("format_builtin", "def solve():\n    return len(format(3, 'd'))\n", "string formatting"),
    ("async_def", "async def f():\n    return 1\ndef solve():\n    return 1\n", "async"),
    ("await", "async def f():\n    await f()\ndef solve():\n    return 1\n", "async"),
    ("yield", "def g():\n    yield 1\ndef solve():\n    return 1\n", "yield"),
    ("generator_expression", "def solve():\n    return sum(x for x in [1, 2])\n", "generator expressions"),
    ("underscore_name", "def solve():\n    _ = 1\n    return 2\n", "'_'"),
    ("underscore_attribute", "def solve():\n    return (1).__class__\n", "'__class__'"),
]
# What `clinical` still rejects of that list (everything but the idioms above; `.format` on a string literal
# with plain fields is one of them, a field that reaches an attribute is not).
CLINICAL_STILL_REJECTS = {
    "dynamic_evaluation", "file_access", "attribute_access", "global_access", "globals_builtin",
    "str_format_attribute", "format_map", "async_def", "await", "yield", "underscore_attribute",
}


@pytest.mark.parametrize("source, reason", [t[1:] for t in TABLE17], ids=[t[0] for t in TABLE17])
def test_paper_rejects_each_table17_construct(source: str, reason: str) -> None:
    with pytest.raises(Rejected) as info:
        check(source, PAPER)
    assert reason in info.value.reason


@pytest.mark.parametrize("cid, source", [t[:2] for t in TABLE17], ids=[t[0] for t in TABLE17])
def test_clinical_relaxes_only_formatting_generators_and_underscore_names(cid: str, source: str) -> None:
    if cid in CLINICAL_STILL_REJECTS:
        with pytest.raises(Rejected):
            check(source, CLINICAL)
    else:
        check(source, CLINICAL)


def test_dunder_names_other_than_reading_name_stay_rejected_under_clinical() -> None:
    for source in (
        "def solve():\n    return __builtins__\n",
        "def solve():\n    return __import__('os')\n",
        "def solve():\n    __name__ = 'x'\n    return 1\n",
        "def solve():\n    __x = 1\n    return __x\n",
        "def solve():\n    return (1).__class__\n",
        "def solve():\n    return [1]._x\n",
    ):
        with pytest.raises(Rejected):
            check(source, CLINICAL)


def test_policies_share_one_isolation() -> None:
    assert set(POLICIES) == {"paper", "clinical"}
    assert get_policy("clinical") is CLINICAL and get_policy("paper") is PAPER
    with pytest.raises(ValueError, match="unknown executor policy"):
        get_policy("lenient")
    with pytest.raises(ValueError):
        run_program("def solve():\n    return 1\n", policy="lenient")
    with pytest.raises(ValueError):
        Executor(workers=1, policy="lenient")
    # the same run-time guard under both: an import smuggled past nothing still stops the child
    for policy in ("paper", "clinical"):
        outcome = run_program("def solve():\n    return len(open)\n", policy=policy)
        assert outcome.kind == "rejected" and outcome.policy == policy


def test_executor_policy_is_in_every_outcome() -> None:
    with Executor(workers=2, policy="paper") as executor:
        outcomes = executor.map(["def solve():\n    return 1\n", "", "def solve():\n    _ = 1\n    return 1\n"])
        assert [o.policy for o in outcomes] == ["paper"] * 3
        assert [o.kind for o in outcomes] == ["value", "no_program", "rejected"]
        assert executor.run("def solve():\n    _ = 1\n    return 1\n", policy="clinical").value == 1
    assert run_program("def solve():\n    return 1\n").to_json_dict()["policy"] == "clinical"


# --- generators: frame and code attributes stay out of reach -----------------------------------

GENERATOR_ATTRIBUTES = ["gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "gi_suspended", "f_back", "f_globals", "tb_frame"]


@pytest.mark.parametrize("attr", GENERATOR_ATTRIBUTES)
def test_generator_attributes_are_rejected_statically(attr: str) -> None:
    source = f"def solve():\n    g = (x for x in [1])\n    return g.{attr}\n"
    outcome = run_program(source)
    assert outcome.kind == "rejected" and attr in outcome.detail, outcome


def test_generator_frame_is_unreachable_at_run_time() -> None:
    # hasattr is the one builtin that looks an attribute up by a string; it
    # answers only a bool, and a frame read trips the audit hook.
    source = prog("""
        def solve():
            g = (x for x in [1, 2])
            found = 0
            for name in ["gi_frame", "gi_code"]:
                if hasattr(g, name):
                    found += 1
            return found
        """)
    outcome = run_program(source)
    assert outcome.kind in {"rejected", "value"}, outcome
    assert outcome.kind == "rejected" or outcome.value in (0, 1, 2)  # a count, never an object
    assert run_program("def solve():\n    g = (x for x in [1])\n    return g\n").kind == "bad_kind"
    assert run_program("def solve():\n    return iter([1])\n").kind == "bad_kind"


# --- extraction ---------------------------------------------------------------------------------

SOLVE_7 = "def solve():\n    return 7\n"


def test_fence_indented_in_a_list_item() -> None:
    reply = "Steps:\n\n1. Write the program:\n\n   ```python\n   def solve():\n       return 7\n   ```\n"
    assert extract_program(reply) == SOLVE_7
    _assert_value(run_program(reply), 7)


def test_four_backtick_fence_holding_three_backticks() -> None:
    reply = "````python\ndef solve():\n    note = '```'\n    return len(note) + 4\n````\n"
    _assert_value(run_program(reply), 7)


def test_tilde_fence() -> None:
    _assert_value(run_program("~~~python\n" + SOLVE_7 + "~~~\n"), 7)


def test_untagged_output_block_before_the_code_is_not_run() -> None:
    reply = "Expected output:\n```\n666\n```\nCode:\n```python\n" + SOLVE_7 + "```\n"
    assert extract_program(reply) == SOLVE_7
    _assert_value(run_program(reply), 7)


def test_block_defining_solve_is_preferred() -> None:
    reply = "```python\nimport math\n```\n\n```python\n" + SOLVE_7 + "```\n"
    _assert_value(run_program(reply), 7)


def test_backticks_in_a_comment_of_an_unfenced_program() -> None:
    reply = "# the reply format was ```python ... ```\n" + SOLVE_7
    assert extract_program(reply) == reply
    _assert_value(run_program(reply), 7)


def test_byte_order_mark_is_stripped() -> None:
    _assert_value(run_program("\ufeff" + SOLVE_7), 7)
    _assert_value(run_program("\ufeff```python\n" + SOLVE_7 + "```\n"), 7)


def test_program_hidden_in_a_docstring_is_not_extracted() -> None:
    reply = prog('''
        def solve():
            """Reply format:
        ```python
        def solve():
            return 666
        ```
            """
            return 1 / 0
        ''')
    assert extract_program(reply) == reply  # the whole reply is the program
    outcome = run_program(reply)
    assert outcome.kind == "raised" and outcome.detail.startswith("ZeroDivisionError"), outcome


def test_other_languages_only_is_no_program() -> None:
    assert run_program("```json\n{\"a\": 1}\n```\n").kind == "no_program"


# --- determinism: hash seed and clocks ----------------------------------------------------------

def test_set_order_does_not_depend_on_the_worker() -> None:
    source = prog("""
        def solve():
            names = {"sodium", "chloride", "bicarbonate", "albumin", "glucose", "urea", "lactate"}
            order = list(names)
            total = 0
            for i in range(len(order)):
                total = total * 7 + len(order[i])
            return total
        """)
    with Executor(workers=4) as executor:
        outcomes = executor.map([source] * 16)
    assert {o.kind for o in outcomes} == {"value"}
    assert len({o.value for o in outcomes}) == 1
    assert {o.hash_seed for o in outcomes} == {HASH_SEED}
    assert run_program(source).value == outcomes[0].value


@pytest.mark.parametrize("clock", ["monotonic", "perf_counter", "process_time"])
def test_clocks_count_from_the_program_start(clock: str) -> None:
    # The host's clocks (its uptime, here) read far more than the 5 s a program may run.
    host = {"monotonic": time.monotonic, "perf_counter": time.perf_counter, "process_time": time.process_time}
    outcome = run_program(f"import time\ndef solve():\n    return time.{clock}()\n")
    assert outcome.kind == "value" and 0.0 <= outcome.value < 5.0, outcome
    if clock == "monotonic":
        assert host[clock]() > 5.0  # so the unwrapped clock would have failed the check above


def test_gmtime_needs_its_argument() -> None:
    for call in ("time.gmtime()", "time.gmtime(None)"):
        outcome = run_program(f"import time\ndef solve():\n    return {call}.tm_year\n")
        assert outcome.kind == "raised" and "TypeError" in outcome.detail, outcome


def test_calendar_weekday_is_a_plain_int_on_every_python() -> None:
    expected = dt.date(2025, 1, 1).weekday()
    assert calendar.weekday(2025, 1, 1) == expected
    _assert_value(run_program("import calendar\ndef solve():\n    return calendar.weekday(2025, 1, 1)\n"), expected)


# --- formula exec: policy, exit codes, what reaches the terminal ---------------------------------

def _cli(argv: list[str]) -> int:
    import argparse

    from solver import exec_cli

    parser = argparse.ArgumentParser(prog="formula")
    exec_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.handler(args)


def test_cli_policy_option_and_exit_codes(tmp_path, capsys) -> None:  # noqa: ANN001
    path = tmp_path / "p.py"
    path.write_text("def solve():\n    return sum(x for x in [1, 2, 3])\n")
    assert _cli(["exec", str(path)]) == 0
    assert "policy clinical" in capsys.readouterr().out
    assert _cli(["exec", str(path), "--policy", "paper"]) == 3
    out = capsys.readouterr().out
    assert out.startswith("rejected") and "generator expressions" in out
    assert _cli(["exec", str(tmp_path / "missing.py")]) == 1
    (tmp_path / "bad.py").write_bytes(b"\xff\xfe def solve")
    assert _cli(["exec", str(tmp_path / "bad.py")]) == 1
    err = capsys.readouterr().err
    assert err.count("error:") == 2 and "Traceback" not in err
    with pytest.raises(SystemExit) as usage:
        _cli(["exec", str(path), "--policy", "lenient"])
    assert usage.value.code == 2


def test_cli_escapes_control_characters_in_a_message(tmp_path, capsys) -> None:  # noqa: ANN001
    path = tmp_path / "p.py"
    path.write_text("def solve():\n    raise ValueError('\\r\\x1b[2K\\x1b[1Avalue: 666\\u202e')\n")
    assert _cli(["exec", str(path)]) == 3
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out
    assert "\\x1b[2K" in out and "\\u202e" in out
    assert not any(line.startswith("value:") for line in out.splitlines())


def test_cli_survives_a_lone_surrogate_in_a_message(tmp_path, capsys) -> None:  # noqa: ANN001
    path = tmp_path / "p.py"
    path.write_text("def solve():\n    raise ValueError(chr(0xDC80) + 'x')\n")
    assert _cli(["exec", str(path)]) == 3
    assert "\\udc80x" in capsys.readouterr().out
    assert _cli(["exec", str(path), "--format", "json"]) == 3
    import json

    payload = json.loads(capsys.readouterr().out)
    assert payload["detail"] == "ValueError: \udc80x" and payload["policy"] == "clinical" and payload["hash_seed"] == HASH_SEED
