"""Generated hostile input for every loader: registry YAML files (calculator, unit data, guideline, snapshot),
the lock, journals, imports of each format, stored results, replay records, MCP lines and batch tables (CSV
and parquet). Each must give a clear error (the loader's own error type, a validation problem, or an exit
status with `error: ...`) or a result: never a traceback, never a hang.

Bounded in time: a few dozen examples per loader (CI's derandomized profile makes them the same each run),
each on a tiny registry or file, so the whole module takes about a minute on a loaded 2-core machine."""
from __future__ import annotations

import contextlib
import io
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli.main import main
from registry.atomic import JournalRefused, recover
from registry.loader import clear_cache, load
from registry.validate import validate
from registry.yamlio import YamlError, load_text, rt_load
from tests.helpers import SHIPPED_ROOT

SLUG = "body-mass-index"
BACKSTOP_S = 20.0  # per example: a hang fails here instead of stalling CI (each takes milliseconds)
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))

# ------------------------------------------------------------------------------------------ building blocks

TOKENS = ["!!python/object/apply:os.system ['touch PWNED']", "*a", "&a", "&a [*a, *a, *a]", "<<: *a", "9" * 4400,
          "-" + "9" * 4400, "1e999", ".nan", "-.inf", "!!binary ====", "!!int 0xZZ", "!!float x", "!!set {a, b}",
          "!!omap [a: 1]", "!!timestamp 2026-13-45", "2026-02-30", "{", "[", "]", "}", "'", '"', "\t", "\x00",
          "\x85", "\ufeff", "\u202e", "~", "null", "[]", "{}", "- ", "? ", ": ", "%YAML 1.1", "---", "...", "|",
          ">-", "{{ 10**100000 }}", "{% for x in c recursive %}{{ loop(c) }}{% endfor %}", "../../etc/passwd",
          "/dev/zero", "0", "-1", "true", "yes", "'-'", "1_000", "0o777", "[[[[[[[[[[", "a: b: c"]
JSON_KEYS = ["files", "format", "about", "calculators", "formulas/units.yaml", "formulas/texts", "formulas/..",
             "../x", "/etc/passwd", "formulas/history/x/1.yaml", "formulas/.journal.json", "formulas/", "formulas\\x",
             "formulas/\x00", "eval", "samples", "doc", "resps", "Row Number", "Calculator ID", "Ground Truth Answer",
             "LLM Answer", "Result", "id", "jsonrpc", "method", "params"]


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=False),
                        st.text(max_size=12), st.sampled_from(JSON_KEYS + TOKENS[:20]))
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(JSON_KEYS) | st.text(max_size=6), inner,
                                                     max_size=4)), max_leaves=16)


@st.composite
def _mutated(draw: Any, text: str) -> str:
    """`text` (a real file) after a few hostile edits: lines dropped, doubled or spliced with a token, a tail cut."""
    lines = text.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["drop", "double", "value", "prefix", "cut"]))
        token = draw(st.sampled_from(TOKENS) | st.text(max_size=8))
        if how == "drop":
            del lines[i]
        elif how == "double":
            lines.insert(i, lines[i])
        elif how == "value" and ":" in lines[i]:
            lines[i] = lines[i].split(":", 1)[0] + ": " + token + "\n"
        elif how == "prefix":
            lines[i] = token + lines[i]
        else:
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    return "".join(lines)


@contextlib.contextmanager
def _mini_registry() -> Iterator[Path]:
    """A registry of one calculator (body mass index), its unit data, guidelines, snapshots and lock."""
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        root = Path(tmp)
        (root / "formulas" / "history").mkdir(parents=True)
        for name in ("units.yaml", f"{SLUG}.yaml"):
            shutil.copy(SHIPPED_ROOT / "formulas" / name, root / "formulas" / name)
        shutil.copytree(SHIPPED_ROOT / "formulas" / "history" / SLUG, root / "formulas" / "history" / SLUG)
        lock = json.loads((SHIPPED_ROOT / "formulas" / "REGISTRY.lock").read_text(encoding="utf-8"))
        lock["calculators"] = {SLUG: lock["calculators"][SLUG]}
        (root / "formulas" / "REGISTRY.lock").write_text(json.dumps(lock), encoding="utf-8")
        shutil.copytree(SHIPPED_ROOT / "guidelines", root / "guidelines")
        yield root


