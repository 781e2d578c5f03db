"""registry.clock: one "today" for every governance command, fixed by $FORMULA_TODAY when set."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from registry import clock
from registry.cliutil import CommandError
from tests.registry.helpers import SODIUM, copy_registry, formula


def test_unset_is_the_calendar_and_set_is_that_day(monkeypatch) -> None:
    monkeypatch.delenv(clock.ENV, raising=False)
    assert clock.today() == dt.date.today()
    monkeypatch.setenv(clock.ENV, " 2031-02-28 ")
    assert clock.today() == dt.date(2031, 2, 28)


@pytest.mark.parametrize("raw", ["2031-02-30", "tomorrow", "28/02/2031"])
def test_a_bad_date_is_a_clear_error(monkeypatch, raw: str) -> None:
    monkeypatch.setenv(clock.ENV, raw)
    with pytest.raises(CommandError, match=r"\$FORMULA_TODAY must be a date YYYY-MM-DD.*" + raw):
        clock.today()


def test_commands_read_the_fixed_day(capsys, tmp_path, monkeypatch) -> None:
    root = copy_registry(tmp_path)
    monkeypatch.setenv(clock.ENV, "2040-01-01")  # every review is long overdue by then
    code, out, _ = formula(capsys, root, "due", "--format", "json")
    assert code == 0 and SODIUM in {r["slug"] for r in json.loads(out)}
    monkeypatch.setenv(clock.ENV, "someday")
    code, out, err = formula(capsys, root, "due")
    assert (code, out) == (1, "") and "error: $FORMULA_TODAY must be a date" in err and "Traceback" not in err


def test_a_clock_behind_the_last_release_refuses_a_fix_clearly(capsys, tmp_path, monkeypatch) -> None:
    root = copy_registry(tmp_path)
    monkeypatch.setenv(clock.ENV, "2020-01-01")
    code, out, err = formula(capsys, root, "fix", SODIUM, "--set", "correction_per_mg_dl_glucose=0.016",
                             "--reason", "Katz 1973 factor")
    assert code == 1 and "--date 2020-01-01 is before" in err and "effective date" in err
