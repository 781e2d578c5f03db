"""The deciding commands' arguments, checked before any file is read or written (no I/O here)."""
from __future__ import annotations

import datetime as dt

from registry import clock
from registry.errors import ReleaseError


def parse_date(text: str | None, flag: str, default: dt.date | None = None) -> dt.date:
    if text is None:
        return default or clock.today()
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise ReleaseError(f"{flag} must be a real date YYYY-MM-DD, got {text!r}") from None


def _number(name: str, text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ReleaseError(f"--set {name}: {text!r} is not a number") from None


def parse_assignments(assignments: list[str]) -> dict[str, int | float]:
    """`NAME=VALUE` pairs, all checked together; a name given twice is refused."""
    out: dict[str, int | float] = {}
    for a in assignments:
        if "=" not in a:
            raise ReleaseError(f"--set expects CONSTANT=VALUE, got {a!r}")
        name, value = (s.strip() for s in a.split("=", 1))
        if not name:
            raise ReleaseError(f"--set expects CONSTANT=VALUE, got {a!r}")
        if name in out:
            raise ReleaseError(f"--set {name} is given twice; give each constant once")
        out[name] = _number(name, value)
    return out


def parse_labels(labels: list[str]) -> dict[str, str]:
    """`NAME=TEXT` pairs for --label: the name a constant's new value goes by (shown in texts)."""
    out: dict[str, str] = {}
    for a in labels:
        name, _, text = (s.strip() for s in a.partition("="))
        if not name or not text or "=" not in a:
            raise ReleaseError(f"--label expects CONSTANT=NAME (e.g. correction=Katz factor), got {a!r}")
        if name in out:
            raise ReleaseError(f"--label {name} is given twice; give each constant once")
        out[name] = text
    return out


def who_of(by: str | None, role: str | None, flag: str = "--by") -> tuple[str, str] | None:
    if by is None and role is None:
        return None
    if not (by or "").strip() or not (role or "").strip():
        raise ReleaseError(f"{flag} and --role go together: name the person and their role")
    return by.strip(), role.strip()  # type: ignore[union-attr]


def reason_of(reason: str) -> str:
    if not reason or not reason.strip():
        raise ReleaseError("--reason must say what changed and why")
    return reason.strip()