def _validates(root: Path) -> list[str]:
    """`formula validate`'s findings (load and validate in this process: an exception fails the test)."""
    start = time.perf_counter()
    clear_cache()
    reg = load(root)
    validate(reg)
    assert time.perf_counter() - start < BACKSTOP_S
    return [str(p) for p in reg.problems]


def _cli(*argv: str, answers: tuple[int, ...] = (0, 2)) -> tuple[int, str]:
    """`formula ARGV` in this process: (exit status, stderr); an exception escaping it fails the test, and an exit
    status other than `answers` (a result, or argparse's usage error) must come with an error message."""
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as e:  # argparse's usage errors
            code = int(e.code or 0)
    assert time.perf_counter() - start < BACKSTOP_S
    text = err.getvalue()
    assert "Traceback" not in text, text
    if code not in answers:
        assert "error" in text.lower(), (code, text[-500:])
    return code, text


def _shipped(rel: str) -> str:
    return (SHIPPED_ROOT / rel).read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------ registry files

REGISTRY_FILES = {"calculator": f"formulas/{SLUG}.yaml", "units": "formulas/units.yaml",
                  "guideline": "guidelines/acc-aha-2013-cardiovascular-risk.yaml",
                  "snapshot": f"formulas/history/{SLUG}/1.0.1.yaml"}


@pytest.mark.parametrize("kind", list(REGISTRY_FILES))
def test_a_hostile_registry_file_is_a_problem_or_loads(kind: str) -> None:
    rel = REGISTRY_FILES[kind]
    if not (SHIPPED_ROOT / rel).exists():
        pytest.fail(f"{rel} is not in the shipped registry: pick another file to mutate")

    @FUZZ
    @given(text=_mutated(_shipped(rel)))
    def check(text: str) -> None:
        with _mini_registry() as root:
            path = root / rel
            path.write_text(text, encoding="utf-8")
            _validates(root)
            with contextlib.suppress(YamlError):
                load_text(text, rel)
            if kind == "calculator":
                with contextlib.suppress(YamlError):
                    rt_load(path)
    check()


@FUZZ
@given(value=_json_values(), raw=st.sampled_from(["", "{", "[]", "null", "{\"format\": \"x\"}", "\x00"]) | st.none())
def test_a_hostile_lock_is_a_problem(value: Any, raw: str | None) -> None:
    with _mini_registry() as root:
        (root / "formulas" / "REGISTRY.lock").write_text(raw if raw is not None else json.dumps(value),
                                                         encoding="utf-8")
        _validates(root)


# ------------------------------------------------------------------------------------------ journals


@FUZZ
@given(files=st.dictionaries(st.sampled_from(JSON_KEYS) | st.text(max_size=12),
                             st.none() | st.text(max_size=8) | st.integers(), max_size=4),
       wrapper=st.booleans(), raw=st.none() | st.sampled_from(["", "{", "[1]", "\x00\x01", "{\"files\": 3}"]))
def test_a_hostile_journal_is_refused_or_applied_inside_formulas(files: dict[str, Any], wrapper: bool,
                                                                raw: str | None) -> None:
    with _mini_registry() as root:
        outside = root.parent / f"{root.name}-outside.txt"
        journal = root / "formulas" / ".journal.json"
        body = {"format": 1, "files": files} if wrapper else files
        journal.write_text(raw if raw is not None else json.dumps(body), encoding="utf-8")
        try:
            restored = recover(root)
        except JournalRefused as e:
            assert "nothing of it was applied" in str(e)
            assert journal.exists()
        else:
            assert all(str(r).startswith("formulas/") for r in restored)
        assert not outside.exists()
        _validates(root)


# ------------------------------------------------------------------------------------------ imports


def _medcalc_lines() -> st.SearchStrategy[list[Any]]:
    real = {"Row Number": 1, "Calculator ID": "6", "Ground Truth Answer": "22.5", "LLM Answer": "22.4",
            "Result": "Correct", "Note ID": "n1", "Patient Note": "x"}
    field = st.sampled_from(list(real))
    row = st.fixed_dictionaries({}, optional={k: st.just(v) | _json_values() for k, v in real.items()})
    edited = st.tuples(field, _json_values()).map(lambda kv: {**real, kv[0]: kv[1]})
    return st.lists(row | edited | _json_values(), min_size=1, max_size=5)


