"""Every validation rule, each on a broken copy of the real registry, asserting the specific message."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cli.main import main
from registry.loader import load
from registry.validate import validate
from tests.helpers import SHIPPED_ROOT

CG = "creatinine-clearance-cockcroft-gault"


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    for d in ("formulas", "guidelines"):
        shutil.copytree(SHIPPED_ROOT / d, tmp_path / d)
    return tmp_path


def problems(root: Path) -> list[str]:
    reg = load(root)
    validate(reg)
    return [str(p) for p in reg.problems]


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def only(root: Path, pattern: str) -> str:
    found = problems(root)
    assert len(found) == 1, found
    assert re.search(pattern, found[0]), found[0]
    return found[0]


def test_clean_registry_validates(capsys: pytest.CaptureFixture[str]) -> None:
    assert problems(SHIPPED_ROOT) == []
    assert main(["validate"]) == 0
    out = capsys.readouterr().out
    first, rest = out.split("\n", 1)
    assert first == f"registry: {SHIPPED_ROOT} (from $FORMULA_REGISTRY_ROOT)"  # which registry, as git names it
    assert rest.startswith("registry OK: ")
    assert len(out.strip().splitlines()) == 2
    reg = load(SHIPPED_ROOT)
    n = len(reg.calculators)
    bench = sum(1 for c in reg.calculators.values() if c.medcalc_id is not None)
    assert bench == 55  # the benchmark's calculators; successors come on top
    assert f"registry OK: {n} calculators ({bench} benchmark, {n - bench} successor)" in out


def test_malformed_yaml(root: Path) -> None:
    (root / "formulas" / f"{CG}.yaml").write_text("slug: [unclosed\n", encoding="utf-8")
    msg = only(root, r"malformed YAML")
    assert msg.startswith(f"formulas/{CG}.yaml:2: (file): ")


def test_duplicate_key(root: Path) -> None:
    p = root / "formulas" / f"{CG}.yaml"
    edit(p, "category: lab test\n", "category: lab test\ncategory: physical\n")
    msg = only(root, r"duplicate key 'category' \(first at line \d+\)")
    assert msg.startswith(f"formulas/{CG}.yaml:5: (file): ")


def test_unknown_field(root: Path) -> None:
    edit(root / "formulas" / f"{CG}.yaml", "intended_use: dosing\n", "intended_use: dosing\nintendeduse: dosing\n")
    only(root, rf"^formulas/{CG}.yaml:\d+: intendeduse: unknown field")


def test_wrong_type(root: Path) -> None:
    edit(root / "formulas" / f"{CG}.yaml", "medcalc_id: 2\n", "medcalc_id: two\n")
    only(root, rf"^formulas/{CG}.yaml:2: medcalc_id: Input should be a valid integer")


def test_missing_field(root: Path) -> None:
    edit(root / "formulas" / f"{CG}.yaml", "category: lab test\n", "")
    only(root, rf"^formulas/{CG}.yaml:\d+: category: required field is missing")


def test_bad_enum_value_names_the_field_and_line(root: Path) -> None:
    p = root / "formulas" / f"{CG}.yaml"
    text = p.read_text(encoding="utf-8")
    line = text[: text.index("kind: age")].count("\n") + 1
    edit(p, "kind: age", "kind: ages")
    msg = only(root, r"inputs\[1\]\.kind: Input should be")
    assert msg.startswith(f"formulas/{CG}.yaml:{line}:")


def test_impossible_date(root: Path) -> None:
    edit(root / "formulas" / f"{CG}.yaml", "effective: 2026-11-30", "effective: 2026-13-01")
    only(root, r"versions\[0\]\.effective: Input should be a valid date")


def test_slug_must_match_file_name(root: Path) -> None:
    edit(root / "formulas" / "body-mass-index.yaml", "slug: body-mass-index", "slug: bmi")
    found = problems(root)
    assert any(re.search(r"slug: slug 'bmi' must match the file name 'body-mass-index'", f) for f in found), found


def test_duplicate_slug(root: Path) -> None:
    src = root / "formulas" / "body-mass-index.yaml"
    dup = root / "formulas" / "zz-copy.yaml"
    shutil.copy(src, dup)
    edit(dup, "medcalc_id: 6", "medcalc_id: 999")
    found = problems(root)
    assert any("duplicate slug 'body-mass-index' (also in formulas/body-mass-index.yaml)" in f for f in found), found


def test_duplicate_benchmark_id(root: Path) -> None:
    edit(root / "formulas" / "body-mass-index.yaml", "medcalc_id: 6", "medcalc_id: 10")
    found = problems(root)
    assert any(re.search(r"medcalc_id: duplicate benchmark id 10 \(also (ideal-body-weight|body-mass-index)\)", f)
               for f in found), found


def test_unknown_guideline(root: Path) -> None:
    edit(root / "formulas" / f"{CG}.yaml", "- guideline: nkf-asn-2021-race-free-egfr", "- guideline: no-such-guideline")
    found = problems(root)
    assert any("provenance[0].guideline: unknown guideline 'no-such-guideline'" in f for f in found), found


def test_unknown_dependency(root: Path) -> None:
    edit(root / "formulas" / "adjusted-body-weight.yaml", "depends_on: [ideal-body-weight]", "depends_on: [ideal-weight]")
    found = problems(root)
    assert any("depends_on[0]: unknown calculator 'ideal-weight'" in f for f in found), found


def test_unknown_successor(root: Path) -> None:
    edit(root / "formulas" / "body-mass-index.yaml", "literature_audit:", "replacements:\n- {successor: "
         "no-such-calc, name: X, jurisdiction: US, since: '2020'}\nliterature_audit:")
    found = problems(root)
    assert any("replacements[0].successor: unknown successor calculator 'no-such-calc'" in f for f in found), found


def test_dependency_cycle(root: Path) -> None:
    edit(root / "formulas" / "ideal-body-weight.yaml", "depends_on: []", "depends_on: [adjusted-body-weight]")
    found = problems(root)
    assert any(re.search(r"dependency cycle: (adjusted-body-weight -> ideal-body-weight -> adjusted-body-weight|"
                         r"ideal-body-weight -> adjusted-body-weight -> ideal-body-weight)", f) for f in found), found


@pytest.mark.parametrize("status, expect", [("superseded", "found 0"), ("draft", "found 0")])
def test_no_active_version(root: Path, status: str, expect: str) -> None:
    edit(root / "formulas" / "body-mass-index.yaml", "status: active", f"status: {status}")
    found = problems(root)
    assert any(f"versions: exactly one version must be active, {expect}" in f for f in found), found


def test_two_active_versions(root: Path) -> None:
    p = root / "formulas" / "body-mass-index.yaml"
    text = p.read_text(encoding="utf-8")
    block = text[text.index("versions:\n"):text.index("literature_audit:")]
    item = block[len("versions:\n"):]
    second = item.replace("1.0.0", "1.1.0", 1)
    p.write_text(text.replace(block, block + second), encoding="utf-8")
    found = problems(root)
    assert any("exactly one version must be active, found 2" in f for f in found), found


def test_versions_ascend(root: Path) -> None:
    p = root / "formulas" / "body-mass-index.yaml"
    text = p.read_text(encoding="utf-8")
    block = text[text.index("versions:\n"):text.index("literature_audit:")]
    item = block[len("versions:\n"):]
    older = item.replace("1.0.0", "0.9.0", 1).replace("status: active", "status: draft", 1)
    p.write_text(text.replace(block, block + older), encoding="utf-8")
    found = problems(root)
    assert any(re.search(r"versions must ascend, newest last: 0\.9\.0 follows \d+\.\d+\.\d+", f) for f in found), found


def test_released_version_is_immutable(root: Path) -> None:
    edit(root / "formulas" / "ideal-body-weight.yaml", "value: 2.3", "value: 2.4")
    found = problems(root)
    own = [f for f in found if f.endswith("[R-LOCK-CHANGED]")]
    assert len(own) == 1, found
    assert re.search(r"released version \d+\.\d+\.\d+ changed without a new version: run `formula release "
                     r"ideal-body-weight", own[0])
    assert own[0].startswith("formulas/ideal-body-weight.yaml:")
    # the rest is the consequence: its dependants, and the rendered texts that state its numbers
    assert {f.rsplit(" ", 1)[1] for f in found} == {"[R-LOCK-CHANGED]", "[R-LOCK-DEPENDENCY]", "[R-CATALOGUE]"}


def test_unlocked_active_version(root: Path) -> None:
    lock = root / "formulas" / "REGISTRY.lock"
    text = lock.read_text(encoding="utf-8")
    lock.write_text(re.sub(r'"body-mass-index": \{[^}]*\},?\n\s*', "", text), encoding="utf-8")
    found = problems(root)
    assert any(re.search(r"active version [\d.]+ is not in REGISTRY.lock: run `formula lock`", f) for f in found), found


def test_unknown_analyte(root: Path) -> None:
    edit(root / "formulas" / f"{CG}.yaml", "analyte: creatinine", "analyte: kreatinin")
    found = problems(root)
    assert any("analyte: unknown analyte 'kreatinin'" in f for f in found), found


def test_duplicate_input(root: Path) -> None:
    p = root / "formulas" / "body-mass-index.yaml"
    edit(p, "- name: height\n", "- name: weight\n")
    found = problems(root)
    assert any("inputs[1].name: duplicate input 'weight'" in f for f in found), found


def test_cli_prints_problems_one_a_line_and_exits_1(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(root / "formulas" / f"{CG}.yaml", "medcalc_id: 2\n", "medcalc_id: two\n")
    edit(root / "formulas" / "body-mass-index.yaml", "category: physical\n", "category: physical\ncategory: x\n")
    assert main(["validate", "--root", str(root)]) == 1
    first, *out = capsys.readouterr().out.strip().splitlines()
    assert first == f"registry: {root} (given by --root)"
    assert len(out) == 2
    assert all(re.match(r"^formulas/[a-z0-9-]+\.yaml:\d+: [^:]+: .+", line) for line in out), out


def test_missing_root_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--root", str(tmp_path)]) == 1
    assert f"no formulas/ folder in {tmp_path} (given by --root); run inside a registry, or pass --root DIR" in \
        capsys.readouterr().out


def test_shared_unit_data_is_part_of_released_content(root: Path) -> None:
    edit(root / "formulas" / "units.yaml", "creatinine: {molar_mass: 113.12}", "creatinine: {molar_mass: 113.0}")
    found = problems(root)
    assert any(f.startswith(f"formulas/{CG}.yaml:") and "changed without a new version" in f for f in found), found
    assert not any(f.startswith("formulas/body-mass-index.yaml:") for f in found), found


def test_bad_guideline_file(root: Path) -> None:
    g = root / "guidelines" / "sepsis-3-2016.yaml"
    edit(g, "year: 2016", "year: sixteen")
    found = problems(root)
    assert any(re.match(r"guidelines/sepsis-3-2016\.yaml:\d+: year: Input should be a valid integer", f)
               for f in found), found


def test_invented_identifier_shape_is_refused(root: Path) -> None:
    g = root / "guidelines" / "sepsis-3-2016.yaml"
    text = g.read_text(encoding="utf-8")
    assert "doi: " in text
    g.write_text(re.sub(r"doi: \S+", "doi: not-a-doi", text, count=1), encoding="utf-8")
    found = problems(root)
    assert any("doi: String should match pattern" in f for f in found), found


def test_broken_text_template(root: Path) -> None:
    p = root / "formulas" / "body-mass-index.yaml"
    text = p.read_text(encoding="utf-8")  # break the active text, the last one in the file
    head, tail = text.rsplit('{{ i["weight"] }}', 1)
    p.write_text(head + '{{ i["weight"] }} {{ c.no_such_constant }}' + tail, encoding="utf-8")
    found = problems(root)
    assert any(re.search(r"versions\[\d+\]\.text:", f) and "no_such_constant" in f for f in found), found
