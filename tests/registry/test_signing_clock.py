"""A decision is signed on a day that has come (issue 49, item 10): $FORMULA_TODAY replays a past day, it never signs
one after the machine's clock; nothing is written on refusal."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from registry import clock
from tests.helpers import copy_registry, run, solo

CALCIUM = "calcium-correction"
GENUINE = clock.real_today  # read at import, before tests/conftest.py lets the clock reach the fixed day


@pytest.mark.parametrize("ahead", [1, 40, 3650])
def test_a_decision_dated_after_the_real_clock_is_refused(ahead: int, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_registry(tmp_path)
    solo(root, monkeypatch)
    monkeypatch.setattr(clock, "real_today", GENUINE)
    day = clock.real_today() + dt.timedelta(days=ahead)
    monkeypatch.setenv(clock.ENV, day.isoformat())
    path = root / "formulas" / f"{CALCIUM}.yaml"
    before = path.read_bytes()
    code, out, err = run(capsys, "fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "r",
                         "--root", str(root))
    assert code != 0 and f"dated {day}" in err and "after this machine's clock" in err, err
    assert path.read_bytes() == before and "Traceback" not in err


def test_a_replayed_past_day_still_signs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_registry(tmp_path)
    solo(root, monkeypatch)
    code, _, err = run(capsys, "fix", CALCIUM, "--set", "albumin_coefficient=0.7", "--reason", "r", "--root", str(root))
    assert code == 0, err
