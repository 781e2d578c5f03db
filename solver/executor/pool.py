"""Client side: fork-server processes, `Executor` for batches, `run_program` for one.

The calling process (possibly multi-threaded, e.g. under pytest) never forks
directly: it starts a fork server with subprocess (fork+exec of a new
interpreter), and talks to it over two pipes; on Linux the other workers'
servers are forked by that one once it is warm (SpareServer).  Each server runs
one program at a time; `Executor(workers=n)` drives n servers from n threads.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterable

from solver.executor.classify import outcome_wire
from solver.executor.extract import load_markdown, locate_blocks
from solver.executor.outcome import Kind, Outcome
from solver.executor.policy import (
    DEFAULT_POLICY,
    HASH_SEED,
    MAX_REPLY_CHARS,
    TIME_ZONE,
    TZ_RULE,
    WALL_SECONDS,
    get_policy,
)
from solver.executor.wire import encode_request, read_payload, write_all

_ROOT = str(Path(__file__).resolve().parents[2])
_DEPTH = 2              # requests queued at each server by Executor.map
_REPLY_GRACE_S = 15.0   # beyond the child's wall limit, before a server is presumed hung
_START_TIMEOUT_S = 30.0


def interpreter_command(entry: str) -> list[str]:
    """argv that starts a fresh interpreter running `entry` (a statement).

    Isolated like `python -I`, but the hash seed is honoured: -S (no site, so
    no .pth file runs and only the standard library and this project can be
    imported), -P (no script directory or cwd on sys.path), and an
    environment from clean_env() with nothing in it but the seed, so -E has
    nothing to ignore."""
    boot = f"import sys; sys.path.insert(0, {_ROOT!r}); {entry}"
    return [sys.executable, "-S", "-P", "-c", boot]


def clean_env() -> dict[str, str]:
    """The scrubbed environment servers and fresh interpreters start with."""
    return {"PYTHONHASHSEED": str(HASH_SEED), "LC_ALL": "C", "PATH": os.defpath, "TZ": TZ_RULE}


def server_env() -> dict[str, str]:
    """A fork server's environment: clean_env() and LD_BIND_NOW, so the dynamic
    linker resolves every symbol once at start-up; otherwise each child
    resolves the ones the server never called itself, writing (and so
    copying) pages of the symbol tables.  The server clears its environment
    before serving (sandbox.fix_time_zone), so children see only TZ."""
    return {**clean_env(), "LD_BIND_NOW": "1"}


class ServerError(RuntimeError):
    """A fork server could not be started."""


class ForkServer:
    """One warm fork-server process and the pipes to it.

    The constructor starts the process; `wait_ready()` waits for its hello, so
    several servers can boot at the same time.  With `spares=n` the server,
    once warm, forks n copies of itself before serving (see SpareServer): n
    more servers for the price of n forks instead of n interpreter start-ups."""

    def __init__(self, wait: bool = True, spares: int = 0) -> None:
        if os.name != "posix":
            raise ServerError("the executor needs a POSIX system (fork, resource limits)")
        self.hash_seed: int | None = None
        self._ready = False
        self.spares: list[SpareServer] = []
        theirs, ours = _spare_pipes(spares)
        try:
            self._proc = subprocess.Popen(
                interpreter_command(f"from solver.executor.server import main; sys.exit(main({theirs!r}))"),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=None,
                env=server_env(),
                cwd="/",
                close_fds=True,
                pass_fds=[fd for pair in theirs for fd in pair],
                start_new_session=True,
            )
        except BaseException:
            _close_all([fd for pair in ours for fd in pair])
            raise
        finally:
            _close_all([fd for pair in theirs for fd in pair])
        self.spares = [SpareServer(to_spare, from_spare) for to_spare, from_spare in ours]
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in = self._proc.stdin.fileno()
        self._out = self._proc.stdout.fileno()
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Read the server's hello; ServerError if it did not come."""
        if self._ready:
            return
        hello = self._read_json(_START_TIMEOUT_S)
        spare_pids = hello.get("spares") if isinstance(hello, dict) else None
        if (
            not isinstance(hello, dict) or not hello.get("ready") or hello.get("hash_seed") != HASH_SEED
            or not isinstance(spare_pids, list) or len(spare_pids) != len(self.spares)
        ):
            self.kill()
            for spare in self.spares:
                spare.kill()
            raise ServerError("executor fork server failed to start (see stderr)")
        for spare, pid in zip(self.spares, spare_pids):
            spare.adopt(pid)
        self.hash_seed = hello["hash_seed"]
        self._ready = True

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def _read(self, timeout: float) -> bytes | None:
        ready, _, _ = select.select([self._out], [], [], timeout)
        if not ready:
            return None
        try:
            return read_payload(self._out)
        except (OSError, ValueError):
            return None

    def _read_json(self, timeout: float) -> Any | None:
        payload = self._read(timeout)
        try:
            return None if payload is None else json.loads(payload)
        except ValueError:
            return None

    def run(self, source: str, policy: str = DEFAULT_POLICY) -> Outcome:
        """Send one program, wait for its outcome; a dead or hung server is replaced
        by the caller and this program is reported as `crashed`."""
        early = _early(source, policy)
        if early is not None:
            return early
        failed = self.send(source, policy)
        return failed if failed is not None else self.receive(policy)

    def send(self, source: str, policy: str) -> Outcome | None:
        """Queue one request (the server reads it when it is free); an outcome
        only if the server is gone (then it has been killed)."""
        self.wait_ready()
        try:
            write_all(self._in, encode_request(request(source, policy)))
        except (OSError, ValueError) as exc:
            self.kill()
            return _outcome("crashed", f"executor server unavailable: {type(exc).__name__}", policy)
        return None

    def receive(self, policy: str) -> Outcome:
        """The outcome of the oldest request sent; `crashed` (and the server
        killed) if it died or hung."""
        payload = self._read(WALL_SECONDS + _REPLY_GRACE_S)
        try:
            wire = None if payload is None else outcome_wire(payload)
        except ValueError:
            wire = None
        if wire is None:
            self.kill()
            return _outcome("crashed", "executor server died or hung; restarted", policy)
        return Outcome.from_wire({**wire, "policy": policy, "hash_seed": self.hash_seed, "time_zone": TIME_ZONE})

    def close(self) -> None:
        """Ask the server to exit (EOF on its stdin) and reap it."""
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=WALL_SECONDS + 2)
        except subprocess.TimeoutExpired:
            self.kill()
        if self._proc.stdout is not None:
            self._proc.stdout.close()

    def kill(self) -> None:
        """Kill the server; its running child dies with it (PR_SET_PDEATHSIG)."""
        try:
            os.killpg(self._proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        self._proc.kill()
        self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


class SpareServer(ForkServer):
    """A fork server forked by a warm one (ForkServer(spares=n)) before it
    served anything, so in the same state as a freshly started one.  It runs
    in a session of its own, talks over its own pipes, and is a child of the
    server that forked it, which reaps it before exiting (so its CPU time is
    counted like any server's).  Not a child of this process: it is watched
    through a pidfd (Linux) and signalled through it, never by a bare pid."""

    def __init__(self, to_spare: int, from_spare: int) -> None:
        self.hash_seed = None
        self._ready = False
        self.spares = []
        self._in, self._out = to_spare, from_spare
        self._pid = 0
        self._pidfd: int | None = None

    def adopt(self, pid: Any) -> None:
        """Called with the pid its parent reported; without a pidfd it counts as dead."""
        if isinstance(pid, int) and pid > 0:
            self._pid = pid
            try:
                self._pidfd = os.pidfd_open(pid)
            except OSError:
                self._pidfd = None

    def wait_ready(self) -> None:
        if self._ready:
            return
        hello = self._read_json(_START_TIMEOUT_S)
        if (
            not isinstance(hello, dict) or not hello.get("ready") or hello.get("hash_seed") != HASH_SEED
            or hello.get("pid") != self._pid or self._pidfd is None
        ):
            self.kill()
            raise ServerError("executor spare fork server failed to start")
        self.hash_seed = hello["hash_seed"]
        self._ready = True

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def alive(self) -> bool:
        return self._pidfd is not None and not self._exited(0)

    def _exited(self, timeout: float) -> bool:
        assert self._pidfd is not None
        return bool(select.select([self._pidfd], [], [], timeout)[0])

    def close(self) -> None:
        """EOF on its stdin, then wait for it to exit (its parent reaps it)."""
        _close_all([self._in])
        self._in = -1
        if self._pidfd is not None and not self._exited(WALL_SECONDS + 2):
            self.kill()
        self._release()

    def kill(self) -> None:
        if self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except OSError:
                pass
            self._exited(WALL_SECONDS + 2)
        self._release()

    def _release(self) -> None:
        _close_all([fd for fd in (self._in, self._out, self._pidfd) if fd is not None and fd >= 0])
        self._in = self._out = -1
        self._pidfd = None


def _spare_pipes(n: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """For n spare servers: the ends their server keeps (request read, answer
    write) and ours (request write, answer read).  None where fork servers
    cannot be watched by pidfd, or a pipe would land on fds 0-2."""
    theirs: list[tuple[int, int]] = []
    ours: list[tuple[int, int]] = []
    if n <= 0 or not _spares_supported():
        return theirs, ours
    try:
        for _ in range(n):
            request_r, request_w = os.pipe()
            answer_r, answer_w = os.pipe()
            theirs.append((request_r, answer_w))
            ours.append((request_w, answer_r))
    except OSError:
        _close_all([fd for pair in theirs + ours for fd in pair])
        return [], []
    if min(fd for pair in theirs for fd in pair) <= 2:
        _close_all([fd for pair in theirs + ours for fd in pair])
        return [], []
    return theirs, ours


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


_pidfds_work: bool | None = None


def _spares_supported() -> bool:
    """Linux with pidfds that the kernel (and any seccomp filter) allows; probed once."""
    global _pidfds_work
    if _pidfds_work is None:
        _pidfds_work = False
        if sys.platform.startswith("linux") and hasattr(os, "pidfd_open") and hasattr(signal, "pidfd_send_signal"):
            try:
                os.close(os.pidfd_open(os.getpid()))
                _pidfds_work = True
            except OSError:
                pass
    return _pidfds_work


def request(source: str, policy: str) -> dict[str, Any]:
    """The frame a server (or a fresh interpreter) gets for one reply: the reply,
    the policy, and the fenced blocks the caller located in it (CommonMark
    parsing stays out of the server; see extract.py).  A str subclass goes as
    the plain text it holds (marshal takes exact types only)."""
    text = source if type(source) is str else str.__str__(source)
    return {"source": text, "policy": policy, "located": locate_blocks(text)}


def _outcome(kind: Kind, detail: str, policy: str) -> Outcome:
    return Outcome(kind=kind, detail=detail, policy=policy, hash_seed=HASH_SEED)


def _early(source: Any, policy: str) -> Outcome | None:
    """Outcomes decided in the caller: wrong type, or too long to ship."""
    if not isinstance(source, str):
        return _outcome("no_program", f"expected program text, got {type(source).__name__}", policy)
    if len(source) > MAX_REPLY_CHARS:  # never ship an oversized reply to the server
        return _outcome("rejected", f"reply is {len(source)} characters, over {MAX_REPLY_CHARS}", policy)
    return None


class _Slot:
    """A server that is restarted on demand if it died."""

    def __init__(self) -> None:
        self.server: ForkServer | None = None

    def drain(self, take: Callable[[], int | None], items: list[Any], results: list[Any], policy: str) -> None:
        """Run items taken from `take` until it is exhausted, keeping up to
        _DEPTH requests queued at the server, so it starts the next program
        as soon as it has answered one (the answers come back in order).  If
        the server dies, the program it was running is `crashed` and the ones
        queued behind it, which never started, go to a fresh server."""
        pending: deque[int] = deque()
        while True:
            while len(pending) < _DEPTH:
                index = take()
                if index is None:
                    break
                early = _early(items[index], policy)
                if early is not None:
                    results[index] = early
                    continue
                pending.append(index)
                if self.server is None or not self.server.alive:
                    self._resend(pending, items, results, policy)
                    continue
                failed = self.server.send(items[index], policy)
                if failed is not None:  # it died: the oldest queued was running
                    results[pending.popleft()] = failed
                    self.server = None
                    self._resend(pending, items, results, policy)
            if not pending:
                return
            if self.server is None:
                self._resend(pending, items, results, policy)
                continue
            results[pending.popleft()] = self.server.receive(policy)
            if not self.server.alive:
                self.server = None
                self._resend(pending, items, results, policy)

    def _resend(self, pending: deque[int], items: list[Any], results: list[Any], policy: str) -> None:
        """Start a server and send it every queued request; a send failing makes
        the oldest queued one `crashed` and starts over with the rest."""
        while pending:
            self.server = ForkServer()
            for queued in pending:
                failed = self.server.send(items[queued], policy)
                if failed is not None:
                    results[pending.popleft()] = failed
                    self.server = None
                    break
            else:
                return

    def run(self, source: str, policy: str) -> Outcome:
        if self.server is None or not self.server.alive:
            self.server = ForkServer()
        outcome = self.server.run(source, policy)
        if not self.server.alive:
            self.server = None
        return outcome

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None


class Executor:
    """Runs programs, each in a fresh forked child, on `workers` fork servers.

    Use as a context manager; `map` returns outcomes in input order.  `policy`
    (`clinical` by default, or `paper`) chooses what syntax programs may use;
    the isolation is the same under both.
    """

    def __init__(self, workers: int | None = os.cpu_count(), policy: str = DEFAULT_POLICY) -> None:
        self.workers = max(1, int(workers or 1))
        self.policy = get_policy(policy).name
        self._slots: list[_Slot] = []
        self._lock = threading.Lock()

    def __enter__(self) -> "Executor":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def start(self) -> None:
        """Start the servers now (otherwise the first call does): one
        interpreter, which forks the others once it is warm where it can (see
        SpareServer), else one interpreter each, all booting at once."""
        with self._lock:
            new: list[ForkServer] = []
            try:
                missing = self.workers - len(self._slots)
                if missing > 0:
                    first = ForkServer(wait=False, spares=missing - 1)
                    new = [first, *first.spares]
                    while len(new) < missing:
                        new.append(ForkServer(wait=False))
                    load_markdown()  # meanwhile: the reply parser, needed for the first fenced reply
                for index, server in enumerate(new):
                    try:
                        server.wait_ready()
                    except ServerError:
                        if not isinstance(server, SpareServer):
                            raise
                        new[index] = ForkServer()  # a spare that did not come up: an interpreter of its own
            except BaseException:
                for server in new:
                    server.kill()
                raise
            for server in new:
                slot = _Slot()
                slot.server = server
                self._slots.append(slot)

    def server_pids(self) -> list[int]:
        """Process ids of the live fork servers (long-lived descendants of this process)."""
        return [s.server.pid for s in self._slots if s.server is not None and s.server.alive]

    def run(self, source: str, policy: str | None = None) -> Outcome:
        """Run one program on the first server (serialised)."""
        chosen = self.policy if policy is None else get_policy(policy).name
        self.start()
        with self._lock:
            return self._slots[0].run(source, chosen)

    def map(self, sources: Iterable[str], policy: str | None = None) -> list[Outcome]:
        """Run every program; results in input order."""
        chosen = self.policy if policy is None else get_policy(policy).name
        items = list(sources)
        self.start()
        results: list[Outcome | None] = [None] * len(items)
        cursor = iter(range(len(items)))
        lock = threading.Lock()

        def take() -> int | None:
            with lock:
                return next(cursor, None)

        errors: list[str] = []

        def drain(slot: _Slot) -> None:
            try:
                slot.drain(take, items, results, chosen)
            except Exception as exc:  # noqa: BLE001 - e.g. a server failing to restart
                if slot.server is not None:
                    slot.server.kill()
                    slot.server = None
                errors.append(f"executor error: {exc}"[:300])

        with self._lock:
            used = self._slots[: max(1, min(len(self._slots), len(items)))]
            if len(used) == 1:
                drain(used[0])
            else:
                threads = [threading.Thread(target=drain, args=(s,), daemon=True) for s in used]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
        missing = errors[0] if errors else "no result"
        return [r if r is not None else _outcome("crashed", missing, chosen) for r in results]

    def shutdown(self) -> None:
        """Stop every server and reap it; the last first, so that spare servers
        have exited when the server that forked them (and reaps them) is asked to."""
        with self._lock:
            for slot in reversed(self._slots):
                slot.close()
            self._slots.clear()


_default: Executor | None = None
_default_lock = threading.Lock()
_atexit_registered = False


def _default_executor() -> Executor:
    global _default, _atexit_registered
    with _default_lock:
        if _default is None:
            _default = Executor(workers=1)
            if not _atexit_registered:
                atexit.register(shutdown)
                _atexit_registered = True
        return _default


def run_program(source: str, policy: str = DEFAULT_POLICY) -> Outcome:
    """Run one program (or a model reply holding one) in a fresh child process,
    under `policy` (`clinical` by default, or `paper`)."""
    chosen = get_policy(policy).name
    return _default_executor().run(source, chosen)


def server_pids() -> list[int]:
    """Fork-server pids of the module-level executor used by run_program."""
    return [] if _default is None else _default.server_pids()


def shutdown() -> None:
    """Stop the module-level executor's fork server (it restarts on next use)."""
    global _default
    with _default_lock:
        if _default is not None:
            _default.shutdown()
            _default = None
