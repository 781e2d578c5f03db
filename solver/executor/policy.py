"""The executor's limits and allow-lists, as plain data in one place.

Everything here is an allow-list: a name that is not listed is not reachable.
The checker (static) and the sandbox (run time) both read these tables, so a
change here changes both layers together.  Nothing in this module is specific
to any clinical calculator.
"""
from __future__ import annotations

from types import MappingProxyType

TYPE_CHECKING = False  # `typing` stays out of the fork server (see __init__)
if TYPE_CHECKING:  # pragma: no cover
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
MAX_REPLY_CHARS: Final = 65_536          # a model reply larger than this is never parsed (solver/replies.py)
# Every fork server and fresh interpreter runs with this hash seed, so set and
# dict-of-str iteration order (and so an answer) never depends on which worker
# ran a program.  Recorded in every outcome.
HASH_SEED: Final = 0
# Every child runs with this time zone (TZ in its environment, applied with
# time.tzset), so `strftime('%s')`, `strptime(..., '%Z')` and the like give the
# same answer on every host.  Recorded in every outcome that a child produced.
# TZ_RULE is the POSIX rule for it (zone "UTC", offset 0, no daylight saving),
# which the C library applies without reading any tz database file, so neither
# a missing nor an altered zoneinfo file changes it.
TIME_ZONE: Final = "UTC"
TZ_RULE: Final = "UTC0"

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
# The calendar module's public constants, as the plain ints the documentation
# gives them (Python 3.12 made them IntEnum members and added the months; a
# program sees the same plain numbers on every version).
CALENDAR_CONSTANTS: Final[Mapping[str, int]] = MappingProxyType({
    **{day: n for n, day in enumerate("MONDAY TUESDAY WEDNESDAY THURSDAY FRIDAY SATURDAY SUNDAY".split())},
    **{month: n for n, month in enumerate("JANUARY FEBRUARY MARCH APRIL MAY JUNE JULY AUGUST SEPTEMBER OCTOBER "
                                          "NOVEMBER DECEMBER".split(), start=1)},
})
_CALENDAR: Final = frozenset(
    {"monthrange", "isleap", "leapdays", "weekday", "timegm", "monthcalendar"}
).union(CALENDAR_CONSTANTS)
# Durations, sleeping and converting a given number of seconds: no reading of
# the calendar clock (time.time, localtime, gmtime() without an argument) so a
# program's answer cannot depend on the day it runs, and no strftime.  The
# sandbox wraps monotonic/perf_counter/process_time to count from the
# program's start, and gmtime to require its argument.
_TIME: Final = frozenset({"sleep", "monotonic", "perf_counter", "process_time", "gmtime"})

# The pure functions of `statistics` (`clinical` only: Table 17 lists four modules).  Each takes numbers and
# returns a number, a list or a named tuple of numbers; NormalDist (random sampling) and kde stay out.
_STATISTICS: Final = frozenset(
    """mean fmean geometric_mean harmonic_mean median median_low median_high median_grouped mode multimode
    quantiles pstdev pvariance stdev variance covariance correlation linear_regression StatisticsError""".split()
)

MODULE_ATTRIBUTES: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {"math": _MATH, "datetime": _DATETIME, "calendar": _CALENDAR, "time": _TIME, "statistics": _STATISTICS}
)
PAPER_MODULES: Final = frozenset({"math", "datetime", "calendar", "time"})  # Table 17's four
CLINICAL_MODULES: Final = PAPER_MODULES | {"statistics"}
ALLOWED_MODULES: Final = frozenset(MODULE_ATTRIBUTES)  # the union; a policy's `modules` says which it imports

