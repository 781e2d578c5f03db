"""A registry template's work is bounded: whatever it nests, multiplies, repeats, recurses or prints, a render
does a bounded number of steps, and a template that asks for more fails with `R-TEXT` (never a traceback, a
hang or a full memory), in every command that renders. Timings are backstops of seconds, not measurements:
what is asserted is the refusal (the work budget counts steps, so it does not depend on the machine)."""
from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry import texts
from registry.loader import get_registry
from registry.texts import TextError, render, template_problems
from registry.yamlio import block
from solver.tools.service import explain
from tests.hostile.helpers import edit_yaml, hostile_copy

BACKSTOP_S = 3.0  # far above the milliseconds these take; only a hang or a runaway loop reaches it

# Each of these passes the static check and, before the work budget, ran for minutes or filled memory.
WORK_BOMBS = {
    "nested repetition": "{% set a = [1]*100000 %}{% set b = [a]*100000 %}{{ b }}",
    "nested literals": "{% set a = [1]*1000 %}" + "".join(
        f"{{% set {n} = [{p},{p},{p},{p},{p},{p},{p},{p},{p},{p}] %}}" for p, n in zip("abc", "bcd")) + "{{ d|length }}",
    "doubling list": "{% set x = [1] %}" + "{% set x = [x, x] %}" * 40 + "{{ x }}",
    "repeated squaring": "{% set x = 10**4000 %}" + "{% set x = x*x %}" * 30 + "{{ x > 1 }}",
    "huge power": "{{ 10**25000 }}",
    "round precision": "{{ 1|round(-1000000000) }}",
    "round precision of a float": "{{ 1.5|round(1000000000) }}",
    "recursive loop": '{% set X = ["x"]*1000 %}{% for x in X recursive %}{{ loop(X) }}{% endfor %}',
    "filtered recursive loop": "{% set X = [0] + [1]*50000 %}{% for x in X if x == 0 recursive %}{{ loop(X) }}"
                               "{% endfor %}",
    "printed literal": '{% for a in "x"*50000 %}yyyyy{% endfor %}',
    "printed value": '{% set s = "x"*90000 %}{% for a in s %}{{ s }}{% endfor %}',
    "doubling set block": '{% set s %}{{ "x"*1000 }}{% endset %}' + "{% set s %}{{ s }}{{ s }}{% endset %}" * 30,
    "slices in a loop": '{% set X = ["x"]*50000 %}{% for a in X %}{% set y = X[1:] %}{% endfor %}',
    "comparisons in a loop": '{% set X = ["x"]*50000 %}{% set Y = ["x"]*50000 %}{% for a in X %}{% if X == Y %}'
                             "{% endif %}{% endfor %}",
    "membership in a loop": '{% set X = "x"*99999 %}{% for a in X %}{{ a in X }}{% endfor %}',
    "sum of lists": "{% set X = [[1]]*50000 %}{{ X|sum(start=[]) }}",
    "join of joins": '{% set X = ["x"*1000]*90 %}{{ X|join(X|join) }}',
    "big integer arithmetic": '{% set y = ("9"*4000)|int %}{{ y*y*y*y*y }}',
    "sorting in a loop": '{% set X = "x"*5000 %}{% for a in X %}{{ X|list|sort|length }}{% endfor %}',
    "a table repeated": "{{ [t.weight_rule]*100000 }}",
    # issue 37: join over a string built 270 MB before the refusal; int with a base passed the bit cap
    "join over a string": '{% set s = "x"*99990 %}{{ s|join("y"*2700) }}',
    "string of floats": "{% set X = [1.5]*50000 %}{{ X|string|length }}",
    "int with a base": '{% set y = ("f"*5000)|int(base=16) %}{{ y > 1 }}',
}


def _render_in_child(source: str, slug: str) -> str:
    """Render in a forked child capped at 1 GB more memory and BACKSTOP_S seconds: what happened, in words.

    A render that escapes the budget (a regression) then fails its test cleanly, even where it is stuck in one
    long C call (`round(1, -10**9)` builds 10**10**9), instead of hanging or exhausting the machine."""
    _render_with("{{ 1 }}", slug)  # the registry is loaded and the sandbox built before the fork

    def render_it() -> str:
        try:
            _render_with(source, slug)
        except TextError as e:
            return f"TextError: {e}"
        return "rendered"
    return _in_child(render_it)


