"""The spelling tables are registry data that `formula validate` checks: an alias or code that one input would
read two ways is refused (R-SPELLING) with both readings, so it never reaches a reading."""
from __future__ import annotations

from pathlib import Path

import pytest

from registry.loader import get_registry, load
from registry.schema import Input, InputKind
from registry.spellings import problems, read_unit, spellings_of
from registry.validate import validate
from tests.helpers import copy_registry, edit

CG = "creatinine-clearance-cockcroft-gault"


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    return copy_registry(tmp_path)


def _spelling_problems(root: Path) -> list[str]:
    reg = load(root)
    validate(reg)
    return [str(p) for p in reg.problems if p.code == "R-SPELLING"]


def test_the_shipped_tables_read_every_spelling_one_way() -> None:
    reg = get_registry()
    assert reg.units is not None
    assert [(c.slug, p) for c in reg.calculators.values() for p in problems(reg.units, c.inputs)] == []


def test_an_alias_table_with_one_spelling_for_two_units_is_refused(root: Path) -> None:
    edit(root / "formulas" / "units.yaml", "    lb: lbs\n", "    lb: lbs\n    LB: kg\n")
    found = _spelling_problems(root)
    assert any("formulas/units.yaml" in p and "unit alias 'lb' reads as 'lbs' and 'kg'" in p for p in found), found


def test_a_code_that_reads_as_another_option_too_is_refused(root: Path) -> None:
    edit(root / "formulas" / f"{CG}.yaml", "  options: [Male, Female]\n",
         "  options: [Male, Female]\n  codes: {m: Female}\n")
    found = _spelling_problems(root)
    assert any(f"{CG}.yaml" in p and "'M' could mean 'Female' or 'Male'" in p for p in found), found


def test_a_code_for_an_option_the_input_lacks_is_a_schema_error() -> None:
    with pytest.raises(ValueError, match="codes must read as options of the input; not options: 'Other'"):
        Input(name="sex", kind=InputKind.choice, options=["Male", "Female"], codes={"O": "Other"})


def test_case_alone_never_makes_two_readings_of_one_unit() -> None:
    reg = get_registry()
    assert reg.units is not None  # 'mm Hg' and 'mm hg' are both accepted: one unit, read as the first
    assert read_unit(reg.units, "MM HG", ["mm Hg", "mm hg"]) == "mm Hg"
    assert read_unit(reg.units, "MCG/KG/MIN", ["mcg/kg/min", "µg/kg/min"]) == "mcg/kg/min"


def test_each_input_lists_the_spellings_it_reads() -> None:
    reg = get_registry()
    assert reg.units is not None
    sex, weight = (next(i for i in reg.get(2).inputs if i.name == n) for n in ("sex", "weight"))
    assert spellings_of(reg.units, sex) == ["M -> Male", "F -> Female"]
    assert "lb -> lbs" in spellings_of(reg.units, weight)
