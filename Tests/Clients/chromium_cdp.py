"""Headless Chromium (Debian's) driven over the Chrome DevTools Protocol with websocket-client
(PyPI), for the inspector's browser tests (inspector_browser.py, inspector_users_browser.py).

    with Chromium(output) as browser:
        browser.cdp("Page.navigate", url=...)
        browser.wait_for("the page", lambda: browser.js("document.readyState === 'complete'"))
        browser.screenshot("page.png")
"""
import base64
import collections
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import websocket  # websocket-client

import hang_dump  # noqa: F401 (stress.sh gets this process's stacks if it hangs)


def ok(name):
    print("ok", name, flush=True)


def wait_for(what, condition, timeout=600.0):
    """Polls `condition` until it holds; the limit only bounds a failure (a busy machine is slow: with
    both cores burning and other browsers starting, a step took minutes)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class Chromium:
    """One headless Chromium at 1400 x 900 with a fresh profile, and its first page."""

    def __init__(self, output):
        self.output = output
        os.makedirs(output, exist_ok=True)
        self.ids = itertools.count(1)

    def __enter__(self):
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        assert chromium, "chromium is not installed (.ci/run installs Debian's)"
        self.profile = tempfile.mkdtemp(prefix="authsim-inspector-chromium-")
        self.process = subprocess.Popen([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
                                         f"--user-data-dir={self.profile}", "--remote-debugging-port=0", "--window-size=1400,900", "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            endpoint = None
            for line in self.process.stderr:
                match = re.search(r"DevTools listening on (ws://\S+)", line)
                if match:
                    endpoint = match.group(1)
                    break
            assert endpoint, "chromium printed no DevTools endpoint"
            # Chromium goes on writing to stderr; a pipe nobody reads fills (64 KiB) and stops it
            # mid-write, DevTools and all. Read to the end, keeping the last lines for a failure.
            self.stderr_tail = collections.deque(maxlen=40)
            self.stderr_bytes = 0
            self.drain = threading.Thread(target=self._drain, daemon=True)
            self.drain.start()
            http = "http://" + endpoint.split("/")[2]
            with urllib.request.urlopen(f"{http}/json/list", timeout=10) as answer:
                page = next(t for t in json.load(answer) if t["type"] == "page")
            self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=600)
            self.cdp("Page.enable")
            self.cdp("Runtime.enable")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _drain(self):
        for line in self.process.stderr:
            self.stderr_bytes += len(line)
            self.stderr_tail.append(line.rstrip("\n"))

    def __exit__(self, *exception):
        if exception[0] is not None and getattr(self, "stderr_tail", None):
            print(f"chromium's stderr ({self.stderr_bytes} bytes), its last lines:", *self.stderr_tail, sep="\n  ", file=sys.stderr, flush=True)
        if getattr(self, "socket", None):
            self.socket.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)
        return False

    def cdp(self, method, **params):
        message_id = next(self.ids)
        self.socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == message_id:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message.get("result", {})

    def js(self, expression):
        result = self.cdp("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, name):
        data = self.cdp("Page.captureScreenshot", format="png")["data"]
        with open(os.path.join(self.output, name), "wb") as file:
            file.write(base64.b64decode(data))