def _in_child(work: Any) -> str:
    """`work()` (returning text) in a forked child with 1 GB more memory and BACKSTOP_S seconds at most."""
    import os
    import resource
    import select
    import signal

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: render, report, leave without running the parent's cleanup
        os.close(read_end)
        try:
            size = next(int(ln.split()[1]) << 10 for ln in Path("/proc/self/status").read_text().splitlines()
                        if ln.startswith("VmSize:"))
            resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 30), resource.RLIM_INFINITY))
            what = work()
        except BaseException as e:  # noqa: BLE001 - reported to the parent, which fails the test
            what = f"{type(e).__name__}: {e}"
        os.write(write_end, what.encode("utf-8", "replace")[:4000])
        os._exit(0)
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], BACKSTOP_S)
        what = os.read(read_end, 4000).decode("utf-8") if ready else f"still running after {BACKSTOP_S} s"
    finally:
        os.close(read_end)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return what or "the child died without an answer"


def _render_with(source: str, slug: str = "body-mass-index") -> str:
    reg = get_registry()
    calc = reg.calculators[slug]
    active = calc.active  # (the models are frozen: the edited entry is a copy)
    evil = calc.model_copy(update={"versions": [v.model_copy(update={"text": source}) if v is active else v
                                                for v in calc.versions]})
    return render(evil, calcs=reg.calculators, units=reg.units)


@pytest.mark.parametrize("name", list(WORK_BOMBS))
def test_each_work_bomb_passes_the_check_and_fails_fast_when_rendered(name: str) -> None:
    source = WORK_BOMBS[name]
    assert template_problems(source) == []
    what = _render_in_child(source, "creatinine-clearance-cockcroft-gault" if "weight_rule" in source
                            else "body-mass-index")
    assert what.startswith("TextError") and "not allowed in a registry text" in what, what


def test_a_memory_or_recursion_error_is_a_text_error_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    for error, words in ((MemoryError, "more memory"), (RecursionError, "more nesting")):
        def boom(source: str, ctx: Any, error: type[BaseException] = error) -> str:
            raise error()
        monkeypatch.setattr(texts, "_generate", boom)
        with pytest.raises(TextError, match=words):
            _render_with("{{ 1 }}")


def test_the_shipped_texts_use_a_small_part_of_the_budget() -> None:
    reg = get_registry()
    worst = 0
    for calc in reg.calculators.values():
        for version in calc.versions:
            token = texts._work.set(texts._Work())
            try:
                texts._generate(version.text, texts.render_context(calc, reg.calculators, reg.units))
                worst = max(worst, texts.RENDER_BUDGET - texts._current().left)
            finally:
                texts._work.reset(token)
    assert 0 < worst < texts.RENDER_BUDGET // 20, worst


# Where each bomb is planted: one per calculator (its active text), so one command meets them all.
CARRIERS = ["body-mass-index", "body-surface-area", "anion-gap", "delta-gap", "fib-4", "qsofa", "curb-65",
            "wells-pe", "centor-mcisaac", "child-pugh", "heart-score", "glasgow-coma-scale", "has-bled", "perc-rule",
            "sofa", "caprini-2005", "cha2ds2-vasc", "ideal-body-weight", "sirs-criteria", "mean-arterial-pressure"]
PLANTED = [k for k in WORK_BOMBS if "weight_rule" not in WORK_BOMBS[k]]


def _plant_all(tmp_path: Path) -> Path:
    root = hostile_copy(tmp_path)
    for slug, name in zip(CARRIERS, PLANTED):
        def change(data: Any, source: str = WORK_BOMBS[name]) -> None:
            v = next(v for v in data["versions"] if v["status"] == "active")
            v["text"] = block(str(v["text"]).rstrip("\n") + "\n" + source + "\n")
        edit_yaml(root / "formulas" / f"{slug}.yaml", change)
    return root


RENDERING = [("validate",), ("texts", "render"), ("show", "wells-pe"), ("diff", "body-mass-index", "1.0.0", "1.0.1"),
             ("site", "build")]


# Linux starts a child's peak resident size at its parent's size at fork (the copied address space counts
# until exec), so a command started straight from a long-running pytest reports pytest's own peak. A small
# launcher forks the command instead, and reads the command's peak from the kernel when it is reaped.
_LAUNCHER = """
import json, os, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, *sys.argv[2:]])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    json.dump([os.waitstatus_to_exitcode(status), usage.ru_maxrss], f)
"""


