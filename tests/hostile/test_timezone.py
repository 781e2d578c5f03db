"""Host-dependent answers: every child runs with TZ=UTC, whatever the caller's TZ or the host's zone, and
the outcome records it, so `strftime('%s')` and `strptime(..., '%Z')` answer the same on every machine."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from solver.executor import Executor
from solver.executor.isolated import run_fresh

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = {  # program -> its answer in UTC
    "import datetime\ndef solve():\n    return int(datetime.datetime(2020, 1, 1).strftime('%s'))\n": 1577836800,
    "import datetime\ndef solve():\n    return int(datetime.datetime(2020, 7, 1, 12).strftime('%s'))\n": 1593604800,
    "import datetime\ndef solve():\n    try:\n        datetime.datetime.strptime('EST', '%Z')\n        return 1\n"
    "    except ValueError:\n        return 0\n": 0,
    "import datetime\ndef solve():\n    try:\n        datetime.datetime.strptime('IST', '%Z')\n        return 1\n"
    "    except ValueError:\n        return 0\n": 0,
}
ZONES = ["America/New_York", "Asia/Kolkata", "Pacific/Chatham", "UTC"]


@pytest.fixture
def parent_tz(monkeypatch: pytest.MonkeyPatch):
    def set_tz(zone: str) -> None:
        monkeypatch.setenv("TZ", zone)
        time.tzset()
    yield set_tz
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("zone", ZONES)
def test_same_answer_under_any_parent_tz(zone: str, parent_tz) -> None:
    parent_tz(zone)
    with Executor(workers=1) as ex:
        outcomes = ex.map(list(PROGRAMS))
    assert [o.value for o in outcomes] == list(PROGRAMS.values())
    assert all(o.time_zone == "UTC" for o in outcomes)
    fresh = run_fresh(next(iter(PROGRAMS)))
    assert fresh.value == 1577836800 and fresh.time_zone == "UTC"


def test_the_outcome_says_utc_in_its_json() -> None:
    with Executor(workers=1) as ex:
        out = ex.map(["def solve():\n    return 1\n"])[0]
    assert out.to_json_dict()["time_zone"] == "UTC" and out.model_dump()["time_zone"] == "UTC"


def _other_host_zone_available() -> str | None:
    if sys.platform != "linux" or shutil.which("unshare") is None or not Path("/usr/share/zoneinfo/Asia/Kolkata").exists():
        return "needs Linux, unshare(1) and the zoneinfo database"
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind /usr/share/zoneinfo/Asia/Kolkata "
                            "/etc/localtime && date +%Z"], capture_output=True, text=True)
    if probe.returncode != 0 or probe.stdout.strip() != "IST":
        return f"cannot give a private mount namespace another /etc/localtime here ({probe.stderr.strip()[:80]})"
    return None


def test_same_answer_on_a_host_in_another_zone() -> None:
    """The host's zone data does not leak in: in a private mount namespace /etc/localtime (and so the UTC
    zone file it links to on Debian) holds Asia/Kolkata; children apply the UTC0 rule, which reads no file."""
    why = _other_host_zone_available()
    if why:
        pytest.skip(why)
    script = ("import json; from solver.executor import Executor\n"
              f"progs = {list(PROGRAMS)!r}\n"
              "with Executor(workers=1) as ex: print(json.dumps([o.value for o in ex.map(progs)]))\n")
    env = {k: v for k, v in os.environ.items() if k != "TZ"}
    done = subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind /usr/share/zoneinfo/Asia/Kolkata /etc/localtime"
                           f" && exec {sys.executable} -c \"$0\"", script], capture_output=True, text=True, cwd=REPO,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == list(PROGRAMS.values())
