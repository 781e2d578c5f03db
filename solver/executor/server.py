"""The fork server: a warm, single-threaded process that forks one child per program.

It is started once (by the client in pool.py) as `python -S -P` with the
environment of pool.server_env (hash seed, LC_ALL, PATH, TZ, LD_BIND_NOW),
imports the allowed modules and the checker, and then serves requests on
stdin/stdout (frames of wire.py): one request `{"source": ..., "policy": ...,
"located": ...}` is answered by the raw result of the child that ran it, or by
an outcome decided without a child.  Each program gets a fresh forked child
(see sandbox.py), so nothing is shared between programs, while the
interpreter start-up and imports are paid once.  Forking is safe here because
this process never starts a thread.

Every page this process writes between two forks is copied once more (the
fork made it copy-on-write), so the per-program path does little: no JSON,
no classification (the client does that, classify.py).
"""
from __future__ import annotations

import gc
import json
import os
import select
import signal
import sys
import time
import warnings

TYPE_CHECKING = False  # `typing` stays out of the fork server (see __init__)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

from solver.executor import extract, sandbox
from solver.executor.classify import early
from solver.executor.policy import CLINICAL, DEFAULT_POLICY, HASH_SEED, POLICIES, WALL_SECONDS
from solver.executor.wire import encode_frame, encode_result, read_request, write_all, write_frame

_MAX_RESULT_BYTES = 64 * 1024


# --- one program ----------------------------------------------------------------------------


def _kill_group(pid: int) -> None:
    for kill, target in ((os.killpg, pid), (os.kill, pid)):
        try:
            kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def run_one(
    reply: str, libc: Any = None, policy: str = DEFAULT_POLICY, located: dict[str, Any] | None = None
) -> bytes:
    """Fork a child for the reply, collect its result; the answer frame to send.
    The child finds the program in the reply and checks it, under its limits;
    what it wrote goes back raw, and the client classifies it (classify.py),
    so that this process, whose every written page is copied after a fork,
    does little per program."""
    decided = extract.precheck(reply)
    if decided is not None:
        return encode_frame(early(decided.kind or "no_program", decided.detail))
    if policy not in POLICIES:
        return encode_frame(early("rejected", f"unknown executor policy {policy!r}"))
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    start = time.monotonic()
    try:
        pid = os.fork()
    except OSError as exc:  # EAGAIN/ENOMEM: report it, keep serving
        os.close(read_fd)
        os.close(write_fd)
        return encode_frame(early("crashed", f"could not start a child process: {exc.strerror}"))
    if pid == 0:  # child
        try:
            os.close(read_fd)
            sandbox.child_main(reply, write_fd, libc, parent, policy, located)
        finally:
            os._exit(70)
    os.close(write_fd)
    deadline = start + WALL_SECONDS
    try:
        data, killed, status, rusage = _collect(pid, read_fd, deadline)
    finally:
        os.close(read_fd)
    cpu = rusage.ru_utime + rusage.ru_stime
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    return encode_result(data, sig, code, cpu, time.monotonic() - start, killed)


def _collect(pid: int, fd: int, deadline: float) -> tuple[bytes, bool, int, Any]:
    """Read the child's result and reap it; kill it at the deadline.

    On Linux a pidfd makes the child's exit pollable, and the server waits on
    that alone: the child's result sits in the pipe until it has exited, and
    nobody has to be woken for each write.  A result is at most about 3.7 KB
    (a detail of 300 characters, each at most 12 bytes once JSON-escaped),
    within even a one-page pipe, so the child never blocks on it.  Elsewhere the server reads the pipe to EOF and
    then polls waitpid(WNOHANG).
    """
    pidfd = _pidfd(pid)
    if pidfd is not None:
        return _collect_pidfd(pid, fd, pidfd, deadline)
    data = bytearray()  # no pidfd: read the pipe to EOF, then poll waitpid
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    killed = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            killed = True
            break
        if poller.poll(remaining * 1000):
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            if len(data) < _MAX_RESULT_BYTES:
                data += chunk
    while not killed:
        reaped, status, rusage = os.wait4(pid, os.WNOHANG)
        if reaped:
            return bytes(data), False, status, rusage
        if time.monotonic() >= deadline:
            killed = True
            break
        time.sleep(0.0002)
    _kill_group(pid)
    _, status, rusage = os.wait4(pid, 0)
    return bytes(data), True, status, rusage


def _drain(fd: int) -> bytes:
    """Whatever is in the pipe now, at most _MAX_RESULT_BYTES, without blocking
    (the writer is gone).  One read: a pipe read returns all that is buffered,
    up to the size asked for."""
    os.set_blocking(fd, False)
    try:
        return os.read(fd, _MAX_RESULT_BYTES)
    except BlockingIOError:
        return b""


def _collect_pidfd(pid: int, fd: int, pidfd: int, deadline: float) -> tuple[bytes, bool, int, Any]:
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        exited = False
        while not exited:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            exited = bool(poller.poll(remaining * 1000))
    finally:
        os.close(pidfd)
    if not exited:
        _kill_group(pid)
    _, status, rusage = os.wait4(pid, 0)
    return _drain(fd), not exited, status, rusage


def _pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return opener(pid)
    except OSError:
        return None


# --- the serving loop -----------------------------------------------------------------------


def _libc() -> Any:
    """libc handle for prctl(PR_SET_PDEATHSIG), Linux only; None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        # Resolve and call prctl once here (PR_SET_PDEATHSIG 0 is this
        # process's own default), so children find the ctypes call path built.
        libc.prctl(1, 0, 0, 0, 0)
        return libc
    except (OSError, ImportError, AttributeError):
        return None


def hash_seed() -> int:
    """This interpreter's fixed hash seed; refuses to serve with a random one."""
    seed = os.environ.get("PYTHONHASHSEED")
    if seed != str(HASH_SEED) or sys.flags.hash_randomization != (1 if HASH_SEED else 0):
        raise SystemExit(f"executor: started without PYTHONHASHSEED={HASH_SEED}")
    return HASH_SEED


