"""The child side: what happens inside the fresh process that runs one program.

Order matters and is the same in the fork server's child and in the fresh
interpreter runner: isolate the process (session, descriptors, environment),
apply the resource limits, parse and check the program *under those limits*,
then run it in a new namespace whose only builtins are the allow-list, with a
line tracer restricted to the program's own frames.  The result leaves as
one JSON object on the result descriptor and the process ends with os._exit,
so no harness code (atexit, finalizers, buffered files) runs after the program.
"""
from __future__ import annotations

import _signal
import builtins
import calendar
import datetime
import json
import math
import os
import resource
import signal
import statistics
import sys
import time
import warnings
from types import CodeType, ModuleType

TYPE_CHECKING = False  # `typing` stays out of the fork server (see __init__)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, NoReturn

# C code imports some modules lazily, and a child cannot open files: the
# parser needs unicodedata to NFKC-normalise non-ASCII identifiers,
# datetime.strptime needs _strptime (cached on 3.11/3.12, imported on every
# call on 3.13), a compile-time SyntaxWarning needs warnings, and 3.12+ needs
# _pylong for big-int division.  All are imported here, before any program
# runs; the program's __import__ lets the C callers through (INTERNAL_IMPORTS).
# Library code the program may call imports through the real __import__ and finds these in sys.modules.
import _strptime  # noqa: F401,E402
import heapq  # noqa: F401,E402  statistics.mode -> Counter.most_common imports it on its first call
import unicodedata  # noqa: F401,E402

try:  # Python 3.12+
    import _pylong  # noqa: F401
except ImportError:  # pragma: no cover - 3.11
    pass

from solver.executor.checker import Rejected, check, compile_checked
from solver.executor.extract import prepare
from solver.executor.policy import (
    AUDIT_EVENTS_ALLOWED,
    CALENDAR_CONSTANTS,
    CPU_SECONDS,
    DETAIL_CHARS,
    INTERNAL_IMPORTS,
    MAX_ABS_INT,
    MAX_INT_STR_DIGITS,
    MAX_LINES,
    MEMORY_BYTES,
    MODULE_ATTRIBUTES,
    POLICIES,
    TZ_RULE,
    Policy,
    get_policy,
)
from solver.executor.wire import CHECKED_MARK  # written once the program has passed the checker

RESULT_FD = 3          # the result pipe is moved here; fds 0-2 become /dev/null
_MEMORY_MSG = b'{"kind":"memory","detail":"MemoryError: the program ran out of memory"}'
_LINE_MSG = json.dumps(
    {"kind": "line_limit", "detail": f"more than {MAX_LINES} lines executed"}
).encode()
_PR_SET_PDEATHSIG = 1
# Signals a child must have at their default action (SIGXCPU ends it at the CPU limit).
_DEFAULT_SIGNALS = tuple(int(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGXCPU))
_SIG_DFL = int(signal.SIG_DFL)
_SIGKILL = int(signal.SIGKILL)


datetime.datetime.strptime("2000-01-01", "%Y-%m-%d")  # primes _strptime's format cache


