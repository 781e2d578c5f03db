"""The executor's limits and allow-lists, as plain data in one place.

Everything here is an allow-list: a name that is not listed is not reachable.
The checker (static) and the sandbox (run time) both read these tables, so a
change here changes both layers together.  Nothing in this module is specific
to any clinical calculator.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Final, Mapping

# --- limits (the paper's Table 17) -------------------------------------------
MAX_SOURCE_CHARS: Final = 8_000          # characters of program text, not bytes
MAX_LINES: Final = 100_000               # line events traced in the program's own code
MEMORY_BYTES: Final = 256 * 1024 * 1024  # RLIMIT_AS of the child
CPU_SECONDS: Final = 5                   # RLIMIT_CPU soft limit (SIGXCPU); hard = soft + 1
WALL_SECONDS: Final = 5.0                # parent kills the child's process group after this
MAX_INT_STR_DIGITS: Final = 4_300        # CPython's default int<->str digit cap, pinned
MAX_ABS_INT: Final = 2**63 - 1           # larger returned ints are `bad_kind` (int64 range)
DETAIL_CHARS: Final = 300                # rejection reasons / exception text are trimmed to this
MAX_REPLY_CHARS: Final = 1_000_000       # a model reply larger than this is not even scanned

# --- modules -----------------------------------------------------------------
# Per module, the only attributes a program can reach.  Each one is a plain
# function, a number, or a class whose own reachable attributes are in
# OBJECT_ATTRIBUTES below.  No entry is a module, and none exposes sys, os,
# builtins, frames or code objects.
_MATH: Final = frozenset(
    """acos acosh asin asinh atan atan2 atanh cbrt ceil comb copysign cos cosh degrees
    dist e erf erfc exp exp2 expm1 fabs factorial floor fmod frexp fsum gamma gcd hypot
    inf isclose isfinite isinf isnan isqrt lcm ldexp lgamma log log10 log1p log2 modf nan
    nextafter perm pi pow prod radians remainder sin sinh sqrt tan tanh tau trunc ulp""".split()
)
_DATETIME: Final = frozenset({"date", "datetime", "timedelta", "time", "MINYEAR", "MAXYEAR"})
_CALENDAR: Final = frozenset({"monthrange", "isleap", "leapdays", "weekday"})
# Durations and sleeping only: no reading of the calendar clock (time.time,
# localtime) so a program's answer cannot depend on the day it runs, and no
# strftime (string formatting).
_TIME: Final = frozenset({"sleep", "monotonic", "perf_counter", "process_time"})

MODULE_ATTRIBUTES: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {"math": _MATH, "datetime": _DATETIME, "calendar": _CALENDAR, "time": _TIME}
)
ALLOWED_MODULES: Final = frozenset(MODULE_ATTRIBUTES)

# --- attributes of ordinary objects --------------------------------------------
# Attribute names a program may use on any value that is not a module: the
# numeric, date, container and string methods clinical arithmetic needs.
# Excluded on purpose: format/format_map/strftime (string formatting), today/
# now/utcnow/fromtimestamp (clock readings), with_traceback/add_note and every
# frame/generator/traceback attribute (tb_frame, gi_frame, f_back, ...).
OBJECT_ATTRIBUTES: Final = frozenset(
    """
    year month day hour minute second microsecond week
    weekday isoweekday isocalendar toordinal fromordinal replace date time combine
    days seconds microseconds total_seconds isoformat fromisoformat strptime
    min max resolution
    real imag conjugate is_integer bit_length numerator denominator as_integer_ratio
    append extend insert pop remove index count sort reverse copy clear
    get items keys values update setdefault
    add discard union intersection difference symmetric_difference issubset issuperset
    lower upper strip lstrip rstrip split rsplit splitlines startswith endswith join
    find rfind isdigit isnumeric isdecimal isalpha isspace title capitalize
    start stop step args
    """.split()
)
# Any attribute name a program may write, module or not: the static checker
# uses this when it cannot tell what the receiver is; the module views and the
# objects themselves then enforce the precise per-module lists at run time.
ALL_ATTRIBUTES: Final = OBJECT_ATTRIBUTES.union(*MODULE_ATTRIBUTES.values())

# --- builtins -----------------------------------------------------------------
# Names bound in the program's restricted __builtins__ (besides __import__,
# which only the import statement can reach: every underscored name is
# rejected by the checker).
ALLOWED_BUILTINS: Final = frozenset(
    """
    abs min max round sum len range int float bool str list tuple dict set frozenset
    sorted reversed enumerate zip map filter any all divmod pow isinstance print
    Exception ValueError TypeError ZeroDivisionError KeyError IndexError
    """.split()
)

# Names that are rejected wherever they appear, with the reason given to the
# model.  They are not in the builtins anyway; naming them fails early and
# explains why.
FORBIDDEN_NAMES: Final[Mapping[str, str]] = MappingProxyType(
    {
        **dict.fromkeys(("eval", "exec", "compile", "__import__"), "dynamic evaluation"),
        "open": "file access",
        **dict.fromkeys(
            ("getattr", "setattr", "delattr", "globals", "locals", "vars", "dir", "type", "object"),
            "reflection",
        ),
        **dict.fromkeys(("breakpoint", "input", "help"), "interactive use"),
        "memoryview": "raw memory access",
        "format": "string formatting",
    }
)
FORMATTING_ATTRIBUTES: Final = frozenset({"format", "format_map", "strftime"})

# Audit events the sandbox tolerates while the program runs (the program's own
# `exec`, our own tracer switch, and time.sleep).  Any other event means a
# checker bypass, and the child is stopped on the spot.
AUDIT_EVENTS_ALLOWED: Final = frozenset({"exec", "sys.settrace", "time.sleep"})