@FUZZ
@given(lines=_medcalc_lines(), garbage=st.none() | st.sampled_from(["{", "\x00", "[1,", "\ufeff{}"]))
def test_a_hostile_medcalc_bench_log_is_an_error_or_a_run(lines: list[Any], garbage: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "OpenAI_gpt-4_direct_answer.jsonl"
        text = "".join(json.dumps(x) + "\n" for x in lines) + (garbage or "")
        src.write_text(text, encoding="utf-8")
        _cli("import", "medcalc-bench", str(src), "--out", str(Path(tmp) / "run"))


@FUZZ
@given(eval_spec=_json_values(), samples=st.lists(_json_values(), max_size=3), archive=st.booleans())
def test_a_hostile_inspect_log_is_an_error_or_a_run(eval_spec: Any, samples: list[Any], archive: bool) -> None:
    import zipfile

    with tempfile.TemporaryDirectory() as tmp:
        spec = eval_spec if not isinstance(eval_spec, dict) else {"task": "medcalc", "model": "m", **eval_spec}
        if archive:
            src = Path(tmp) / "log.eval"
            with zipfile.ZipFile(src, "w") as z:
                z.writestr("header.json", json.dumps({"eval": spec}))
                for i, s in enumerate(samples):
                    z.writestr(f"samples/{i}.json", json.dumps(s))
        else:
            src = Path(tmp) / "log.json"
            src.write_text(json.dumps({"eval": spec, "samples": samples}), encoding="utf-8")
        _cli("import", "inspect-ai", str(src), "--out", str(Path(tmp) / "run"), "--dataset", "medcalc-bench-2024")


@FUZZ
@given(docs=st.lists(st.fixed_dictionaries({"doc": st.fixed_dictionaries(
    {}, optional={"Row Number": st.just(1) | _json_values(), "Calculator ID": st.just(6) | _json_values(),
                  "Ground Truth Answer": st.just("22.5") | _json_values()}),
    "resps": _json_values(), "filtered_resps": _json_values(), "filter": st.just("none") | _json_values()})
    | _json_values(), min_size=1, max_size=4))
def test_a_hostile_lm_eval_file_is_an_error_or_a_run(docs: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "openai__gpt-4"
        folder.mkdir()
        src = folder / "samples_medcalc_2026-01-01T00-00-00.jsonl"
        src.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
        _cli("import", "lm-eval", str(src), "--out", str(Path(tmp) / "run"), "--dataset", "medcalc-bench-2024")


# ------------------------------------------------------------------------------------------ stored results


def _gold_run() -> Path:
    return Path(__file__).resolve().parents[2] / "results" / "embedded" / "gold-solve"


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))  # each runs three commands
@given(manifest=st.none() | _mutated(json.dumps(json.loads((_gold_run() / "manifest.json").read_text()), indent=1)),
       rows=_mutated("".join((_gold_run() / "results.jsonl").read_text(encoding="utf-8").splitlines(True)[:4])))
def test_a_hostile_run_folder_is_an_error_or_a_run(manifest: str | None, rows: str) -> None:
    from audit.runs import RunError, read_run

    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        run.mkdir()
        (run / "manifest.json").write_text(manifest if manifest is not None else
                                           (_gold_run() / "manifest.json").read_text(), encoding="utf-8")
        (run / "results.jsonl").write_text(rows, encoding="utf-8")
        with contextlib.suppress(RunError):
            read_run(run)
        _cli("stale", str(run / "results.jsonl"))
        _cli("score", str(run))


_RECORD: list[str] = []


def _record() -> str:
    """An answer record as `formula solve --format json` prints it (made once)."""
    if not _RECORD:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["solve", "--calculator", SLUG, "--entities", '{"weight": [70, "kg"], "height": [1.75, "m"]}',
                         "--format", "json"]) == 0
        _RECORD.append(out.getvalue())
    return _RECORD[0]


