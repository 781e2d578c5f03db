"""Small MedCalc-Bench output files for the importer tests (invented cases; the note is a marker that must
never reach an imported run)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

NOTE = "PLACEHOLDER-NOTE-7f3c: an invented patient note that must never be copied."


def line(row: int, calc: int, gold: str, answer: Any = None, result: str | None = "Correct", **extra: Any
         ) -> dict[str, Any]:
    """One line as MedCalc-Bench's run.py writes it (direct-answer shape unless `extra` says otherwise)."""
    out: dict[str, Any] = {"Row Number": row, "Calculator Name": f"calculator {calc}", "Calculator ID": str(calc),
                           "Note ID": f"note-{row}", "Patient Note": NOTE, "Question": "What is the value?",
                           "LLM Explanation": "N/A", "Ground Truth Answer": gold,
                           "Ground Truth Explanation": "invented"}
    if answer is not None:
        out["LLM Answer"] = answer
    if result is not None:
        out["Result"] = result
    out.update(extra)
    return {k: v for k, v in out.items() if v is not None}


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def results(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def zstd_zip(path: Path, members: Iterable[tuple[str, bytes]], *, declare: dict[str, int] | None = None,
             crc: dict[str, int] | None = None) -> Path:
    """A zip archive whose members are zstd-compressed (method 93), as inspect_ai writes `.eval` logs; written
    here byte by byte (APPNOTE 4.3), since Python's zipfile writes zstd only from 3.14 on. `declare` and `crc`
    make a member lie about its uncompressed size or checksum (a damaged archive, a zip bomb)."""
    import struct
    import zlib

    import zstandard

    declare, crc = declare or {}, crc or {}
    central, offset, count = bytearray(), 0, 0
    packer = zstandard.ZstdCompressor(level=3)
    with open(path, "wb") as f:
        for name, data in members:
            raw_name, packed = name.encode(), packer.compress(data)
            check, size = crc.get(name, zlib.crc32(data)), declare.get(name, len(data))
            f.write(struct.pack("<4s2B4HL2L2H", b"PK\x03\x04", 63, 0, 0, 93, 0, 0x21, check, len(packed), size,
                                len(raw_name), 0) + raw_name + packed)
            central += struct.pack("<4s4B4HL2L5H2L", b"PK\x01\x02", 63, 3, 63, 0, 0, 93, 0, 0x21, check,
                                   len(packed), size, len(raw_name), 0, 0, 0, 0, 0, offset) + raw_name
            offset += 30 + len(raw_name) + len(packed)
            count += 1
        f.write(central + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(central), offset, 0))
    return path
