"""No traceback from an importer: whatever a hostile log holds, `formula import` fails with a clear message
naming the file, writes nothing, and a 9 kB archive that inflates to 60 MB of `[{},...]` costs little memory.

Generated variants: nesting depths, integers past Python's digit limit in every field an importer reads,
duplicate keys and NaN in rows, zip archives whose central directory lies (sizes, offsets, counts, checksums),
too many members."""
from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path

import pytest

from solver.importers import ImportFailure
from solver.importers.run import import_run, read_sources
from tests.hostile.helpers import formula
from tests.hostile.memory import LIMIT_MB, grown_mb
from tests.solver.importers_helpers import line, zstd_zip

DATA = Path(__file__).resolve().parents[1] / "solver" / "data"
GOOD = line(1, 2, "25.9", answer="25.9")
HEADER = json.loads((DATA / "inspect_medcalc.json").read_text(encoding="utf-8"))
HEADER = {k: v for k, v in HEADER.items() if k != "samples"}
SAMPLE = json.loads((DATA / "inspect_medcalc.json").read_text(encoding="utf-8"))["samples"][0]


def _refused(fmt: str, path: Path, out: Path, match: str = "") -> ImportFailure:
    with pytest.raises(ImportFailure) as e:
        import_run(fmt, [path], out, dataset="medcalc-bench-2024")
    assert str(path) in str(e.value) and match in str(e.value), e.value
    assert not out.exists()  # nothing written on refusal
    return e.value


@pytest.mark.parametrize("depth", [200, 5_000, 200_000])
@pytest.mark.parametrize("field", ["LLM Answer", "Ground Truth Answer", "Row Number", "LLM Chat History"])
def test_deep_nesting_in_any_field_is_a_failure_naming_the_file(tmp_path: Path, depth: int, field: str) -> None:
    row = json.dumps({**GOOD, field: 0})
    text = row.replace(f'"{field}": 0', f'"{field}": ' + "[" * depth + "]" * depth)
    path = tmp_path / "deep.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    _refused("medcalc-bench", path, tmp_path / "out")


@pytest.mark.parametrize("digits", [4_301, 10_000, 100_000])
@pytest.mark.parametrize("field", ["Row Number", "Calculator ID", "LLM Answer", "Ground Truth Answer"])
def test_integers_past_the_digit_limit_are_a_failure_naming_the_file(tmp_path: Path, digits: int, field: str) -> None:
    text = json.dumps({**GOOD, field: 0}).replace(f'"{field}": 0', f'"{field}": ' + "7" * digits)
    path = tmp_path / "big.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    _refused("medcalc-bench", path, tmp_path / "out")


@pytest.mark.parametrize("text, why", [
    ('{"Row Number": 1, "Row Number": 2}', "duplicate key 'Row Number'"),
    ('{"Result": "Correct", "Result": "Incorrect"}', "duplicate key 'Result'"),
    ('{"LLM Answer": NaN}', "NaN"), ('{"Ground Truth Answer": Infinity}', "Infinity"),
    ('{"Lower Limit": -Infinity}', "-Infinity"),
])
def test_duplicate_keys_and_nan_in_a_row_are_refused(tmp_path: Path, text: str, why: str) -> None:
    row = json.dumps(GOOD)[:-1] + ", " + text[1:]
    path = tmp_path / "dup.jsonl"
    path.write_text(row + "\n", encoding="utf-8")
    _refused("medcalc-bench", path, tmp_path / "out", why)


def _archive(path: Path, samples: int = 1) -> Path:
    members = [("header.json", json.dumps(HEADER).encode())]
    members += [(f"samples/{i}_epoch_1.json", json.dumps({**SAMPLE, "id": i}).encode()) for i in range(samples)]
    return zstd_zip(path, members)


def _lie(path: Path, offset: int, fmt: str, value: int) -> None:
    """Overwrite one field of the end of central directory record (the last 22 bytes of the archive)."""
    blob = bytearray(path.read_bytes())
    end = blob.rfind(b"PK\x05\x06")
    struct.pack_into(fmt, blob, end + offset, value)
    path.write_bytes(bytes(blob))


LIES = {  # (offset in the end record, struct format, value)
    "entries on this disk": (8, "<H", 0xFFFE), "entries in all": (10, "<H", 0xFFFE),
    "directory size, huge": (12, "<L", 0xFFFFFFF0), "directory size, short": (12, "<L", 3),
    "directory offset, past the end": (16, "<L", 0xFFFFFF00), "directory offset, zero": (16, "<L", 0),
    "comment length": (20, "<H", 0xFFFF),
}


@pytest.mark.parametrize("lie", list(LIES))
def test_an_end_record_that_lies_is_a_failure_naming_the_file(tmp_path: Path, lie: str) -> None:
    path = _archive(tmp_path / "log.eval", samples=3)
    _lie(path, *LIES[lie])
    try:
        read_sources("inspect-ai", [path], "medcalc-bench-2024")
    except ImportFailure as e:
        assert str(path) in str(e)