@FUZZ
@given(edit=st.tuples(st.sampled_from(["calculator", "version", "content_hash", "value", "entities", "inputs",
                                       "variant", "program", "registry_lock_digest", "route", "sub_results",
                                       "constants", "format_version", "unit"]), _json_values()) | st.none(),
       raw=st.none() | st.sampled_from(["", "{", "[]", "\x00", "{\"calculator\": 6}"]))
def test_a_hostile_replay_record_is_an_error_or_a_comparison(edit: tuple[str, Any] | None, raw: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        record = json.loads(_record())
        if edit is not None:
            record[edit[0]] = edit[1]
        path = Path(tmp) / "record.json"
        path.write_text(raw if raw is not None else json.dumps(record), encoding="utf-8")
        _cli("replay", str(path), answers=(0, 2, 3))  # 3: the record differs from a recomputation (listed)


# ------------------------------------------------------------------------------------------ MCP lines


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(line=st.text(max_size=60) | _json_values().map(json.dumps)
       | st.tuples(st.integers(0, 300), st.sampled_from(["[", "{\"a\":"])).map(lambda t: t[1] * t[0]))
def test_a_hostile_mcp_line_gets_a_verdict(line: str) -> None:
    from solver.tools.jsonrpc import screen

    v = screen(line)
    assert v.passes or v.error is None or v.error["error"]["code"] in (-32700, -32600, -32602)


# ------------------------------------------------------------------------------------------ batch tables


_CELLS = st.sampled_from(["70", "1.75", "", "kg", "lbs", "m", "cm", "-1", "1e999", "nan", "=HYPERLINK(\"x\")",
                          "\x00", "🙂", "9" * 400, "[70, \"kg\"]", "{\"a\": 1}", "true"]) | st.text(max_size=6)


@FUZZ
@given(header=st.lists(st.sampled_from(["weight", "height", "weight_unit", "height_unit", "x", ""]) | st.text(max_size=5),
                       min_size=1, max_size=4),
       rows=st.lists(st.lists(_CELLS, min_size=0, max_size=5), max_size=4), columns=st.none() | _json_values())
def test_a_hostile_batch_csv_is_an_error_or_a_table(header: list[str], rows: list[list[str]], columns: Any) -> None:
    import csv

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.csv"
        with src.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(rows)
        extra = ["--columns", json.dumps(columns)] if columns is not None else []
        _cli("batch", str(src), "--calculator", SLUG, "--out", str(Path(tmp) / "out.csv"), *extra)


@FUZZ
@given(data=st.dictionaries(st.sampled_from(["weight", "height", "weight_unit", "height_unit", "x"]),
                            st.lists(st.one_of(st.floats(), st.integers(-10**6, 10**6), st.text(max_size=5),
                                               st.none()), min_size=3, max_size=3), min_size=1, max_size=4),
       garbage=st.none() | st.binary(max_size=64))
def test_a_hostile_batch_parquet_is_an_error_or_a_table(data: dict[str, list[Any]], garbage: bytes | None) -> None:
    import pandas as pd

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.parquet"
        if garbage is not None:
            src.write_bytes(b"PAR1" + garbage)
        else:
            frame = pd.DataFrame({k: pd.Series(v, dtype="object").map(lambda x: None if x is None else str(x))
                                  for k, v in data.items()})
            frame.to_parquet(src)
        _cli("batch", str(src), "--calculator", SLUG, "--out", str(Path(tmp) / "out.parquet"))


# ------------------------------------------------------------------------------------------ who decides (issue 37)

_OPTION_PARTS = ['namespaces="formula-registry"', "namespaces=formula-registry", 'valid-after="20260101"',
                 "valid-after=20260101", 'valid-before="20991231"', "valid-before=20991231", 'valid-before="2099"',
                 'valid-before="20991231"Z', "cert-authority", 'namespaces="a,b"', 'namespaces="', '"', ",", "",
                 'valid-after="20260101120000Z"', 'VALID-BEFORE="20991231"', "no-touch-required"]


@st.composite
def _signers_text(draw: Any) -> str:
    """allowed_signers lines as a hostile pull request writes them: real keys, options quoted or not, mangled."""
    from tests.helpers import make_key

    pub = Path(f"{make_key('fuzz-signer')}.pub").read_text(encoding="utf-8").split()
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        options = ",".join(draw(st.lists(st.sampled_from(_OPTION_PARTS), max_size=3)))
        principal = draw(st.sampled_from(["fuzz", "*", "a,b", '"fuzz"', "fuzz@example.org", "", "-x", "\u202e"]))
        key = draw(st.sampled_from([pub[1], pub[1][:-4], "AAAA", "====", pub[1] + "A", ""]))
        keytype = draw(st.sampled_from([pub[0], "ssh-rsa", "ssh-dss", ""]))
        line = " ".join(x for x in (principal, options, keytype, key) if x)
        lines.append(draw(st.sampled_from([line, "#" + line, line + " comment", "\t" + line, line[: len(line) // 2]])))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n", "\n\x00"]))


@FUZZ
@given(text=_signers_text())
def test_a_hostile_allowed_signers_file_is_a_problem_naming_its_line(text: str) -> None:
    with _mini_registry() as root:
        policy = root / "formulas" / "policy"
        policy.mkdir()
        (policy / "governance.yaml").write_text("people:\n  fuzz: {name: F. Uzz, roles: [chair]}\n", encoding="utf-8")
        (policy / "allowed_signers").write_text(text, encoding="utf-8")
        for p in _validates(root):
            if "allowed_signers" in p:
                assert p.startswith("formulas/policy/allowed_signers:"), p  # path:line: ...


def _seal_of(slug: str) -> str:
    """The shipped seal's header and `slug`'s entry (the mini registry's one calculator)."""
    text = _shipped("formulas/policy/recorded_before_signing.yaml")
    header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))
    entry = text[text.index(f"\n{slug}:\n") + 1:]
    return header + entry[: next((i for i in range(1, len(entry)) if entry[i - 1] == "\n" and entry[i].isalpha()),
                                 len(entry))]


@FUZZ
@given(seal=_mutated(_seal_of(SLUG)), record=st.none() | _json_values())
def test_a_hostile_seal_or_seal_record_is_a_problem(seal: str, record: Any) -> None:
    with _mini_registry() as root:
        (root / "formulas" / "policy").mkdir()
        (root / "formulas" / "policy" / "recorded_before_signing.yaml").write_text(seal, encoding="utf-8")
        if record is not None:
            lock = root / "formulas" / "REGISTRY.lock"
            data = json.loads(lock.read_text(encoding="utf-8"))
            data["sealed_before_signing"] = record
            lock.write_text(json.dumps(data), encoding="utf-8")
        found = _validates(root)
        if record is not None and not (isinstance(record, dict) and {"digest", "date"} <= set(record)):
            assert found  # a seal record that fixes nothing is never a pass


_LINKED = [f"formulas/{SLUG}.yaml", "formulas/units.yaml", "formulas/REGISTRY.lock",
           f"formulas/history/{SLUG}/1.0.1.yaml", "guidelines/acc-aha-2013-cardiovascular-risk.yaml",
           "formulas/policy/allowed_signers", "formulas/policy/governance.yaml",
           "formulas/policy/recorded_before_signing.yaml", "formulas/history/linked", "guidelines/new.yaml"]


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(where=st.sampled_from(_LINKED), target=st.sampled_from(["/proc/self/mem", "/dev/zero", "/dev/null", "outside",
                                                               "missing", "self", "folder", "fifo"]))
def test_a_symbolic_link_or_special_file_anywhere_is_named_and_never_read(where: str, target: str) -> None:
    import os

    with _mini_registry() as root:
        path = root / where
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        outside = root.parent / f"{root.name}-outside.yaml"
        outside.write_text("secret-outside-the-registry: 1\n", encoding="utf-8")
        try:
            if target == "fifo":
                os.mkfifo(path)
            else:
                dest = {"outside": outside, "missing": root / "nowhere", "self": path, "folder": root.parent}
                path.symlink_to(dest.get(target, Path(target)))
            found = _validates(root)  # no exception, no hang (a FIFO is never opened for reading)
        finally:
            outside.unlink()
        assert any(p.startswith(where + ":") and ("symbolic link" in p or "not a regular file" in p) for p in found), \
            found
        assert not any("secret-outside-the-registry" in p for p in found)