# --- attributes of ordinary objects --------------------------------------------
# Attribute names a program may use on any value that is not a module: the
# numeric, date, container and string methods clinical arithmetic needs.
# Excluded on purpose: format/format_map (a format string from data walks
# attributes at run time), today/now/utcnow/fromtimestamp (clock readings),
# with_traceback/add_note and every frame/generator/traceback/code attribute
# (tb_frame, gi_frame, gi_code, f_back, ...).  strftime is listed, but the
# `paper` policy rejects it as string formatting.
OBJECT_ATTRIBUTES: Final = frozenset(
    """
    year month day hour minute second microsecond week
    weekday isoweekday isocalendar toordinal fromordinal replace date time combine
    days seconds microseconds total_seconds isoformat fromisoformat strptime strftime
    timetuple tm_year tm_mon tm_mday tm_hour tm_min tm_sec tm_wday tm_yday tm_isdst
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
# Pure string methods `clinical` also accepts: padding and alignment (zfill,
# rjust, ljust, center: string formatting, so `paper` rejects them as it does
# strftime), splitting at a separator, prefix/suffix removal, case and class
# tests.  Each returns a new str, bool or tuple of str and reaches nothing.
CLINICAL_STRING_METHODS: Final = frozenset(
    """
    zfill rjust ljust center
    partition rpartition removeprefix removesuffix casefold swapcase
    isalnum isascii islower isupper istitle
    """.split()
)
# Any attribute name a program may write, module or not: the static checker
# uses this when it cannot tell what the receiver is; the module views and the
# objects themselves then enforce the precise per-module lists at run time.
ALL_ATTRIBUTES: Final = OBJECT_ATTRIBUTES.union(*(MODULE_ATTRIBUTES[m] for m in PAPER_MODULES))  # policy.attributes adds

# --- builtins -----------------------------------------------------------------
# Names bound in the program's restricted __builtins__ (besides __import__,
# which only the import statement can reach: every dunder name but __name__
# is rejected by the checker).  The paper's list has six exception types.
PAPER_BUILTINS: Final = frozenset(
    """
    abs min max round sum len range int float bool str list tuple dict set frozenset
    sorted reversed enumerate zip map filter any all divmod pow isinstance print
    Exception ValueError TypeError ZeroDivisionError KeyError IndexError
    """.split()
)
# `clinical` adds what ordinary programs use.  None of these reaches an
# attribute by name except hasattr, which answers only True or False (and a
# frame/code attribute read still trips the audit hook).
CLINICAL_BUILTINS: Final = PAPER_BUILTINS | frozenset(
    """
    iter next repr hasattr format chr ord
    ArithmeticError OverflowError AttributeError RuntimeError RecursionError MemoryError
    LookupError StopIteration NotImplementedError AssertionError NameError
    """.split()
)
ALLOWED_BUILTINS: Final = CLINICAL_BUILTINS  # the union, for documentation and tests

# Modules the interpreter's own C code imports while a program runs
# (datetime.strptime -> _strptime on 3.13, big-int division -> _pylong on
# 3.12+, a warning -> warnings).  That import goes through the program's
# __import__; for these names it returns None (the C caller then takes the
# module, pre-imported by the server, from sys.modules).  The checker rejects
# `import _strptime` and friends in the program text, as any other import.
INTERNAL_IMPORTS: Final = frozenset({"_strptime", "_pylong", "warnings"})

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
    }
)
# Rejected in every policy: a format string that comes from data reaches
# attributes at run time ("{0.__class__}").  `clinical` accepts `.format` only
# on a string literal whose every field is plain (checker.plain_format).
FORMAT_METHOD_ATTRIBUTES: Final = frozenset({"format", "format_map"})


# --- policies -----------------------------------------------------------------
class Policy:
    """What syntax and builtins a program may use.  A policy never changes the
    isolation (allow-lists of modules and attributes, audit hook, limits,
    fresh process, process-group kill): only what the checker accepts."""

    __slots__ = ("name", "underscore_names", "generator_expressions", "string_formatting", "builtins", "attributes",
                 "modules")

    def __init__(
        self,
        name: str,
        underscore_names: bool,  # `_`, `_x`, `for _ in ...`, and reading `__name__`
        generator_expressions: bool,  # `sum(w * w for w in ws)`
        string_formatting: bool,  # f-strings, `"%.2f" % x`, strftime, format()
        builtins: frozenset[str],
        attributes: frozenset[str] = frozenset(),  # object attributes beyond OBJECT_ATTRIBUTES
        modules: frozenset[str] = PAPER_MODULES,  # what `import` may name
    ) -> None:
        self.name = name
        self.underscore_names = underscore_names
        self.generator_expressions = generator_expressions
        self.string_formatting = string_formatting
        self.builtins = builtins
        self.attributes = attributes
        self.modules = modules

    def __repr__(self) -> str:
        return f"Policy({self.name!r})"


# `paper`: what Table 17 of the paper lists (dynamic evaluation, file,
# attribute and global access, string formatting, async and generator syntax,
# any name or attribute starting with an underscore; six exception types).
PAPER: Final = Policy("paper", False, False, False, PAPER_BUILTINS)
# `clinical`: also accepts the idioms honest programs use, `"{:.2f}".format(x)` on a string literal whose fields
# are plain (checker.plain_format), and the pure `statistics` functions.  Async syntax, `yield`, dunder names
# (but reading __name__), underscored attributes, format_map and `.format` on anything but such a literal stay
# rejected.
CLINICAL: Final = Policy("clinical", True, True, True, CLINICAL_BUILTINS, CLINICAL_STRING_METHODS | _STATISTICS,
                         CLINICAL_MODULES)
POLICIES: Final[Mapping[str, Policy]] = MappingProxyType({"paper": PAPER, "clinical": CLINICAL})
DEFAULT_POLICY: Final = "clinical"


def get_policy(name: str) -> Policy:
    """The policy called `name`; ValueError names the choices otherwise."""
    try:
        return POLICIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown executor policy {name!r}; choose one of: {', '.join(POLICIES)}") from None

# Audit events the sandbox tolerates while the program runs (the program's own
# `exec`, our own tracer switch, and time.sleep).  Any other event means a
# checker bypass, and the child is stopped on the spot.
AUDIT_EVENTS_ALLOWED: Final = frozenset({"exec", "sys.settrace", "time.sleep"})
