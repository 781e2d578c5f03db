"""JSON from outside is bounded by what it would build, not only by its bytes (registry.jsontext).

Generated variants: random JSON values (the budget never undercounts what json.loads builds), every
container shape at and past the budget, and the readers of results, runs and logs fed a 60 MB line or a file
of many big lines: each refusal names the file, and memory stays under 256 MB beyond the process's baseline
(measured in a fresh process, tests/hostile/memory.py)."""
from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry import jsontext
from tests.hostile.memory import LIMIT_MB, grown_mb

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) |
    st.text(alphabet=st.characters(codec="utf-8"), max_size=8) | st.sampled_from(['"', "\\", ",", ":", "[{", "}]"]),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=6), inner, max_size=6),
    max_leaves=60,
)


def built(value: Any) -> int:
    """How many values json.loads builds for `value` (keys included)."""
    if isinstance(value, list):
        return 1 + sum(built(v) for v in value)
    if isinstance(value, dict):
        return 1 + sum(1 + built(v) for v in value.values())
    return 1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON_VALUES, st.booleans())
def test_the_budget_never_undercounts_and_the_value_is_json_loads_own(value: Any, as_bytes: bool) -> None:
    text = json.dumps(value, ensure_ascii=False)
    budget = jsontext.Budget(10**9)
    got = jsontext.loads(text.encode("utf-8") if as_bytes else text, budget=budget)
    assert got == json.loads(text)
    assert budget.limit - budget.left >= built(value)


SHAPES = {  # one element of a long top-level array: every way to make many small objects
    "empty objects": "{}", "empty arrays": "[]", "zeros": "0", "short strings": '"ab"', "nulls": "null",
    "objects with keys": '{"a":0}', "nested pairs": "[[]]", "floats": "0.5",
}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
def test_every_shape_is_refused_past_the_budget_and_read_within_it(shape: str, as_bytes: bool) -> None:
    def text(n: int) -> str | bytes:
        t = "[" + ",".join([SHAPES[shape]] * n) + "]"
        return t.encode() if as_bytes else t

    fits = next(n for n in range(1000, 0, -1) if jsontext.Budget(1000).left >= _cost(text(n)))
    assert len(jsontext.loads(text(fits), budget=jsontext.Budget(1000))) == fits
    with pytest.raises(jsontext.OverBudget, match="more than 1,000 JSON values"):
        jsontext.loads(text(fits + 1), budget=jsontext.Budget(1000))


def _cost(text: str | bytes) -> int:
    budget = jsontext.Budget(10**9)
    jsontext.check(text, budget)
    return budget.limit - budget.left