def _run_measured(root: Path, argv: list[str], cwd: Path) -> tuple[int, str, float, float]:
    """`formula ARGV --root ROOT` as a process: (exit status, its output, seconds, peak resident MB).

    The address space is capped at 2 GB as a guard for the machine; the peak is read from the kernel."""
    import json
    import os
    import signal
    import subprocess
    import sys

    from registry.loader import PROJECT_ROOT

    log, measured = cwd / "output.txt", cwd / "measured.json"
    start = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(measured), "-m", "cli", *argv, "--root",
                                 str(root)], stdout=out, stderr=subprocess.STDOUT, cwd=str(cwd),
                                start_new_session=True, env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:  # a hang (a regression) fails the test with -9 instead
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return -9, log.read_text(), time.perf_counter() - start, 0.0
    code, maxrss_kb = json.loads(measured.read_text())
    return code, log.read_text(), time.perf_counter() - start, maxrss_kb / 1024


@pytest.mark.parametrize("command", RENDERING, ids=[" ".join(c) for c in RENDERING])
def test_every_rendering_command_refuses_the_bombs_within_200_mb(tmp_path: Path, command: tuple[str, ...]) -> None:
    root = _plant_all(tmp_path)
    argv = [*command, "--out", str(tmp_path / "out")] if command[0] == "site" else list(command)
    code, output, took, peak_mb = _run_measured(root, argv, tmp_path)
    assert code not in (0, -9) and "Traceback" not in output and "MemoryError" not in output, output[-3000:]
    assert peak_mb < 200, peak_mb
    if command == ("validate",):
        for slug in CARRIERS[:len(PLANTED)]:
            assert any(ln.startswith(f"formulas/{slug}.yaml:") and "R-TEXT" in ln for ln in output.splitlines()), slug
    assert took < 60, took  # a backstop: each refusal takes milliseconds; the command's own start dominates


def test_mcp_explain_refuses_the_bombs(tmp_path: Path) -> None:
    from registry.loader import load

    reg = load(_plant_all(tmp_path))
    for slug in CARRIERS[:len(PLANTED)]:
        text = _in_child(lambda slug=slug: str(explain(reg, slug)["text"]))
        assert "cannot be rendered" in text and "not allowed" in text, (slug, text[-300:])


# ---------------------------------------------------------------- templates generated from the allowed grammar

_ATOMS = st.sampled_from(['"x"', '"ab"', "1", "2", "7", "10", "1000", "2.5", "[1, 2]", "[]", '["a", "b"]',
                          "c", "t", "u", "i", "calc.name", "X", "Y", '{"k": 1}', "(1, 2)", "99999", "-3", "True"])
_BINOPS = st.sampled_from(["*", "**", "+", "-", "//", "%", "~", "==", "<", "in"])
_FILTERS = st.sampled_from(["length", "list", "sort", "unique", "reverse", "sum", "join", "string", "upper",
                            "first", "last", "min", "max", "int", "float", "abs", "round", "round(2)",
                            "round(-99)", "join('-')", "default(1)", "count", "trim"])


