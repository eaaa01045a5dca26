"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
the browser reads commands from its file descriptor 3 and writes replies and events to 4, each
message one JSON object ended by a NUL byte), so the tests need no driver and no websocket
library: only a Chromium binary.

:func:`find` names the binary (``PREREG_CHROMIUM``, else ``chromium``, ``chromium-browser``,
``google-chrome`` on PATH) or returns None; :class:`Browser` opens one page per call of
:meth:`Browser.visit`, which loads a ``file://`` page, collects everything the page reports as
a problem (console errors and warnings, uncaught exceptions, log entries of level error or
warning, failed loads), measures the laid-out page and takes a full-page PNG screenshot.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

# The flags a closed network needs: without the background-networking ones the browser keeps
# trying (and failing) to reach its vendor's services.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--remote-debugging-pipe",
    "about:blank",
]


def find() -> str | None:
    named = os.environ.get("PREREG_CHROMIUM")
    if named:
        return named if Path(named).is_file() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class Visit:
    """What one page load showed: the problems it reported, its layout and its screenshot."""

    url: str
    problems: list[str] = field(default_factory=list)
    layout: dict = field(default_factory=dict)
    png: bytes = b""
    value: object = None

    def png_size(self) -> tuple[int, int]:
        if self.png[:8] != b"\x89PNG\r\n\x1a\n" or self.png[12:16] != b"IHDR":
            raise ValueError("the screenshot is not a PNG")
        return struct.unpack(">II", self.png[16:24])


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, binary: str, *, width: int = 1200, height: int = 900, timeout: float = 60):
        self.width, self.height, self.timeout = width, height, timeout
        self._profile = tempfile.TemporaryDirectory(prefix="prereg-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire():  # in the child, before exec: its fds 3 and 4 are the two pipe ends
            # Moved out of the way first: a pipe end may itself be fd 3 or 4, and dup2 onto
            # itself would leave it close-on-exec.
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_child_r, from_child_w)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self._proc = subprocess.Popen(
            [
                binary,
                *FLAGS[:-1],
                f"--user-data-dir={self._profile.name}",
                f"--window-size={width},{height}",
                FLAGS[-1],
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire,
            close_fds=False,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict] = []

    # -- the protocol -------------------------------------------------------------------
    def _send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise BrowserError(f"Chromium closed its pipe (exit {self._proc.poll()})")
                self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        wanted = self._send(method, params, session)
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._read(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self._events.append(message)

    def wait_for(self, method: str, session: str) -> dict:
        deadline = time.monotonic() + self.timeout
        for i, event in enumerate(self._events):
            if event["method"] == method and event.get("sessionId") == session:
                return self._events.pop(i)
        while True:
            message = self._read(deadline)
            if message.get("method") == method and message.get("sessionId") == session:
                return message
            if "method" in message:
                self._events.append(message)

    # -- one page -----------------------------------------------------------------------
    def visit(
        self,
        path: Path,
        width: int | None = None,
        screenshot: bool = True,
        evaluate: str | None = None,
    ) -> Visit:
        """Load ``path`` in a window ``width`` pixels wide (default: the browser's), and take a
        full-page screenshot unless ``screenshot`` is false (the page's raster and PNG are
        most of a visit's time: ``Visit.png`` is then empty); ``evaluate``: a JavaScript
        expression whose value (JSON) the visit keeps as ``Visit.value``."""
        width = width or self.width
        url = path.resolve().as_uri()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=session)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        self._events.clear()
        self.call("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", session)
        # Two animation frames: layout and paint done, late console messages delivered.
        layout = self.call(
            "Runtime.evaluate",
            {
                "expression": LAYOUT,
                "awaitPromise": True,
                "returnByValue": True,
            },
            session=session,
        )["result"]["value"]
        value = None
        if evaluate is not None:
            value = self.call(
                "Runtime.evaluate",
                {"expression": evaluate, "returnByValue": True},
                session=session,
            )["result"].get("value")
        png = b""
        if screenshot:
            full = {"width": width, "height": max(self.height, int(layout["scrollHeight"]))}
            self.call(
                "Emulation.setDeviceMetricsOverride",
                {**full, "deviceScaleFactor": 1, "mobile": False},
                session=session,
            )
            shot = self.call(
                "Page.captureScreenshot",
                {"format": "png", "captureBeyondViewport": True},
                session=session,
            )
            png = base64.b64decode(shot["data"])
        visit = Visit(url=url, layout=layout, png=png, value=value)
        visit.problems = [
            p for e in self._events if e.get("sessionId") == session for p in _problems(e)
        ]
        self.call("Target.closeTarget", {"targetId": target})
        return visit

    def close(self) -> None:
        try:
            self._send("Browser.close")
            self._proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self._proc.kill()
            self._proc.wait()
        finally:
            for fd in (self._to_child, self._from_child):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# The boxes a report makes to scroll sideways on purpose, by CSS selector: a table too wide for
# its column (``div.scroll``), a figure that would have to shrink its text below 10 px to fit
# (``div.plot``) and preformatted text. Anything else reaching past the window's right edge is
# listed in ``pastEdge``, even inside a box of its own that scrolls or clips it.
DELIBERATE = ["div.scroll", "div.plot", "pre"]

# What is measured of a laid-out page.  ``overflowing`` names what reaches past the window
# outside a box of its own that scrolls (an element, or a text too long for its line), for the
# message of a page wider than its window.
LAYOUT = (
    "const DELIBERATE = "
    + json.dumps(DELIBERATE)
    + """;
new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => {
  const root = document.documentElement;
  const W = root.clientWidth;
  const images = [...document.images];
  const scrolls = n => {
    for (let p = n.parentElement; p && p !== document.body; p = p.parentElement)
      if (getComputedStyle(p).overflowX !== 'visible') return true;
    return false;
  };
  const overflowing = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n && overflowing.length < 8; n = walker.nextNode()) {
    let box;
    if (n.nodeType === Node.TEXT_NODE) {
      const range = document.createRange(); range.selectNodeContents(n);
      box = range.getBoundingClientRect();
    } else box = n.getBoundingClientRect();
    if (box.right > W + 0.5 && !scrolls(n)) {
      const e = n.nodeType === Node.TEXT_NODE ? n.parentElement : n;
      overflowing.push(`${e.tagName.toLowerCase()}${e.className ? '.' + e.className : ''} ` +
        `to ${Math.round(box.right)} px: ${(n.textContent || '').trim().slice(0, 60)}`);
    }
  }
  // what reaches past the window's right edge anywhere but inside a box named in DELIBERATE
  // (a box made to scroll sideways: a wide table, a figure, preformatted text), however the
  // boxes between clip it: a digest scrolling in a box of its own is past the edge too
  const deliberate = n => {
    const e = n.nodeType === Node.TEXT_NODE ? n.parentElement : n;
    return DELIBERATE.some(s => e.closest(s));
  };
  const pastEdge = [];
  const all = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  for (let n = all.nextNode(); n && pastEdge.length < 8; n = all.nextNode()) {
    let box;
    if (n.nodeType === Node.TEXT_NODE) {
      const range = document.createRange(); range.selectNodeContents(n);
      box = range.getBoundingClientRect();
    } else box = n.getBoundingClientRect();
    if (box.width > 0 && box.right > W + 0.5 && !deliberate(n)) {
      const e = n.nodeType === Node.TEXT_NODE ? n.parentElement : n;
      pastEdge.push(`${e.tagName.toLowerCase()}${e.className ? '.' + e.className : ''} ` +
        `to ${Math.round(box.right)} px: ${(n.textContent || '').trim().slice(0, 60)}`);
    }
  }
  const toc = [...document.querySelectorAll('nav a[href^="#"]')];
  done({
    title: document.title,
    scrollWidth: root.scrollWidth,
    clientWidth: W,
    innerWidth: window.innerWidth,
    scrollHeight: root.scrollHeight,
    brokenImages: images.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src),
    svgs: document.querySelectorAll('svg').length,
    headings: document.querySelectorAll('h1, h2, h3').length,
    headingsWithoutId: [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]
      .filter(h => !h.id).map(h => h.textContent.slice(0, 60)),
    toc: toc.map(a => a.getAttribute('href').slice(1)),
    tocTargetsMissing: toc.filter(a => !document.getElementById(a.getAttribute('href').slice(1)))
      .map(a => a.getAttribute('href')),
    sections: document.querySelectorAll('details.section').length,
    sectionHeadings: [...document.querySelectorAll('details.section > summary > h2')].map(h => h.id),
    overflowing,
    pastEdge,
    // the captions whose text reaches past the window's edge (a table's caption is as wide as
    // its table: the caption of a table scrolling on a phone was cut off at the edge)
    captionsPastEdge: [...document.querySelectorAll('caption')].filter(c => {
      const range = document.createRange(); range.selectNodeContents(c);
      const box = range.getBoundingClientRect();
      return box.width > 0 && box.right > W + 0.5;
    }).map(c => c.textContent.trim().slice(0, 60)),
    // the tables that scroll sideways in their own box, by caption
    scrollingTables: [...document.querySelectorAll('div.scroll')]
      .filter(d => d.scrollWidth > d.clientWidth + 1)
      .map(d => (d.querySelector('caption') || d).textContent.trim().slice(0, 60)),
    // each inline figure: its smallest text as drawn (font size in the figure's units times
    // the scale the page draws it at; rotated text measured along its baseline), its width
    // and the width of the box it sits in
    // (a figure not drawn, as a narrow twin on a desktop, is listed as not shown)
    figures: [...document.querySelectorAll('svg')].map(svg => {
      const box = svg.parentElement;
      const twin = box.classList.contains('narrow') ? 'narrow' : box.classList.contains('wide') ? 'wide' : '';
      if (svg.getClientRects().length === 0)
        return {id: (svg.closest('figure') || {}).id || '', twin, shown: false};
      const sizes = [...svg.querySelectorAll('text')].map(t => {
        const m = t.getScreenCTM();
        return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
      });
      return {
        id: (svg.closest('figure') || {}).id || '',
        twin,
        shown: true,
        smallestText: sizes.length ? Math.min(...sizes) : null,
        width: svg.getBoundingClientRect().width,
        boxWidth: box.clientWidth,
        scrolls: box.scrollWidth > box.clientWidth,
      };
    }),
    // the page's Chinese, Japanese and Korean characters (up to 64), each drawn alone on a
    // canvas in the font of the element it is in: a character no font has a glyph for is
    // drawn as the same empty box as every other such character
    cjk: (() => {
      const wide = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/u;
      const seen = new Map();
      const texts = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let n = texts.nextNode(); n && seen.size < 64; n = texts.nextNode())
        for (const ch of n.textContent)
          if (wide.test(ch) && !seen.has(ch) && seen.size < 64) seen.set(ch, n.parentElement);
      const drawn = [...seen].map(([ch, e]) => {
        const style = getComputedStyle(e);
        const c = document.createElement('canvas');
        c.width = c.height = 40;
        const g = c.getContext('2d');
        g.font = `${style.fontStyle} ${style.fontWeight} 32px ${style.fontFamily}`;
        g.fillText(ch, 2, 34);
        return c.toDataURL();
      });
      return {chars: [...seen.keys()].join(''), distinct: new Set(drawn).size};
    })(),
  });
})))
"""
)


CONSOLE_PROBLEMS = ("error", "warning", "assert")


def _problems(event: dict) -> list[str]:
    method, params = event["method"], event.get("params", {})
    if method == "Runtime.consoleAPICalled" and params.get("type") in CONSOLE_PROBLEMS:
        text = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
        return [f"console.{params['type']}: {text}"]
    if method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        text = details.get("exception", {}).get("description") or details.get("text", "")
        return [f"uncaught exception: {text}"]
    if method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
        entry = params["entry"]
        return [
            f"log {entry['level']} ({entry.get('source')}): {entry.get('text')} {entry.get('url', '')}"
        ]
    if method == "Network.loadingFailed" and not params.get("canceled"):
        return [f"load failed: {params.get('errorText')} ({params.get('type')})"]
    return []