# A program like the ones children run: an import, a function, arithmetic, a
# comparison, a comprehension, a non-ASCII name (the parser's NFKC path).
_WARM_PROGRAM = (
    "import math\nfrom datetime import date\ndef solve():\n    \u00e9 = 1\n"
    "    if \u00e9 >= 1 and date(2020, 1, 31).day:\n        return round(sum([math.sqrt(x) for x in range(3)]) * 2.5)\n"
    "    return (1, 2)\n"
)
# Python 3.11 quickens a function's bytecode once it has run about eight times
# and then specialises its instructions in place.  A child that did this
# would write (and so copy) those code pages; done here, every child
# inherits code that is already specialised.
_WARM_ROUNDS = 8


def warm_up() -> None:
    """Touch lazily-initialised machinery, run the child's analysis path
    (extraction, checker, compiler, result encoding) a few times and build
    the programs' namespaces, so children inherit all of it ready."""
    import datetime

    datetime.datetime.strptime("2020-01-31", "%Y-%m-%d")
    from solver.executor.checker import check, compile_checked

    for _ in range(_WARM_ROUNDS):
        prepared = extract.prepare(_WARM_PROGRAM, None)
        assert prepared.program is not None
        compile_checked(check(prepared.program, CLINICAL, prepared.tree))
        for value in (2, 1.5, datetime.date(2020, 1, 31), (1, 2)):
            json.dumps(sandbox.encode_value(value), allow_nan=False)
    sandbox.prepare_parent()
    sandbox.prebuild_namespaces()
    gc.collect()
    gc.freeze()  # children inherit these objects; keep the collector (and COW faults) off them


def main(spares: list[tuple[int, int]] | tuple[()] = ()) -> int:
    """Serve requests from stdin until it closes.  `spares` holds, per spare
    server, the (request, answer) pipe ends the client passed: once warm, this
    server forks one copy of itself per pair (see start_spares)."""
    # Default actions, which children need (and then need not reset).  The
    # server runs in a session of its own, so no terminal's ^C reaches it.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGXCPU):
        signal.signal(sig, signal.SIG_DFL)
    seed = hash_seed()
    sandbox.fix_time_zone()  # TZ=UTC only: nothing here needs more, and children then have nothing to clear
    libc = _libc()
    warm_up()
    spare_pids = start_spares(spares)
    write_frame(1, {"ready": True, "pid": os.getpid(), "hash_seed": seed, "spares": spare_pids})
    try:
        serve(libc)
    finally:
        for pid in spare_pids:  # they exit when the client closes their pipes
            try:
                if pid is not None:
                    os.waitpid(pid, 0)
            except ChildProcessError:
                pass
    return 0


def start_spares(spares: list[tuple[int, int]] | tuple[()]) -> list[int | None]:
    """Fork one copy of this warm server per (request fd, answer fd) pair; the
    copy becomes a server of its own on those pipes, in its own session.
    Returns the copies' pids, None where the fork failed (the client then
    starts an interpreter instead); a copy returns [] and forks no further."""
    pids: list[int | None] = []
    fds = [fd for pair in spares for fd in pair]
    for request_fd, answer_fd in spares:
        try:
            pid = os.fork()
        except OSError:
            pids.append(None)
            continue
        if pid == 0:
            os.setsid()
            os.dup2(request_fd, 0)
            os.dup2(answer_fd, 1)
            for fd in fds:
                os.close(fd)
            return []
        pids.append(pid)
    for fd in fds:
        os.close(fd)
    return pids


def serve(libc: Any) -> None:
    """Answer requests from stdin, one program at a time, until it closes."""
    while True:
        request = read_request(0)
        if request is None:
            return
        source = request.get("source") if isinstance(request, dict) else None
        policy = _policy_name(request)
        located = request.get("located") if isinstance(request, dict) else None
        if not isinstance(source, str):
            answer = encode_frame(early("no_program", "request carried no program text"))
        else:
            answer = run_one(source, libc, policy, located if isinstance(located, dict) else None)
        del source, request
        write_all(1, answer)


def _policy_name(request: Any) -> str:
    """The request's policy name ("" for a malformed one, which is then refused)."""
    policy = request.get("policy", DEFAULT_POLICY) if isinstance(request, dict) else DEFAULT_POLICY
    return policy if isinstance(policy, str) else ""


def fresh_main() -> None:
    """One-shot mode for a fresh interpreter per program (the paper's way):
    the request frame (as sent to a fork server) on stdin, outcome JSON on
    stdout; this process becomes the child."""
    request = read_request(0)
    request = request if isinstance(request, dict) else {}
    reply = request.get("source")
    policy = _policy_name(request)
    located = request.get("located")
    decided = extract.precheck(reply)
    if decided is not None:
        os.write(1, json.dumps({"kind": decided.kind, "detail": decided.detail}).encode())
        os._exit(0)
    assert isinstance(reply, str)  # precheck has answered every reply that is not text
    if policy not in POLICIES:
        os.write(1, json.dumps({"kind": "rejected", "detail": f"unknown executor policy {policy!r}"}).encode())
        os._exit(0)
    warnings.simplefilter("ignore")
    sandbox.fix_time_zone()
    sandbox.child_main(reply, os.dup(1), policy_name=policy, located=located if isinstance(located, dict) else None)


if __name__ == "__main__":
    sys.exit(main())