@pytest.mark.parametrize("field, value", [
    (20, 0xFFFFFFFF),  # compressed size
    (24, 0xFFFFFFFF),  # uncompressed size
    (24, 1),
    (42, 0xFFFFFF00),  # local header offset
    (16, 0),  # CRC-32
    (28, 0xFFFF),  # name length
])
def test_a_central_entry_that_lies_is_a_failure_naming_the_file(tmp_path: Path, field: int, value: int) -> None:
    path = _archive(tmp_path / "log.eval", samples=2)
    blob = bytearray(path.read_bytes())
    entry = blob.rfind(b"PK\x01\x02")  # the last sample's entry
    struct.pack_into("<H" if field == 28 else "<L", blob, entry + field, value)
    path.write_bytes(bytes(blob))
    try:
        read_sources("inspect-ai", [path], "medcalc-bench-2024")
    except ImportFailure as e:
        assert str(path) in str(e)


@pytest.mark.parametrize("members", [3, 40])
def test_too_many_members_is_refused_before_any_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        members: int) -> None:
    from solver.importers import zipread

    monkeypatch.setattr(zipread, "MAX_MEMBERS", 2)
    path = _archive(tmp_path / "log.eval", samples=members)
    _refused("inspect-ai", path, tmp_path / "out", "members")


def test_a_directory_over_its_cap_is_refused_before_zipfile_reads_it(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from solver.importers import zipread

    monkeypatch.setattr(zipread, "MAX_DIRECTORY", 100)
    _refused("inspect-ai", _archive(tmp_path / "log.eval", samples=4), tmp_path / "out", "central directory")


@pytest.mark.parametrize("item", [b"{}", b"[]", b"0", b'{"a":[]}'])
def test_a_small_archive_that_inflates_to_60_mb_of_containers_costs_little(tmp_path: Path, item: bytes) -> None:
    count = 60_000_000 // (len(item) + 1)
    payload = b'{"id": 1, "x": [' + b",".join([item] * count) + b"]}"
    path = zstd_zip(tmp_path / "bomb.eval", [("header.json", json.dumps(HEADER).encode()),
                                             ("samples/1_epoch_1.json", payload)])
    del payload
    assert path.stat().st_size < 100_000
    out = grown_mb("from pathlib import Path\nfrom solver.importers.run import read_sources",
                   f"read_sources('inspect-ai', [Path({str(path)!r})], 'medcalc-bench-2024')")
    assert out["grown_mb"] < LIMIT_MB, out
    assert out["error"]["type"] == "ImportFailure" and str(path) in out["error"]["message"], out


def test_the_command_says_which_file_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text('{"Row Number": ' + "[" * 100_000 + "\n", encoding="utf-8")
    run = formula(None, "import", "medcalc-bench", str(path), "--out", str(tmp_path / "out"), "--dataset",
                  "medcalc-bench-2024")
    assert run.returncode == 1 and "Traceback" not in run.stderr and str(path) in run.stderr, run.stderr
    assert not (tmp_path / "out").exists()


def test_a_plain_zip_whose_member_lies_about_its_size(tmp_path: Path) -> None:
    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", json.dumps(HEADER))
        z.writestr("samples/1_epoch_1.json", json.dumps(SAMPLE) * 50)
    blob = bytearray(path.read_bytes())
    entry = blob.rfind(b"PK\x01\x02")
    struct.pack_into("<L", blob, entry + 24, 10)  # declares 10 bytes uncompressed
    path.write_bytes(bytes(blob))
    _refused("inspect-ai", path, tmp_path / "out")


_JSON_LOG = '''
import tempfile
from pathlib import Path
path = Path(tempfile.mkdtemp()) / "log.json"
with open(path, "wb") as f:  # a 60 MB inspect_ai .json log, written a block at a time
    f.write(b'{{"eval": {{"task": "t", "dataset": {{"name": "medcalc-bench"}}}}, "samples": [')
    for _ in range({n} // 1000):
        f.write(({item!r} + b",") * 1000)
    f.write({item!r} + b"]}}")
from solver.importers.run import read_sources
'''
JSON_LOG_ITEMS = [b"{}", b"[]", b'"ab"', b'"' + b"x" * 30 + b'"', b'"' + b"x" * 1000 + b'"', b'{"a":"bc"}', b"0"]


@pytest.mark.parametrize("item", JSON_LOG_ITEMS, ids=[f"{len(i)} bytes" for i in JSON_LOG_ITEMS])
def test_a_60_mb_json_log_of_any_shape_costs_under_256_mb(item: bytes) -> None:
    n = 60_000_000 // (len(item) + 1)
    out = grown_mb(_JSON_LOG.format(item=item, n=n), "read_sources('inspect-ai', [path], 'medcalc-bench-2024')")
    assert out["grown_mb"] < LIMIT_MB, out
    assert out["error"]["type"] == "ImportFailure" and "log.json" in out["error"]["message"], out