@pytest.mark.parametrize("depth", [jsontext.MAX_DEPTH + 1, 1_000, 100_000])
@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_nesting_past_the_limit_is_refused_unparsed(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    with pytest.raises(jsontext.TooDeep, match="nested too deeply"):
        jsontext.loads(opener * depth + "0" + closer * depth)
    assert jsontext.loads(opener * jsontext.MAX_DEPTH + "0" + closer * jsontext.MAX_DEPTH) is not None


@pytest.mark.parametrize("text, why", [
    ('{"a": 1, "a": 2}', "duplicate key 'a'"), ('{"x": {"b": 1, "b": 1}}', "duplicate key 'b'"),
    ('{"a": NaN}', "NaN is not a number"), ('[Infinity]', "Infinity is not a number"),
    ('[-Infinity]', "-Infinity is not a number"),
])
def test_strict_refuses_duplicate_keys_and_nan(text: str, why: str) -> None:
    with pytest.raises(jsontext.JsonError, match=why):
        jsontext.loads(text, strict=True)
    jsontext.loads(text)  # elsewhere (a results row's answer may be NaN) it reads as before


# ---------------------------------------------------------------- the readers, measured in a fresh process

_FILE = """
import os, tempfile
from pathlib import Path
folder = Path(tempfile.mkdtemp())
def hostile(name, item, lines, per_line):
    # `lines` results rows, each carrying an array of `per_line` copies of `item`, written a block at a time
    p = folder / name
    block = (item + b",") * 100_000
    with open(p, "wb") as f:
        for n in range(lines):
            f.write(b'{{"row_number":%d,"calculator_id":1,"seed":0,"correct":true,"outcome":"answered","calls":[' % n)
            for _ in range(per_line // 100_000):
                f.write(block)
            f.write(item + b"]}}\\n")
    return p
path = hostile("results.jsonl", {item!r}, {lines}, {per_line})
"""

READERS = {  # what reads a results or log file, and how
    "read_run (score, report, compare)": ("run = folder; os.rename(path, folder / 'results.jsonl')\n"
                                          "from audit.runs import read_run", "read_run(folder)"),
    "read_jsonl (stale, review-pr)": ("from registry.commands import read_jsonl", "print(read_jsonl(path)[1][:1])"),
    "runner resume": ("from solver.runner.results import load", "load(path)"),
    "importer rows": ("from solver.importers.common import json_lines", "list(json_lines(path))"),
    "replay": ("from solver.engines import EngineOptions\nfrom solver.engines.replay import ReplayEngine\n"
               "os.rename(path, folder / 'results.jsonl')", "ReplayEngine(EngineOptions(replay_from=folder))"),
}
PAYLOADS = {  # (item, lines, items per line)
    "one 60 MB line of {}": (b"{}", 1, 20_000_000),
    "one 60 MB line of []": (b"[]", 1, 20_000_000),
    "many 900 kB lines of 0": (b"0", 60, 400_000),
    "many 900 kB lines of {}": (b"{}", 60, 300_000),
}


@pytest.mark.parametrize("payload", list(PAYLOADS))
@pytest.mark.parametrize("reader", list(READERS))
def test_a_hostile_results_file_costs_under_256_mb_and_is_refused_by_name(reader: str, payload: str) -> None:
    item, lines, per_line = PAYLOADS[payload]
    setup, action = READERS[reader]
    out = grown_mb(_FILE.format(item=item, lines=lines, per_line=per_line) + setup, action)
    assert out["grown_mb"] < LIMIT_MB, out
    error = out["error"]
    if reader.startswith("read_jsonl") and error is None:
        return  # an over-long line is one problem of the file, reported by line (printed above)
    assert error is not None and "Traceback" not in error["message"], out
    assert "results.jsonl" in error["message"] and error["type"] not in ("MemoryError", "RecursionError"), error


_MANY = """
import tempfile
from pathlib import Path
folder = Path(tempfile.mkdtemp())
path = folder / "results.jsonl"
per = 1_000_000 // ({size} + 1)
with open(path, "wb") as f:
    for n in range(70):  # 70 lines just under the line cap: 70 MB, past the file cap too
        f.write(b'{{"row_number":%d,"calculator_id":1,"seed":0,"correct":true,"outcome":"answered","calls":[' % n)
        f.write(({item!r} + b",") * (per - 1) + {item!r} + b"]}}\\n")
from registry.commands import read_jsonl
"""
COSTLY = [b"{}", b"[]", b'"ab"', b'{"a":0}', b'{"ab":"cd"}', b"1.5", b'["cd"]', b'"abcdefgh"']


@pytest.mark.parametrize("item", COSTLY, ids=[i.decode() for i in COSTLY])
def test_the_costliest_values_per_byte_kept_by_a_reader_stay_under_256_mb(item: bytes) -> None:
    """read_jsonl keeps every row it reads (review-pr, stale): the budget alone bounds what it holds."""
    out = grown_mb(_MANY.format(item=item, size=len(item)), "read_jsonl(path)")
    assert out["grown_mb"] < LIMIT_MB, out
    assert out["error"] is not None and "results.jsonl" in out["error"]["message"], out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON_VALUES, st.integers(min_value=1, max_value=9), st.booleans())
def test_pieces_cut_anywhere_count_what_the_whole_text_counts(value: Any, chunk: int, as_bytes: bool) -> None:
    """The text is counted a piece at a time, each cut outside a string: any piece size counts the same."""
    text = json.dumps(value, ensure_ascii=False)
    data = text.encode("utf-8") if as_bytes else text
    whole = _cost(data)
    saved = jsontext.CHUNK
    jsontext.CHUNK = chunk
    try:
        assert _cost(data) == whole
        deep = "[" * (jsontext.MAX_DEPTH + 1) + text + "]" * (jsontext.MAX_DEPTH + 1)
        with pytest.raises(jsontext.TooDeep):
            jsontext.check(deep.encode("utf-8") if as_bytes else deep, jsontext.Budget(10**9))
    finally:
        jsontext.CHUNK = saved
