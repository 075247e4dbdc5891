"""pytest plugin: the ``authsim`` fixture, a whole push-and-redirect channel per test.

Installed with the wheel (entry point ``pytest11``), nothing to configure:

    def test_push(authsim):
        client = APNs(key=authsim.auth_key_file, key_id=authsim.key_id, team_id=authsim.team_id, ...)
        ...
        assert authsim.api.wait_for_push(token=authsim.device_token).status == 200

The fixture starts ``authsim serve`` on free ports (port 0, read back from ``--ready-file``) in the
test's temporary directory, waits for ``/readyz``, registers a device token, sets
``FIREBASE_AUTH_EMULATOR_HOST`` to its backend (restored after), and stops the server after the test.
Its standard output and error are attached to a failing test's report.

``authsim_firebase_app`` is a firebase-admin App bound to that backend for one test (firebase-admin
caches its client per App: a default App set up once keeps calling the first test's server).

Options (``pytest --help``): ``--authsim-binary`` (default: the ``authsim`` this package installed,
else the one on PATH), ``--authsim-start-timeout`` (seconds, default 60).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

import pytest

from . import executable
from .client import AuthsimClient

__all__ = ["AuthsimServer", "AuthsimStartError", "PhoneSignIn", "start_server"]

READY_LINE = "Ctrl-C stops everything."
EMULATOR_VARIABLE = "FIREBASE_AUTH_EMULATOR_HOST"


class AuthsimStartError(RuntimeError):
    """``authsim serve`` did not come up: its exit status and output say why."""


@dataclass
class AuthsimServer:
    """A running ``authsim serve``: every address a test needs."""

    #: ``https://127.0.0.1:<port>`` of push-receiver's sandbox and production environments.
    apns_sandbox_url: str
    apns_production_url: str
    #: The CA that signed push-receiver's and the backend's certificates (trust it in your APNs client).
    ca_file: str
    #: The APNs auth key (``AuthKey_<KEYID>.p8``) push-receiver trusts, with its key and team IDs.
    auth_key_file: str
    key_id: str
    team_id: str
    #: The app's bundle ID (the push topic) and a device token registered for it in the sandbox.
    bundle_id: str
    device_token: str
    #: ``host:port`` of the backend: the fixtures set ``FIREBASE_AUTH_EMULATOR_HOST`` to it while they live.
    auth_emulator_host: str
    project_id: str
    #: The project's API key (GoogleService-Info.plist ``API_KEY``): what a REST client sends as ``?key=``.
    #: The backend takes any non-empty key, as the Auth Emulator does; this is the one apps are given.
    api_key: str
    backend_url: str
    device_gateway_url: str
    inspector_url: str
    api: AuthsimClient
    #: The server's folder (Certs/, State/, serve.out, serve.err).
    folder: Path
    process: subprocess.Popen
    #: The ``authsim`` binary that runs it (and :meth:`phone_sign_in`'s app).
    binary: str = ""

    @property
    def emulator_env(self) -> dict:
        """Environment variables that point the Firebase Admin SDK at this backend."""
        return {"FIREBASE_AUTH_EMULATOR_HOST": self.auth_emulator_host}

    def phone_sign_in(self, phone_number: str = "+16505551234", *, simulator: bool = False, declared_type: str = "sandbox",
                      code: Optional[str] = None, expect: Optional[str] = None, extra_args: tuple[str, ...] = (),
                      timeout: float = 120.0) -> "PhoneSignIn":
        """One phone sign-in by an app, as on a device, through this server's channel.

        The app is ``authsim phone`` (FirebaseAuth's logic, a device on this server's gateway): it
        registers for remote notifications, asks the backend to verify it, gets the silent push (or,
        with ``simulator=True``, none: the reCAPTCHA page and its redirect), reads the SMS code from
        the outbox (or types ``code``) and signs in. ``declared_type`` is what its code passes to
        ``setAPNSToken`` (``sandbox``, ``prod``, ``unknown``); ``expect`` is ``authsim phone
        --expect`` (``silent-push``, ``recaptcha``, an SDK error such as ``17044``). Never raises
        for a failed sign-in: the result says what happened.

            result = authsim.phone_sign_in("+16505550101")
            assert result.signed_in and result.path == "silentPush", result.output
        """
        work = Path(tempfile.mkdtemp(prefix="phone-", dir=self.folder))
        # The app claims its URL schemes as Unix sockets, whose paths may be 107 bytes at most:
        # a short folder of its own, not one under pytest's long temporary paths.
        schemes = Path(tempfile.mkdtemp(prefix="as-", dir="/tmp" if os.path.isdir("/tmp") else None))
        gateway = self.device_gateway_url.split("://", 1)[-1].rstrip("/")
        args = [self.binary or _default_binary(), "phone", "--backend", self.auth_emulator_host, "--gateway", gateway,
                "--certs", str(self.folder / "Certs"), "--state", str(work), "--runtime-dir", str(schemes),
                "--number", phone_number, "--declared-type", declared_type, "--json"]
        if simulator:
            args.append("--simulator")
        if code is not None:
            args += ["--code", code]
        if expect is not None:
            args += ["--expect", expect]
        try:
            run = subprocess.run([*args, *extra_args], capture_output=True, text=True, timeout=timeout, cwd=work)
        finally:
            shutil.rmtree(schemes, ignore_errors=True)
        events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        signed = [e.get("facts") or {} for e in events if e.get("kind") in ("signedIn", "app.signedIn")]
        return PhoneSignIn(uid=signed[-1].get("uid") if signed else None, path=signed[-1].get("path") if signed else None,
                           returncode=run.returncode, events=events, output=run.stdout + run.stderr)

    def logs(self) -> str:
        parts = []
        for name in ("serve.out", "serve.err"):
            path = self.folder / name
            if path.exists():
                parts.append(f"--- {name}\n{path.read_text(errors='replace')}")
        return "\n".join(parts)

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM, as Ctrl-C would; SIGKILL if it does not stop within ``timeout``."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


@dataclass(frozen=True)
class PhoneSignIn:
    """What :meth:`AuthsimServer.phone_sign_in` saw."""

    #: The user's ID, once the app signed in.
    uid: Optional[str]
    #: How the app proved itself, as the timeline says: ``silentPush``, ``reCAPTCHA``, ``testMode``, ...
    path: Optional[str]
    #: ``authsim phone``'s exit status: 0 when the run ended as ``expect`` asked (signed in, by default).
    returncode: int
    #: Every event of the run, oldest first (``authsim phone --json``: part, message, kind, facts).
    events: list
    #: What the app printed, for an assertion's message.
    output: str

    @property
    def signed_in(self) -> bool:
        return self.uid is not None


def start_server(folder: Path, binary: Optional[str] = None, timeout: float = 60.0,
                 extra_args: tuple[str, ...] = ()) -> AuthsimServer:
    """Starts ``authsim serve`` in ``folder`` on free ports and returns once ``/readyz`` answers."""
    binary = binary or _default_binary()
    folder.mkdir(parents=True, exist_ok=True)
    ready_file = folder / "ready.json"
    out = open(folder / "serve.out", "wb")
    err = open(folder / "serve.err", "wb")
    args = [binary, "serve", "--host", "127.0.0.1", "--sandbox-port", "0", "--production-port", "0", "--device-port", "0",
            "--backend-port", "0", "--ui-port", "0", "--state", str(folder / "State"), "--certs", str(folder / "Certs"),
            "--ready-file", str(ready_file), *extra_args]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, cwd=folder)
    err.close()

    # Standard output is copied to serve.out by a thread that says when the ready line came (or
    # the output ended: the process died). No polling.
    ready = threading.Event()

    def copy() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            out.write(line)
            out.flush()
            if line.decode(errors="replace").strip() == READY_LINE:
                ready.set()
        out.close()
        ready.set()

    threading.Thread(target=copy, name="authsim-serve-stdout", daemon=True).start()
    if not ready.wait(timeout) or process.poll() is not None or not ready_file.exists():
        status = process.poll()
        if status is None:
            process.kill()
            process.wait()
        why = f"exited with status {status}" if status is not None else f"was not ready within {timeout} s"
        raise AuthsimStartError(f"{' '.join(args)} {why}\n" + _read(folder / "serve.out") + _read(folder / "serve.err"))

    addresses = json.loads(ready_file.read_text())
    with urllib.request.urlopen(addresses["inspector"] + "/readyz", timeout=timeout) as response:
        if response.status != 200:
            raise AuthsimStartError(f"/readyz answered {response.status}")
    api = AuthsimClient(addresses["api"])
    device = api.register_device(addresses["bundleID"], environment="sandbox", label="pytest")
    return AuthsimServer(
        apns_sandbox_url=addresses["sandbox"], apns_production_url=addresses["production"], ca_file=addresses["caFile"],
        auth_key_file=addresses["authKeyFile"], key_id=addresses["keyID"], team_id=addresses["teamID"],
        bundle_id=addresses["bundleID"], device_token=device.token, auth_emulator_host=addresses["emulatorHost"],
        project_id=addresses["projectID"], api_key=addresses["apiKey"], backend_url=addresses["backend"], device_gateway_url=addresses["deviceGateway"],
        inspector_url=addresses["inspector"], api=api, folder=folder, process=process, binary=binary)


def _read(path: Path) -> str:
    return f"--- {path.name}\n{path.read_text(errors='replace')}\n" if path.exists() else ""


def _default_binary() -> str:
    try:
        return executable()
    except FileNotFoundError:
        found = shutil.which("authsim")
        if found is None:
            raise AuthsimStartError("no authsim binary: install the authsim wheel, or pass --authsim-binary") from None
        return found


# -- pytest hooks

def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("authsim")
    group.addoption("--authsim-binary", default=os.environ.get("AUTHSIM_BINARY"),
                    help="the authsim executable the fixture runs (default: this package's, else PATH's; env AUTHSIM_BINARY)")
    group.addoption("--authsim-start-timeout", type=float, default=60.0,
                    help="seconds authsim serve may take to be ready (default 60)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for server in getattr(item, "funcargs", {}).values():
            if isinstance(server, AuthsimServer):
                report.sections.append(("authsim serve", server.logs()))


@pytest.fixture
def authsim(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[AuthsimServer]:
    """A running ``authsim serve`` for this test alone: see :class:`AuthsimServer`."""
    yield from _serve(request, tmp_path / "authsim")


@pytest.fixture(scope="session")
def authsim_session(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthsimServer]:
    """One ``authsim serve`` for the whole session (faster; the tests share its pushes, users and
    faults: filter by your own device token, or clear what you set)."""
    yield from _serve(request, tmp_path_factory.mktemp("authsim"))


@pytest.fixture
def authsim_firebase_app(authsim: AuthsimServer, request: pytest.FixtureRequest):
    """A ``firebase_admin`` App of its own for this test, bound to this test's ``authsim`` backend,
    deleted after: pass it as ``app=`` to ``firebase_admin.auth``.

    firebase-admin keeps one Auth client per App, made with the emulator host of the moment it is
    first used: a default App a test set up once keeps calling the first test's backend, which is
    gone by the second test (connection refused). An App per test (this fixture) does not."""
    try:
        import firebase_admin
    except ImportError:
        pytest.fail("authsim_firebase_app needs firebase-admin: pip install firebase-admin", pytrace=False)
    app = firebase_admin.initialize_app(options={"projectId": authsim.project_id}, name=f"authsim:{request.node.nodeid}")
    try:
        yield app
    finally:
        firebase_admin.delete_app(app)


def _serve(request: pytest.FixtureRequest, folder: Path) -> Iterator[AuthsimServer]:
    server = start_server(folder, binary=request.config.getoption("--authsim-binary"),
                          timeout=request.config.getoption("--authsim-start-timeout"))
    # The Admin SDKs read FIREBASE_AUTH_EMULATOR_HOST when they make a client: set while the
    # fixture lives, restored after, so that firebase_admin.auth talks to this backend at once.
    previous = os.environ.get(EMULATOR_VARIABLE)
    os.environ[EMULATOR_VARIABLE] = server.auth_emulator_host
    try:
        yield server
    finally:
        if previous is None:
            os.environ.pop(EMULATOR_VARIABLE, None)
        else:
            os.environ[EMULATOR_VARIABLE] = previous
        status = server.stop()
        if status not in (0, -signal.SIGTERM):
            pytest.fail(f"authsim serve exited with status {status} when stopped\n{server.logs()}", pytrace=False)