def _expressions() -> st.SearchStrategy[str]:
    return st.recursive(
        _ATOMS,
        lambda inner: st.one_of(
            st.tuples(inner, _BINOPS, inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(inner, _FILTERS).map(lambda t: f"({t[0]} | {t[1]})"),
            st.lists(inner, min_size=1, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
        ),
        max_leaves=12,
    )


def _statements(expr: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.recursive(
        st.one_of(expr.map(lambda e: "{{ " + e + " }}"),
                  st.tuples(st.sampled_from("XY"), expr).map(lambda t: f"{{% set {t[0]} = {t[1]} %}}"),
                  st.just("text ")),
        lambda body: st.one_of(
            st.tuples(expr, st.lists(body, max_size=3)).map(
                lambda t: f"{{% for X in {t[0]} %}}{''.join(t[1])}{{% endfor %}}"),
            st.tuples(expr, st.lists(body, max_size=2)).map(
                lambda t: f"{{% for Y in {t[0]} recursive %}}{''.join(t[1])}{{{{ loop({t[0]}) }}}}{{% endfor %}}"),
            st.tuples(expr, st.lists(body, max_size=3)).map(lambda t: f"{{% if {t[0]} %}}{''.join(t[1])}{{% endif %}}"),
            st.tuples(st.sampled_from("XY"), st.lists(body, max_size=3)).map(
                lambda t: f"{{% set {t[0]} %}}{''.join(t[1])}{{% endset %}}"),
        ),
        max_leaves=8,
    )


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(source=_statements(_expressions()))
def test_every_template_of_the_allowed_grammar_renders_or_fails_within_the_budget(source: str) -> None:
    source = "{% set X = [1] %}{% set Y = \"y\" %}" + source
    if template_problems(source):
        return  # refused before it runs (e.g. a name used outside its loop)
    what = _render_in_child(source, "creatinine-clearance-cockcroft-gault")  # a runaway fails, never hangs
    assert what == "rendered" or what.startswith("TextError"), (source, what)


# ---------------------------------------------------------------------- the wall-clock budget (issue 37, item 4)


class _Clock:
    """A clock that moves `step` seconds each time it is read: time is tested without timing anything."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _clocks(monkeypatch: pytest.MonkeyPatch, wall: float, cpu: float) -> None:
    """Wall and CPU clocks that move `wall` and `cpu` seconds a reading."""
    from registry import render_time

    monkeypatch.setattr(render_time, "wall", _Clock(wall))
    monkeypatch.setattr(render_time, "cpu", _Clock(cpu))


SLOW = '{% set X = "x"*99999 %}{% for a in X %}{{ a|upper|lower|trim }}{% endfor %}'  # within the step budget
SHORT = '{% set X = "x"*1000 %}{% for a in X %}{{ a }}{% endfor %}'  # about 50 clock readings


def test_a_render_past_its_wall_clock_budget_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _clocks(monkeypatch, 0.001, 0.001)  # 1 ms a reading, all of it the render's own: 256 steps "take" 1 ms
    assert template_problems(SLOW) == []
    with pytest.raises(TextError, match="takes more than 100 ms to render"):
        _render_with(SLOW)
    assert _render_with("{{ 1 + 1 }}") == "2\n"  # a text of a few steps reads the clock once or twice


def test_a_starved_render_is_given_time_but_not_unbounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # 10 ms of wall time a reading, hardly any of it the thread's: the machine was busy, not the template
    _clocks(monkeypatch, 0.010, 0.0001)
    assert len(_render_with(SHORT)) > 1000  # about 500 ms of wall time: past 100 ms, yet rendered
    with pytest.raises(TextError, match="takes more than 100 ms to render"):
        _render_with(SLOW)  # 390 readings: stopped at ten times the budget (1 s)


def test_the_garbage_collectors_passes_are_not_the_renders_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    from registry import render_time

    assert render_time._on_gc not in gc.callbacks  # installed only while texts render
    with render_time.gc_timed(), render_time.gc_timed():
        assert gc.callbacks.count(render_time._on_gc) == 1
        before = render_time.gc_spent()
        gc.collect()  # a real pass, on this thread: counted
        assert render_time.gc_spent()[0] > before[0]
    assert render_time._on_gc not in gc.callbacks
    now = [0.0]
    monkeypatch.setattr(render_time, "wall", lambda: now[0])
    monkeypatch.setattr(render_time, "cpu", lambda: now[0])
    watch = render_time.Stopwatch(0.1)
    now[0] += 0.05
    render_time._on_gc("start", {})
    now[0] += 5.0  # a full pass over a forked child's heap, copying every page it touches
    render_time._on_gc("stop", {})
    now[0] += 0.04
    assert watch.elapsed() == pytest.approx((0.09, 0.09)) and not watch.over()
    now[0] += 0.02
    assert watch.over()


def test_a_set_of_texts_past_its_wall_clock_budget_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    reg = get_registry()
    _clocks(monkeypatch, 0.0, 0.0)
    assert len(texts.catalogue_files(reg.calculators, reg.units)) == len(reg.calculators) + 1  # still clocks
    _clocks(monkeypatch, 0.001, 0.001)  # 1 ms a reading: each render alone fits its 100 ms
    with texts.texts_budget(0.02), pytest.raises(TextError, match="together take more than their 0.02 s"):
        for c in reg.calculators.values():
            texts.render(c, calcs=reg.calculators, units=reg.units)