def trim(text: str, limit: int = DETAIL_CHARS) -> str:
    """Cut a detail string to the reported length."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- the program's namespace ----------------------------------------------------


class ModuleView:
    """Stands in for an allowed module: only its allow-listed attributes exist
    (some replaced by the wrappers below)."""

    def __init__(self, module: ModuleType, names: frozenset[str], override: dict[str, Any]) -> None:
        for name in sorted(names):
            object.__setattr__(self, name, override[name] if name in override else getattr(module, name))
        object.__setattr__(self, "_label", module.__name__)

    def __getattr__(self, name: str) -> Any:  # only reached for missing names
        raise AttributeError(f"module {self._label!r} has no allowed attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"module {self._label!r} is read-only")

    def __repr__(self) -> str:
        return f"<module {self._label!r} (restricted)>"


# `print`, `__import__` and the module wrappers are defined in a namespace of
# their own, so that even their __globals__ (unreachable anyway: underscored)
# lead nowhere.  Builtins they need come in as arguments.
_FACTORY_SOURCE = '''
def print(*args, **kwargs):
    return None

def make_import(views, internal, error):
    def __import__(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name in views:
            return views[name]
        if level == 0 and name in internal:
            return None  # C code's own import; it reads sys.modules itself
        raise error("import of %r is not allowed" % (name,))
    return __import__

def make_wrappers(real, origin, int, type_error):
    # Clocks count from the program's start (origin is set just before it
    # runs): the host's uptime is not the program's business.
    def monotonic():
        return real["monotonic"]() - origin[0]
    def perf_counter():
        return real["perf_counter"]() - origin[1]
    def process_time():
        return real["process_time"]() - origin[2]
    # gmtime() with no argument (or None) reads today's date.
    def gmtime(secs):
        if secs is None:
            raise type_error("gmtime() needs a number of seconds")
        return real["gmtime"](secs)
    # Python 3.12 returns an IntEnum from these; the contract says int.
    def weekday(year, month, day):
        return int(real["weekday"](year, month, day))
    def monthrange(year, month):
        first, days = real["monthrange"](year, month)
        return (int(first), days)
    return {"time": {"monotonic": monotonic, "perf_counter": perf_counter,
                     "process_time": process_time, "gmtime": gmtime},
            "calendar": {"weekday": weekday, "monthrange": monthrange}}
'''
_factory_ns: dict[str, Any] = {"__builtins__": {}}
exec(compile(_FACTORY_SOURCE, "<executor-builtins>", "exec"), _factory_ns)  # our own constant code

# [monotonic, perf_counter, process_time] at the program's start (see execute)
_CLOCK_ORIGIN: list[float] = [0.0, 0.0, 0.0]
_WRAPPERS: dict[str, dict[str, Any]] = _factory_ns["make_wrappers"](
    {
        "monotonic": time.monotonic,
        "perf_counter": time.perf_counter,
        "process_time": time.process_time,
        "gmtime": time.gmtime,
        "weekday": calendar.weekday,
        "monthrange": calendar.monthrange,
    },
    _CLOCK_ORIGIN,
    int,
    TypeError,
)
_REAL_MODULES = {"math": math, "datetime": datetime, "calendar": calendar, "time": time, "statistics": statistics}
MODULE_VIEWS: dict[str, ModuleView] = {
    name: ModuleView(_REAL_MODULES[name], attrs,
                     {**(dict(CALENDAR_CONSTANTS) if name == "calendar" else {}), **_WRAPPERS.get(name, {})})
    for name, attrs in MODULE_ATTRIBUTES.items()
}


def make_globals(policy: Policy | None = None) -> dict[str, Any]:
    """A fresh globals dict whose __builtins__ holds only the policy's allow-list."""
    names = get_policy("clinical").builtins if policy is None else policy.builtins
    allowed = {name: getattr(builtins, name) for name in names if name != "print"}
    allowed["print"] = _factory_ns["print"]
    modules = get_policy("clinical").modules if policy is None else policy.modules
    views = {name: view for name, view in MODULE_VIEWS.items() if name in modules}
    allowed["__import__"] = _factory_ns["make_import"](views, INTERNAL_IMPORTS, ImportError)
    return {"__builtins__": allowed, "__name__": "__program__"}


# One namespace per policy, built by a fork server before it forks (prebuild_namespaces):
# each child gets its own copy by the fork and takes it instead of building one.
_PREBUILT: dict[str, dict[str, Any]] = {}


def prebuild_namespaces() -> None:
    """In a fork server: build every policy's namespace once, so that a child
    only takes it (see fresh_namespace).  The server never runs a program, so
    these dicts stay as built; each child has a private copy after fork."""
    for name in POLICIES:
        _PREBUILT[name] = make_globals(get_policy(name))


def fresh_namespace(policy: Policy | None = None) -> dict[str, Any]:
    """The namespace a program runs in: this process's prebuilt one for the
    policy (taken, so never handed out twice), else a newly built one."""
    prebuilt = _PREBUILT.pop("clinical" if policy is None else policy.name, None)
    return prebuilt if prebuilt is not None else make_globals(policy)


def start_clocks() -> None:
    """Make the program's clocks read zero now."""
    _CLOCK_ORIGIN[:] = [time.monotonic(), time.perf_counter(), time.process_time()]


# --- process isolation and limits -------------------------------------------------


_DEVNULL_FD: int | None = None  # /dev/null opened once by a fork server, above fd 3


def prepare_parent() -> None:
    """In a fork server, before any child: open /dev/null once (above the
    result fd, so children only dup it), and ignore warnings (a warning shown
    in a child would look up source lines, that is, open a file)."""
    global _DEVNULL_FD
    warnings.simplefilter("ignore")
    if _DEVNULL_FD is None:
        import fcntl

        fd = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        try:
            _DEVNULL_FD = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, RESULT_FD + 1)
        finally:
            os.close(fd)


def fix_time_zone() -> None:
    """An environment holding only TZ=UTC, applied to the C library: a program's answer never depends on
    the host's zone (/etc/localtime) or the caller's TZ."""
    os.environ.clear()
    os.environ["TZ"] = TZ_RULE
    time.tzset()


