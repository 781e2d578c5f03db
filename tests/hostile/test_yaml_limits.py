"""Loading a registry file is bounded: an alias bomb or an oversized file is refused fast, with a
problem naming the file, by the registry reader (PyYAML) and the round-trip editor (ruamel.yaml)."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from registry.yamlio import YamlError, load_file, load_text, rt_load
from tests.hostile.helpers import formula, hostile_copy, problems

SLUG = "body-mass-index"
MAX_BYTES = 2_000_000  # the documented cap (registry/yamlio.py)


def billion_laughs(levels: int = 9, width: int = 10, name: str = "l") -> str:
    """The classic: each level a list of `width` aliases of the level below (width**levels strings)."""
    lines = ["slug: body-mass-index", f"{name}0: &{name}0 [\"lol\"]"]
    for n in range(1, levels + 1):
        lines.append(f"{name}{n}: &{name}{n} [" + ", ".join([f"*{name}{n - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def mapping_bomb(levels: int = 12) -> str:
    """The same with mappings and merge keys: every level merges and nests the one below twice."""
    lines = ["m0: &m0 {a: lol, b: lol}"]
    for n in range(1, levels + 1):
        lines.append(f"m{n}: &m{n} {{x: *m{n - 1}, y: *m{n - 1}, z: [*m{n - 1}, *m{n - 1}]}}")
    return "\n".join(lines) + "\n"


BOMBS = {"lists": billion_laughs(), "mappings": mapping_bomb(),
         "3 kB": billion_laughs(levels=9, width=30, name="laughs")}


@pytest.mark.parametrize("name", list(BOMBS))
def test_a_bomb_is_refused_fast_by_the_reader(name: str) -> None:
    text = BOMBS[name]
    assert len(text) <= 3100
    start = time.perf_counter()
    with pytest.raises(YamlError, match="aliases .* would expand") as e:
        load_text(text, "formulas/bomb.yaml")
    assert time.perf_counter() - start < 0.5
    assert e.value.path == "formulas/bomb.yaml"


@pytest.mark.parametrize("name", list(BOMBS))
def test_a_bomb_is_refused_fast_by_the_round_trip_editor(tmp_path: Path, name: str) -> None:
    p = tmp_path / "bomb.yaml"
    p.write_text(BOMBS[name], encoding="utf-8")
    start = time.perf_counter()
    with pytest.raises(YamlError, match="would expand"):
        rt_load(p)
    assert time.perf_counter() - start < 0.5


BOMBED = ["formulas/body-mass-index.yaml", "guidelines/sepsis-3-2016.yaml", "formulas/units.yaml"]


def test_validate_names_each_bombed_file_and_finishes(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    for where in BOMBED:
        (root / where).write_text(BOMBS["3 kB"], encoding="utf-8")
    start = time.monotonic()
    proc = formula(root, "validate", timeout=60, memory_mb=2048)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for where in BOMBED:
        assert f"{where}:1: (file): its aliases" in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stderr
    assert time.monotonic() - start < 30


def test_a_bombed_snapshot_is_reported_as_unreadable(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    snap = next((root / "formulas" / "history" / SLUG).glob("*.yaml"))
    snap.write_text(mapping_bomb(levels=8), encoding="utf-8")  # small enough not to hurt a reader without bounds
    found = problems(root)
    assert any(code == "R-SNAPSHOT" and "would expand" in msg for _, code, msg in found), found


def test_an_oversized_file_is_refused_unread(tmp_path: Path) -> None:
    p = tmp_path / "big.yaml"
    p.write_text("slug: big\n# " + "x" * (MAX_BYTES + 10) + "\n", encoding="utf-8")
    with pytest.raises(YamlError, match="larger than"):
        load_file(p)
    with pytest.raises(YamlError, match="larger than"):
        rt_load(p)
    with pytest.raises(YamlError, match="larger than"):
        load_text(p.read_text(encoding="utf-8"), p)


def test_a_device_posing_as_a_registry_file_is_refused(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    (root / "formulas" / "zero.yaml").symlink_to("/dev/zero")
    proc = formula(root, "validate", timeout=60, memory_mb=2048)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert "formulas/zero.yaml:1: (file): is a symbolic link" in proc.stdout, proc.stdout  # refused unopened


def test_ordinary_registry_files_still_load() -> None:
    assert load_text("a: &x 1\nb: *x\nc: [1, 2]\n") == {"a": 1, "b": 1, "c": [1, 2]}


BIG = "9" * 4301  # one digit past Python's limit on reading an integer from text


@pytest.mark.parametrize("where,old", [
    ("formulas/creatinine-clearance-cockcroft-gault.yaml", "medcalc_id: 2\n"),
    ("formulas/body-mass-index.yaml", "medcalc_id: 6\n"),
    ("guidelines/sepsis-3-2016.yaml", None),
    ("formulas/units.yaml", None),
])
def test_an_integer_too_long_to_read_is_a_problem_at_its_line(tmp_path: Path, where: str, old: str | None) -> None:
    root = hostile_copy(tmp_path)
    path = root / where
    text = path.read_text(encoding="utf-8")
    if old is not None:
        assert old in text
        text = text.replace(old, f"medcalc_id: {BIG}\n", 1)
        line = text[:text.index(BIG)].count("\n") + 1
    else:
        text += f"extra_number: {BIG}\n"
        line = text.count("\n")
    path.write_text(text, encoding="utf-8")
    proc = formula(root, "validate", timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "ValueError" not in proc.stderr, proc.stderr
    assert f"{where}:{line}: (file): cannot read this integer" in proc.stdout, proc.stdout


def test_a_constant_too_long_to_read_is_a_problem_in_every_reader(tmp_path: Path) -> None:
    root = hostile_copy(tmp_path)
    path = root / "formulas" / "creatinine-clearance-cockcroft-gault.yaml"
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    n = next(i for i, ln in enumerate(lines) if ln.strip() == "female_factor:")
    k = next(i for i in range(n, len(lines)) if lines[i].strip().startswith("value:"))
    lines[k] = lines[k].split("value:")[0] + f"value: {BIG}\n"
    path.write_text("".join(lines), encoding="utf-8")
    for read in (load_file, rt_load):
        with pytest.raises(YamlError, match="cannot read this integer") as e:
            read(path)
        assert e.value.line == k + 1
    found = problems(root)
    assert any(p.endswith("creatinine-clearance-cockcroft-gault.yaml") and "cannot read this integer" in m
               for p, _, m in found), found
    for bad, what in (("!!int 0xZZ", "integer"), ("!!float nope", "number")):
        with pytest.raises(YamlError, match=f"cannot read this {what}"):
            load_text(f"a: 1\nb: {bad}\n", "x.yaml")
