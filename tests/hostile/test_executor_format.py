"""The clinical policy accepts `"...".format(...)` on a string literal with plain fields and the pure
`statistics` functions; a field that reaches attributes or items, a nested spec, `.format` on anything but a
literal and `format_map` stay rejected; the paper policy keeps Table 17 (every `.format`, every import but
its four modules, rejected).

Generated variants: format specs from the format-spec grammar (fill, align, sign, width, grouping,
precision, type), field names (automatic, numbered, named) and conversions; hostile fields built from
attribute and index chains, nested specs and underscored names."""
from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.executor.checker import Rejected, check, plain_format
from solver.executor.policy import CLINICAL, PAPER

SPECS = st.builds(
    lambda fill, align, sign, width, group, prec, kind: (fill + align if align else "") + sign + width + group
    + prec + kind,
    st.sampled_from(["", "*", "0", " "]), st.sampled_from(["", "<", ">", "^"]), st.sampled_from(["", "+", "-", " "]),
    st.sampled_from(["", "1", "8", "12"]), st.sampled_from(["", ","]), st.sampled_from(["", ".0", ".2", ".5"]),
    st.sampled_from(["", "f", "e", "g", "%"]),
)
PLAIN_NAMES = st.sampled_from(["", "0", "1", "x", "value", "bmi2"])
CONVERSIONS = st.sampled_from(["", "!r", "!s"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(PLAIN_NAMES, CONVERSIONS, SPECS), min_size=1, max_size=3), st.text(
    alphabet=st.sampled_from("ab =:-"), max_size=5))
def test_plain_fields_are_accepted_under_clinical_and_rejected_under_paper(fields: list, text: str) -> None:
    names = [n for n, _, _ in fields]
    if "" in names and any(n.isdigit() for n in names):
        return  # Python refuses to mix automatic and manual numbering; not a policy question
    fmt = text + "".join("{" + n + c + (":" + s if s else "") + "}" for n, c, s in fields)
    assert plain_format(fmt)
    args = "1.5, 2.5" + ", x=3.25, value=4.0, bmi2=22.5"
    source = f"def solve():\n    s = {fmt!r}.format({args})\n    return len(s)\n"
    check(source, CLINICAL)
    with pytest.raises(Rejected, match="string formatting"):
        check(source, PAPER)


HOSTILE_FIELDS = st.one_of(
    st.builds(lambda base, chain: base + chain, PLAIN_NAMES.filter(bool), st.lists(
        st.sampled_from([".__class__", ".real", "[0]", "[x]", ".__globals__", "[__builtins__]"]), min_size=1,
        max_size=3).map("".join)),
    st.builds(lambda n, inner: n + ":" + "{" + inner + "}", PLAIN_NAMES, PLAIN_NAMES),  # a nested spec
    st.sampled_from(["_x", "__class__", "0!a", "x!a"]),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(HOSTILE_FIELDS, st.sampled_from(["", "a ", "{} "]))
def test_fields_that_reach_attributes_items_or_nest_are_rejected_under_both(field: str, before: str) -> None:
    fmt = before + "{" + field + "}"
    assert not plain_format(fmt)
    source = f"def solve():\n    return len({fmt!r}.format(1, x=[1]))\n"
    for policy in (CLINICAL, PAPER):
        with pytest.raises(Rejected, match="string formatting"):
            check(source, policy)


@pytest.mark.parametrize("source", [
    "def solve():\n    s = '{}'\n    return len(s.format(1))\n",  # a variable, not a literal
    "def solve():\n    return len(('{}' + '{0.real}').format(1))\n",  # an expression
    "def solve():\n    return len(str('{}').format(1))\n",
    "def solve():\n    return len('{a}'.format_map({'a': 1}))\n",
    "def solve():\n    f = '{0.__class__}'.format\n    return 1\n",
    "def solve():\n    return len(b'{}'.format(1))\n",  # bytes have no format; not a str literal
])
def test_format_on_anything_but_a_plain_literal_is_rejected(source: str) -> None:
    with pytest.raises(Rejected, match="string formatting"):
        check(source, CLINICAL)


STATS = ["mean", "fmean", "median", "median_low", "median_high", "mode", "pstdev", "stdev", "pvariance",
         "variance", "geometric_mean", "harmonic_mean"]


@pytest.mark.parametrize("name", STATS)
@pytest.mark.parametrize("style", ["import", "from", "alias"])
def test_statistics_runs_under_clinical_and_is_refused_under_paper(name: str, style: str) -> None:
    from solver.executor import run_program

    head = {"import": "import statistics\n", "from": f"from statistics import {name}\n",
            "alias": "import statistics as st\n"}[style]
    call = {"import": f"statistics.{name}", "from": name, "alias": f"st.{name}"}[style]
    source = f"{head}def solve():\n    return round({call}([2.0, 4.0, 4.0, 8.0]), 4)\n"
    import statistics

    want = round(getattr(statistics, name)([2.0, 4.0, 4.0, 8.0]), 4)
    got = run_program(source, policy="clinical")
    assert got.kind == "value" and got.value == want, got
    assert run_program(source, policy="paper").kind == "rejected"


@pytest.mark.parametrize("name", ["NormalDist", "kde", "random", "_sum", "Fraction", "sqrt", "math"])
def test_statistics_names_off_the_list_are_rejected(name: str) -> None:
    with pytest.raises(Rejected):
        check(f"import statistics\ndef solve():\n    return statistics.{name}\n", CLINICAL)
    with pytest.raises(Rejected):
        check(f"from statistics import {name}\ndef solve():\n    return 1\n", CLINICAL)


def test_the_formatter_reads_what_the_checker_reads() -> None:
    """plain_format parses with Python's own Formatter, the same grammar str.format applies at run time."""
    assert list(string.Formatter().parse("{0.a}")) == [("", "0.a", "", None)]
    assert not plain_format("{0.a}") and plain_format("{0:.2f}") and not plain_format("{") and plain_format("{{}}")
