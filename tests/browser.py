"""A headless Chromium driven over the DevTools protocol, for the report's tests.

Why this and not playwright or a WebDriver: Debian's ``chromium`` speaks
the Chrome DevTools Protocol itself over ``--remote-debugging-pipe`` (file
descriptors 3 and 4, one JSON message per NUL-terminated chunk), so the
tests need no npm package, no driver binary matched to the browser's
version, no port to pick or race for, and nothing that could download a
browser of its own. What the checks need is a few protocol calls: open a
tab, listen to the console (``Runtime``, ``Log``) and to every request
(``Network.requestWillBeSent``, which fires for a request that fails too:
the machine's closed network cannot hide one), load a ``file://`` page,
wait for its load event, take a full-page screenshot.

One browser serves every page of a test session (a fresh profile in a
temporary directory), started as the machine notes prescribe for root:
``--headless --no-sandbox --disable-gpu`` and no background networking.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path

from PIL import Image

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars", "--mute-audio",
         "--remote-debugging-pipe")
VIEWPORT = (1280, 900)


def find_chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _above_nine(fd: int) -> int:
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class BrowserError(Exception):
    pass


@dataclass
class PageLoad:
    """What loading one page showed."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every URL but the page's and data:
    screenshot: bytes = b""  # PNG, the whole page
    values: list = field(default_factory=list)  # what each expression evaluated to

    @property
    def problems(self) -> list[str]:
        return ([f"console: {text}" for text in self.console_errors]
                + [f"request: {url}" for url in self.requests])


class Browser:
    """A headless Chromium; :meth:`load` a page, :meth:`close` at the end."""

    def __init__(self, executable: str, timeout: float = 300.0):
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="ireebench-chromium-")
        commands_read, self._commands = os.pipe()
        self._replies, replies_write = os.pipe()
        # The child's ends above 9, so that moving them to 3 and 4 overwrites neither.
        commands_read, replies_write = (_above_nine(commands_read), _above_nine(replies_write))

        # The protocol's descriptors must be 3 and 4 in the browser: bash moves
        # them there (bash: descriptors above 9; no preexec_fn, unsafe with threads).
        move = (f'exec "$@" 3<&{commands_read} 4>&{replies_write} '
                f"{commands_read}<&- {replies_write}>&-")
        self._process = subprocess.Popen(
            ["/bin/bash", "-c", move, "chromium", executable, *FLAGS,
             f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            pass_fds=(commands_read, replies_write))
        os.close(commands_read)
        os.close(replies_write)
        self._next_id = 0
        self._messages: queue.Queue = queue.Queue()
        self._events: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.version = self.call("Browser.getVersion")["product"]

    def _read(self) -> None:
        buffer = b""
        with os.fdopen(self._replies, "rb", buffering=0) as replies:
            while chunk := replies.read(1 << 16):
                buffer += chunk
                *messages, buffer = buffer.split(b"\0")
                for message in messages:
                    self._messages.put(json.loads(message))
        self._messages.put(None)  # the browser went away

    def _drain_stderr(self) -> None:
        for line in self._process.stderr:
            self._stderr.append(line)

    def call(self, method: str, params: dict | None = None, session: str | None = None):
        """Sends a command and returns its result; events meanwhile are kept."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._get()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self._events.append(reply)

    def _get(self) -> dict:
        try:
            reply = self._messages.get(timeout=self.timeout)
        except queue.Empty:
            raise BrowserError(f"no answer from the browser in {self.timeout:g} s") from None
        if reply is None:
            raise BrowserError("the browser exited: "
                               + b"".join(self._stderr[-5:]).decode(errors="replace"))
        return reply

    def _wait_for(self, method: str, session: str) -> None:
        for event in self._events:
            if event.get("method") == method and event.get("sessionId") == session:
                return
        while True:
            reply = self._get()
            if "method" in reply:
                self._events.append(reply)
                if reply["method"] == method and reply.get("sessionId") == session:
                    return

    def load(self, path: Path, viewport: tuple[int, int] = VIEWPORT,
             evaluate: tuple[str, ...] = ()) -> PageLoad:
        """Loads ``path`` from file:// in a new tab of ``viewport`` CSS pixels: its
        console errors, its requests, a full-page screenshot and the values of the
        JavaScript expressions ``evaluate`` (each returning JSON: sizes, texts)."""
        url = Path(path).resolve().as_uri()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        self._events.clear()
        try:
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.call(f"{domain}.enable", session=session)
            width, height = viewport
            self.call("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1,
                       "mobile": False}, session=session)
            navigation = self.call("Page.navigate", {"url": url}, session=session)
            if navigation.get("errorText"):
                raise BrowserError(f"{url}: {navigation['errorText']}")
            self._wait_for("Page.loadEventFired", session)
            # A round trip after the load: events sent before it have arrived.
            self.call("Runtime.evaluate", {"expression": "document.readyState"},
                      session=session)
            size = self.call("Page.getLayoutMetrics", session=session)["cssContentSize"]
            shot = self.call("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": max(size["width"], 1),
                         "height": max(size["height"], 1), "scale": 1}}, session=session)
            result = PageLoad(url, screenshot=base64.b64decode(shot["data"]))
            for expression in evaluate:
                answer = self.call("Runtime.evaluate", {"expression": expression,
                                                        "returnByValue": True},
                                   session=session)
                result.values.append(answer.get("result", {}).get("value"))
            for event in self._events:
                if event.get("sessionId") != session:
                    continue
                self._note(event, url, result)
            return result
        finally:
            self.call("Target.closeTarget", {"targetId": target})

    @staticmethod
    def _note(event: dict, url: str, result: PageLoad) -> None:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            result.console_errors.append(" ".join(
                str(arg.get("value", arg.get("description", ""))) for arg in params["args"]))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            result.console_errors.append(details.get("exception", {}).get(
                "description", details.get("text", "exception")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            result.console_errors.append(params["entry"].get("text", ""))
        elif method == "Network.requestWillBeSent":
            requested = params.get("request", {}).get("url", "")
            # data: URLs are inside the page; anything else would leave it.
            if requested != url and not requested.startswith("data:"):
                result.requests.append(requested)

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except BrowserError:
            pass
        try:
            self._process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._commands)
        shutil.rmtree(self._profile, ignore_errors=True)


def blank_fraction(png: bytes) -> float:
    """The fraction of the screenshot's pixels that are the background's colour."""
    image = Image.open(BytesIO(png)).convert("RGB")
    colors = image.getcolors(maxcolors=1 << 24)
    background = max(colors)[0]
    return background / (image.width * image.height)
