"""A small client of the Chrome DevTools Protocol over Chromium's --remote-debugging-pipe (no extra package):
open pages at a chosen width, read what their scripts logged, and evaluate expressions in them.

Unlike `--dump-dom` with a virtual time budget (which fast-forwards timers and leaves a web worker no real time),
pages here run in real time, so the theme's search worker can build its index and answer.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any


class CDPError(RuntimeError):
    pass


class Chromium:
    """One headless Chromium with one page; `errors` collects console errors, uncaught exceptions and failed
    loads since the last `goto`."""

    def __init__(self, binary: str, profile: Path) -> None:
        cmd_r, self._cmd_w = os.pipe()
        self._out_r, out_w = os.pipe()

        def fds() -> None:  # the pipe protocol: Chromium reads commands on fd 3 and writes replies on fd 4
            a, b = os.dup(cmd_r), os.dup(out_w)  # above 4 first: either pipe end may itself be fd 3 or 4
            os.dup2(a, 3)
            os.dup2(b, 4)
            for fd in (3, 4):
                os.set_inheritable(fd, True)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", f"--user-data-dir={profile}",
             "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=False,
            preexec_fn=fds)
        os.close(cmd_r)
        os.close(out_w)
        self._buf = b""
        self._id = 0
        self.errors: list[str] = []
        self.requests: list[str] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.call(f"{domain}.enable", session=True)

    # -- protocol
    def _send(self, msg: dict[str, Any]) -> None:
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")

    def _read(self, timeout: float) -> dict[str, Any]:
        import select

        end = time.monotonic() + timeout
        while b"\0" not in self._buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self._out_r], [], [], left)[0]:
                raise CDPError("no reply from Chromium")
            chunk = os.read(self._out_r, 1 << 20)
            if not chunk:
                raise CDPError("Chromium closed the pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def _event(self, msg: dict[str, Any]) -> None:
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.errors.append("uncaught: " + str(d.get("exception", {}).get("description") or d.get("text")))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            self.errors.append("log: " + p["entry"].get("text", "") + " " + p["entry"].get("url", ""))
        elif method == "Network.requestWillBeSent":
            self.requests.append(p.get("request", {}).get("url", ""))

    def call(self, method: str, params: dict[str, Any] | None = None, *, session: bool = False,
             timeout: float = 60) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        self._send(msg)
        while True:
            reply = self._read(timeout)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._event(reply)

    # -- pages
    def goto(self, url: str, width: int, timeout: float = 60) -> None:
        """Open `url` in a window `width` px wide (a phone's layout below 600 px) and wait for its load event."""
        self.errors = []
        self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1,
                                                         "mobile": width < 600}, session=True)
        self.call("Page.navigate", {"url": url}, session=True)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            msg = self._read(end - time.monotonic())
            self._event(msg)
            if msg.get("method") == "Page.loadEventFired":
                return
        raise CDPError(f"{url}: no load event in {timeout} s")

    def evaluate(self, expression: str) -> Any:
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in r:
            raise CDPError(f"{expression[:60]}: {r['exceptionDetails'].get('text')}")
        return r.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 30) -> Any:
        """Poll until `expression` is truthy (real time: workers and timers run), returning its value."""
        end = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value or time.monotonic() > end:
                return value
            self.pump(0.2)

    def pump(self, seconds: float) -> None:
        """Read events for a while (so console errors that come after the load are seen)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            import select

            if b"\0" in self._buf or select.select([self._out_r], [], [], max(0.0, end - time.monotonic()))[0]:
                try:
                    self._event(self._read(1))
                except CDPError:
                    return

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except (CDPError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        for fd in (self._cmd_w, self._out_r):
            try:
                os.close(fd)
            except OSError:
                pass