def isolate(result_fd: int) -> None:
    """New session, only the result pipe left open (as fd 3), an environment of TZ=UTC only."""
    try:
        os.setsid()
    except OSError:
        pass  # already a group leader: the parent made us one
    if result_fd != RESULT_FD:
        os.dup2(result_fd, RESULT_FD)
    devnull = _DEVNULL_FD if _DEVNULL_FD is not None else os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        if devnull != fd:
            os.dup2(devnull, fd)
    os.closerange(RESULT_FD + 1, max(devnull + 1, _fd_ceiling()))
    if _environ_keys() != _TZ_ONLY:  # nothing but the fixed time zone (see fix_time_zone)
        fix_time_zone()
    # The C functions, not signal.py's enum wrappers: those touch (copy) pages.
    for sig in _DEFAULT_SIGNALS:
        if _signal.getsignal(sig) != _SIG_DFL:
            _signal.signal(sig, _SIG_DFL)


_ENVIRON_DATA = getattr(os.environ, "_data", None)  # os.environ's own dict (encoded keys), kept current by it
_TZ_ONLY = {os.environ.encodekey("TZ")} if _ENVIRON_DATA is not None else {"TZ"}


def _environ_keys() -> Any:
    """The environment's names, compared in C: `os.environ.keys() != {...}` runs the collections.abc set
    machinery, whose first use in a child writes (copies) about a hundred pages."""
    return _ENVIRON_DATA.keys() if _ENVIRON_DATA is not None else set(os.environ)


def _fd_ceiling() -> int:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return soft if 0 < soft < 1 << 20 else 1 << 16


def die_with_parent(libc: Any, parent_pid: int) -> None:
    """Linux only: SIGKILL this child if the fork server dies (best effort)."""
    if libc is None:
        return
    try:
        libc.prctl(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)
    except Exception:
        return
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(0)


def apply_limits() -> None:
    """Resource limits; a limit the platform refuses is skipped, never loosened."""
    wanted = [
        (resource.RLIMIT_AS, MEMORY_BYTES, MEMORY_BYTES),
        (resource.RLIMIT_CPU, CPU_SECONDS, CPU_SECONDS + 1),
        (resource.RLIMIT_FSIZE, 0, 0),
        (resource.RLIMIT_NOFILE, RESULT_FD + 1, RESULT_FD + 1),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if hasattr(resource, "RLIMIT_NPROC"):
        wanted.append((resource.RLIMIT_NPROC, 0, 0))
    for res, soft, hard in wanted:
        _, cur_hard = resource.getrlimit(res)
        if cur_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, cur_hard), min(hard, cur_hard)
        try:
            resource.setrlimit(res, (soft, hard))
        except (ValueError, OSError):
            pass
    sys.set_int_max_str_digits(MAX_INT_STR_DIGITS)


# --- running -----------------------------------------------------------------------


def _exit_with(fd: int, payload: bytes) -> NoReturn:
    try:
        os.write(fd, payload)
    finally:
        os._exit(0)


