"""Today's date, as the registry's governance sees it: the calendar, or $FORMULA_TODAY when it is set.

Releases, drafts, approvals, activation, reviews, `due` and the site's review status all ask this one
function. Setting FORMULA_TODAY=YYYY-MM-DD fixes the day, so a governance run can be replayed exactly
and the tests do not depend on the day (or the hour: a run crossing midnight) they happen to run on.
"""
from __future__ import annotations

import datetime as dt
import os

ENV = "FORMULA_TODAY"


def today() -> dt.date:
    """The calendar date, unless $FORMULA_TODAY names another (a clear error when it is not a date)."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return dt.date.today()
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        from registry.toolerror import CommandError

        raise CommandError(f"${ENV} must be a date YYYY-MM-DD (or unset, for the calendar's), got {raw!r}") from None


def real_today() -> dt.date:
    """The machine's calendar date, whatever $FORMULA_TODAY says (the later of local and UTC, so no time zone makes
    an honest day look future): a decision may be replayed on a fixed day, never signed on a day not yet come."""
    return max(dt.date.today(), dt.datetime.now(dt.timezone.utc).date())
