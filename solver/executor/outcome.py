"""The typed result of running one program, and its map onto the paper's taxonomy."""
from __future__ import annotations

import datetime
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt

Kind = Literal[
    "value", "no_program", "rejected", "raised", "timeout", "memory", "line_limit", "bad_kind", "crashed"
]
Value = Union[StrictInt, StrictFloat, datetime.date, tuple[StrictInt, StrictInt]]

# The paper's Table 8 outcome taxonomy.  "unreadable" (a value the scorer could
# not read) is the scorer's verdict on a `value`, never produced here.
TABLE8: dict[str, Optional[str]] = {
    "value": None,
    "no_program": "no program",
    "rejected": "rejected",
    "raised": "raised",
    "timeout": "raised",
    "memory": "raised",
    "line_limit": "raised",
    "crashed": "raised",
    "bad_kind": "bad kind",
}


class Outcome(BaseModel):
    """What the executor says about one program.

    `value` is set only when `kind == "value"`: an int, a finite float, a
    date, or a (weeks, days) tuple of ints.  `detail` holds the rejection
    reason or the exception's `Type: message`, at most 300 characters.
    """

    model_config = ConfigDict(frozen=True)

    kind: Kind
    value: Optional[Value] = None
    detail: str = ""
    cpu_s: float = Field(default=0.0, ge=0.0)
    wall_s: float = Field(default=0.0, ge=0.0)
    policy: Literal["paper", "clinical"] = "clinical"  # what syntax the checker accepted
    hash_seed: Optional[int] = None  # PYTHONHASHSEED of the process that ran it
    time_zone: Optional[str] = None  # the TZ a child ran the program in (always UTC); None when none ran

    @property
    def ok(self) -> bool:
        """True when the program ran and returned an answer of a valid kind."""
        return self.kind == "value"

    @property
    def table8(self) -> Optional[str]:
        """The paper's Table 8 category (None for an answer)."""
        return TABLE8[self.kind]

    def display_value(self) -> Any:
        """The value as printed/serialised: ISO date, [weeks, days], or the number."""
        if isinstance(self.value, datetime.date):
            return self.value.isoformat()
        if isinstance(self.value, tuple):
            return list(self.value)
        return self.value

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "value": self.display_value(),
            "detail": self.detail,
            "cpu_s": self.cpu_s,
            "wall_s": self.wall_s,
            "policy": self.policy,
            "hash_seed": self.hash_seed,
            "time_zone": self.time_zone,
        }

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> "Outcome":
        """Build from the fork server's plain-JSON form (tagged value)."""
        raw = wire.get("value")
        value: Any = None
        if isinstance(raw, dict) and len(raw) == 1:
            tag, payload = next(iter(raw.items()))
            if tag == "int":
                value = payload
            elif tag == "float":
                value = float(payload)
            elif tag == "date":
                value = datetime.date.fromisoformat(payload)
            elif tag == "weeks_days":
                value = (payload[0], payload[1])
        return cls(
            kind=wire["kind"],
            value=value,
            detail=str(wire.get("detail") or ""),
            cpu_s=float(wire.get("cpu_s") or 0.0),
            wall_s=float(wire.get("wall_s") or 0.0),
            policy=wire.get("policy") or "clinical",
            hash_seed=wire.get("hash_seed"),
            time_zone=wire.get("time_zone") if isinstance(wire.get("time_zone"), str) else None,
        )
