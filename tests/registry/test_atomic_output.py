"""registry.atomic.atomic_output (a file name for pandas and pyarrow to write): the file gets the mode a new file
gets (or the replaced file's), as `atomic_write`'s do, and a block that raises leaves the old file and no
temporary file behind."""
from __future__ import annotations

import os
import stat

import pytest

from registry.atomic import atomic_output, atomic_write


def _mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_a_new_output_gets_the_mode_of_a_new_file_and_a_replaced_one_keeps_its_own(tmp_path) -> None:
    mask = os.umask(0o022)
    try:
        out, ref = tmp_path / "out.parquet", tmp_path / "ref.txt"
        with atomic_output(out) as tmp:
            assert tmp.parent == tmp_path and tmp.suffix == ".parquet" and tmp != out
            tmp.write_bytes(b"one")
        atomic_write(ref, "one")
        assert out.read_bytes() == b"one" and _mode(out) == _mode(ref) == 0o644  # (mkstemp alone gives 0o600)
        os.chmod(out, 0o640)
        with atomic_output(out) as tmp:
            tmp.write_bytes(b"two")
        assert out.read_bytes() == b"two" and _mode(out) == 0o640
    finally:
        os.umask(mask)


def test_a_block_that_raises_leaves_the_old_file_and_no_temporary_one(tmp_path) -> None:
    out = tmp_path / "out.csv"
    out.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_output(out) as tmp:
            tmp.write_text("half")
            raise RuntimeError("the writer failed")
    assert out.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]