def make_tracer(namespace: dict[str, Any], fd: int) -> Callable[..., Any]:
    """A sys.settrace function counting the program's executed lines.

    A frame belongs to the program when it runs with the program's globals
    (module code, its functions, lambdas and comprehensions); the harness, the
    stdlib and C code are not traced.  (f_globals, not f_code: reading f_code
    raises an audit event.)  One executed line is one `line` event, or one
    backward jump that stays on its line and so makes no `line` event
    (`while True: pass`), seen through opcode events.
    """
    count = 0
    last_frame: Any = None
    last_offset = -1
    after_line = False

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count, last_frame, last_offset, after_line
        offset = frame.f_lasti
        if event == "line":
            count += 1
            after_line = True
        elif event == "opcode":
            if after_line:
                after_line = False  # the opcode event of the line just counted
            elif frame is last_frame and offset <= last_offset:
                count += 1  # a jump back within one line
        if count > MAX_LINES:
            _exit_with(fd, _LINE_MSG)  # not an exception: nothing can catch it
        last_frame, last_offset = frame, offset
        return local

    def global_(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_globals is namespace:
            frame.f_trace_opcodes = True
            return local
        return None

    return global_


def install_audit_guard(code: CodeType, fd: int) -> None:
    """Defence in depth: an audit event the checker should have made impossible
    (open, import, os.*, subprocess.*, a foreign exec, ...) stops the child."""

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in AUDIT_EVENTS_ALLOWED:
            if event != "exec" or args[0] is code:
                return
        _exit_with(
            fd,
            json.dumps(
                {"kind": "rejected", "detail": trim(f"run-time guard stopped the program: {event}")}
            ).encode(),
        )

    sys.addaudithook(hook)


def describe(exc: BaseException) -> str:
    """`Type: message`, never failing, trimmed."""
    name = type(exc).__name__
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001 - any failure just loses the message
        message = "<message could not be shown>"
    return trim(f"{name}: {message}" if message else name)


def encode_value(value: Any) -> dict[str, Any]:
    """Classify a return value by exact type; the wire form is plain JSON."""
    kind = type(value)
    if kind is int:
        if abs(value) <= MAX_ABS_INT:
            return {"kind": "value", "value": {"int": value}}
        return {"kind": "bad_kind", "detail": "int outside the 64-bit range"}
    if kind is float:
        if math.isfinite(value):
            return {"kind": "value", "value": {"float": value}}
        return {"kind": "bad_kind", "detail": f"non-finite float {value!r}"}
    if kind is datetime.date:
        return {"kind": "value", "value": {"date": value.isoformat()}}
    if kind is datetime.datetime:
        if value.tzinfo is None and value.time() == datetime.time(0):
            return {"kind": "value", "value": {"date": value.date().isoformat()}}
        return {"kind": "bad_kind", "detail": "datetime with a time of day or zone; return a date"}
    if kind is tuple and len(value) == 2 and all(type(v) is int for v in value):
        if all(abs(v) <= MAX_ABS_INT for v in value):
            return {"kind": "value", "value": {"weeks_days": [value[0], value[1]]}}
        return {"kind": "bad_kind", "detail": "(weeks, days) outside the 64-bit range"}
    if kind is tuple:
        return {"kind": "bad_kind", "detail": f"tuple of {len(value)} items; expected (weeks, days) ints"}
    return {"kind": "bad_kind", "detail": trim(f"returned {kind.__name__}")}


def execute(code: CodeType, fd: int, policy: Policy | None = None) -> dict[str, Any]:
    """Run checked module code, call solve(), classify what comes back."""
    namespace = fresh_namespace(policy)
    tracer = make_tracer(namespace, fd)
    install_audit_guard(code, fd)
    start_clocks()
    sys.settrace(tracer)
    try:
        exec(code, namespace)  # noqa: S102 - the point of the executor
        value = namespace["solve"]()
    except MemoryError:
        sys.settrace(None)
        return {"kind": "memory", "detail": "MemoryError: the program ran out of memory"}
    except BaseException as exc:  # noqa: BLE001 - every failure is an outcome
        sys.settrace(None)
        return {"kind": "raised", "detail": describe(exc)}
    intact = sys.gettrace() is tracer
    sys.settrace(None)
    if not intact:
        return _tracer_lost()
    return encode_value(value)


def _tracer_lost() -> dict[str, Any]:
    # CPython drops a trace function that raises (RecursionError or
    # MemoryError inside it); lines after that were not counted, so the
    # line cap cannot be vouched for and the result is not used.
    return {"kind": "line_limit", "detail": "line counting was interrupted; result discarded"}


def child_main(
    reply: str,
    result_fd: int,
    libc: Any = None,
    parent_pid: int = 0,
    policy_name: str = "clinical",
    located: dict[str, Any] | None = None,
) -> NoReturn:
    """Entry point of the process that runs one program. Never returns.

    Everything that parses the untrusted reply as Python (choosing between the
    whole reply and the block `located` in it, parsing, checking) happens
    after the limits are in place."""
    fd = RESULT_FD
    try:
        isolate(result_fd)
        die_with_parent(libc, parent_pid)
        apply_limits()
        if not warnings.filters or warnings.filters[0][:4] != ("ignore", None, Warning, None):
            warnings.simplefilter("ignore")  # usually done once by the server (prepare_parent)
        policy = get_policy(policy_name)
        try:
            prepared = prepare(reply, located)
            del reply
            if prepared.program is None:
                _exit_with(fd, json.dumps({"kind": prepared.kind, "detail": trim(prepared.detail)}).encode())
            code = compile_checked(check(prepared.program, policy, prepared.tree))
        except Rejected as rejected:
            _exit_with(fd, json.dumps({"kind": "rejected", "detail": trim(rejected.reason)}).encode())
        except BaseException as exc:  # noqa: BLE001 - cannot analyse: fail closed
            reason = f"the checker could not analyse the program ({describe(exc)})"
            _exit_with(fd, json.dumps({"kind": "rejected", "detail": trim(reason)}).encode())
        del prepared
        os.write(fd, CHECKED_MARK)
        result = execute(code, fd, policy)  # type: ignore[arg-type]  # compile_checked is typed `object`; it returns a code object
        _exit_with(fd, json.dumps(result, allow_nan=False).encode())
    except MemoryError:
        _exit_with(fd, _MEMORY_MSG)
    except BaseException as exc:  # noqa: BLE001
        try:
            _exit_with(fd, json.dumps({"kind": "crashed", "detail": describe(exc)}).encode())
        finally:
            os._exit(0)
    finally:
        os._exit(0)
