"""Firefox and WebKit, driven without Playwright (which cannot download its own builds of them here): Debian's
`firefox-esr` over WebDriver BiDi, spoken directly on its remote-debugging port, and WebKitGTK's MiniBrowser
through `WebKitWebDriver` (classic WebDriver over HTTP) on a virtual display (Xvfb).

Both classes offer the little the cross-engine tests need, with the same methods: `goto` (open a URL, wait for its
load event), `run` (call a JavaScript function in the page, its awaited result back as JSON), `set_viewport` and
`close`; Firefox also `restart`s (quits and starts again on its profile, for the snapshot test). What a page reports (console errors, uncaught errors,
requests) the tests read from the page itself (watch.js), so that both engines are checked the same way.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

FIREFOX = os.environ.get("FIREFOX", "/usr/bin/firefox-esr")
WEBKIT_DRIVER = os.environ.get("WEBKIT_WEBDRIVER", "/usr/bin/WebKitWebDriver")
XVFB = "/usr/bin/Xvfb"
# Debian's webkit2gtk-driver starts this browser; a session needs its path.
MINIBROWSER = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"
START_TIMEOUT_S = 30
COMMAND_TIMEOUT_S = 90

# A function's result crosses as a JSON string: both protocols would otherwise each wrap it their own way.
CALL = "async (f, args) => JSON.stringify((await f(...args)) ?? null)"

# A fresh Firefox profile: no first-run pages, no update or telemetry calls (the machine has no internet).
FIREFOX_PREFS = {
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.aboutwelcome.enabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.update.disabledForTesting": True,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
}


class EngineError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until(ready, what: str, process: subprocess.Popen, timeout_s: float = START_TIMEOUT_S):
    """ready()'s result once it returns one without raising (a port that refuses, a handshake cut short: the
    process is still starting), as long as `process` runs."""
    deadline = time.monotonic() + timeout_s
    last = None
    while True:
        if process.poll() is not None:
            raise EngineError(f"{what} exited with {process.returncode}")
        try:
            if (result := ready()) is not None:
                return result
        except Exception as error:  # noqa: BLE001 - each try is retried until the deadline, which reports it
            last = error
        if time.monotonic() > deadline:
            raise EngineError(f"{what} did not start within {timeout_s} s (last: {last!r})")
        time.sleep(0.1)


def _stop(process: subprocess.Popen | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Firefox:
    """Firefox ESR, headless, in a profile of its own, one tab driven over WebDriver BiDi."""

    name = "firefox"

    def __init__(self):
        self.profile = Path(tempfile.mkdtemp(prefix="inferlab-firefox-"))
        (self.profile / "user.js").write_text(
            "".join(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in FIREFOX_PREFS.items()))
        self.process = None
        self.viewport = None
        self._start()

    def _start(self) -> None:
        from websockets.sync.client import connect  # a test dependency, only this engine needs it

        port = free_port()
        self.process = subprocess.Popen(
            [FIREFOX, "--headless", "--no-remote", "--profile", str(self.profile), "--remote-debugging-port",
             str(port), "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.closing = contextlib.ExitStack()
        self.ws = self.closing.enter_context(_wait_until(
            lambda: connect(f"ws://127.0.0.1:{port}/session", max_size=None, open_timeout=2),
            "Firefox's WebDriver BiDi", self.process))
        self.next_id = 0
        self._command("session.new", {"capabilities": {}})
        self.context = self._command("browsingContext.getTree", {})["contexts"][0]["context"]
        self.version = self.run("() => navigator.userAgent")
        if self.viewport:
            self.set_viewport(*self.viewport)

    def _command(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=COMMAND_TIMEOUT_S))
            if message.get("id") != self.next_id:
                continue  # an event: none is subscribed to, but a protocol may send some anyway
            if message["type"] == "error":
                raise EngineError(f"{method}: {message['error']}: {message.get('message')}")
            return message["result"]

    def goto(self, url: str) -> None:
        self._command("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"})

    def run(self, function: str, *args):
        result = self._command("script.callFunction", {
            "functionDeclaration": f"(...args) => ({CALL})({function}, args)", "awaitPromise": True,
            "target": {"context": self.context}, "arguments": [_bidi_value(a) for a in args]})
        if result["type"] == "exception":
            details = result["exceptionDetails"]
            raise EngineError(f"in the page: {details.get('text')}")
        return json.loads(result["result"]["value"])

    def set_viewport(self, width: int, height: int) -> None:
        self.viewport = (width, height)
        self._command("browsingContext.setViewport",
                      {"context": self.context, "viewport": {"width": width, "height": height}})

    def restart(self) -> None:
        """Quit the browser and start it again on the same profile (its stored files kept)."""
        self._quit()
        self._start()

    def _quit(self) -> None:
        try:
            self._command("browser.close", {})
            self.closing.close()
        except Exception:  # a browser that is gone already is closed
            pass
        if self.process is not None:
            try:
                self.process.wait(10)  # browser.close ends it, its profile written out
            except subprocess.TimeoutExpired:
                _stop(self.process)

    def close(self) -> None:
        self._quit()
        shutil.rmtree(self.profile, ignore_errors=True)


def _bidi_value(value) -> dict:
    """A JSON value as a BiDi local value (an argument to script.callFunction)."""
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "boolean", "value": value}
    if isinstance(value, int | float):
        return {"type": "number", "value": value}
    if isinstance(value, str):
        return {"type": "string", "value": value}
    if isinstance(value, list):
        return {"type": "array", "value": [_bidi_value(v) for v in value]}
    if isinstance(value, dict):
        return {"type": "object", "value": [[k, _bidi_value(v)] for k, v in value.items()]}
    raise TypeError(f"no BiDi value for {type(value).__name__}")


class WebKit:
    """WebKitGTK's MiniBrowser on a virtual display, one window driven through WebKitWebDriver."""

    name = "webkit"

    def __init__(self):
        self.xvfb = self.driver = None
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        # Xvfb picks a free display and writes its number to the pipe (-displayfd).
        read, write = os.pipe()
        self.xvfb = subprocess.Popen([XVFB, "-displayfd", str(write), "-screen", "0", "1280x1024x24", "-nolisten",
                                      "tcp"], pass_fds=(write,), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(write)
        with os.fdopen(read) as pipe:
            display = pipe.readline().strip()
        if not display:
            raise EngineError("Xvfb did not start")
        port = free_port()
        self.driver = subprocess.Popen([WEBKIT_DRIVER, f"--port={port}"], env={**os.environ, "DISPLAY": f":{display}"},
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{port}"
        _wait_until(lambda: self._http("GET", "/status"), "WebKitWebDriver", self.driver)
        session = self._http("POST", "/session", {"capabilities": {"alwaysMatch": {
            # Full-screen hides MiniBrowser's toolbar, which keeps a window 447 px wide at least: a phone's
            # viewport needs less (no window manager runs, so the window keeps the size it is given).
            "webkitgtk:browserOptions": {"binary": MINIBROWSER, "args": ["--automation", "--full-screen"]}}}})
        self.base += f"/session/{session['sessionId']}"
        self.version = session["capabilities"]["browserVersion"]

    def _http(self, method: str, path: str, body: dict | None = None):
        request = urllib.request.Request(self.base + path, method=method, headers={"Content-Type": "application/json"},
                                         data=None if body is None else json.dumps(body).encode())
        try:
            with urllib.request.urlopen(request, timeout=COMMAND_TIMEOUT_S) as response:
                return json.load(response)["value"]
        except urllib.error.HTTPError as e:
            error = json.load(e)["value"]
            raise EngineError(f"{method} {path}: {error.get('error')}: {error.get('message')}") from None

    def goto(self, url: str) -> None:
        self._http("POST", "/url", {"url": url})

    def run(self, function: str, *args):
        script = f"return ({CALL})({function}, arguments[0]);"
        return json.loads(self._http("POST", "/execute/sync", {"script": script, "args": [list(args)]}))

    def set_viewport(self, width: int, height: int) -> None:
        """The window sized so that the page's viewport is width x height (what the window adds, added)."""
        for _ in range(3):
            inner = self.run("() => [innerWidth, innerHeight]")
            if inner == [width, height]:
                return
            rect = self._http("GET", "/window/rect")
            size = {"width": rect["width"] + width - inner[0], "height": rect["height"] + height - inner[1]}
            if size["width"] <= 0 or size["height"] <= 0:
                # WebKit, just started, once reported a viewport 649 px wider than its window, so that the size
                # asked for came out negative (a fresh clone's CI run, 2026-12): size the window to the viewport
                # wanted, then measure again.
                size = {"width": width, "height": height}
            self._http("POST", "/window/rect", size)
        raise EngineError(f"the viewport stays {inner}, not {[width, height]}")

    def close(self) -> None:
        if self.driver is not None and "/session/" in getattr(self, "base", ""):
            try:
                self._http("DELETE", "")
            except Exception:  # a browser that is gone already is closed
                pass
        _stop(self.driver)
        _stop(self.xvfb)


ENGINES = {"firefox": (Firefox, FIREFOX), "webkit": (WebKit, WEBKIT_DRIVER)}
