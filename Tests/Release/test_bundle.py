"""The release tarball on a machine with no Swift: each binary's version, authsim serve answering
/readyz, a push through push-receiver sent by apns-sender, and a phone sign-in by authsim phone."""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import urllib.request
from pathlib import Path

from authsim.pytest_plugin import start_server

PROGRAMS = ["authsim", "push-receiver", "apns-sender", "redirect-interceptor"]


def test_versions(bundle: Path, version: str):
    for program in PROGRAMS:
        result = subprocess.run([bundle / "bin" / program, "--version"], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == version


def test_push_through_push_receiver(bundle: Path, tmp_path: Path):
    """push-receiver alone, a registered token, apns-sender's push answered 200 and in the delivery log."""
    receiver = subprocess.Popen([bundle / "bin" / "push-receiver", "--sandbox-port", "0", "--production-port", "0",
                                 "--no-device-gateway", "--certs", tmp_path / "Certs", "--state", tmp_path / "State"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        assert receiver.stdout is not None
        for line in receiver.stdout:  # the banner, line by line, until the sandbox URL
            if line.strip().endswith("→ sandbox"):
                port = line.split("https://127.0.0.1:")[1].split()[0]
                break
        assert port, receiver.stderr.read() if receiver.stderr else "no banner"
        added = subprocess.run([bundle / "bin" / "push-receiver", "devices", "add", "--environment", "sandbox",
                                "--bundle", "com.example.authsim", "--json", "--state", tmp_path / "State"],
                               capture_output=True, text=True, check=True)
        token = json.loads(added.stdout)["token"]
        sent = subprocess.run([bundle / "bin" / "apns-sender", bundle / "Payloads" / "firebase-auth-silent.json",
                               "--token", token, "--topic", "com.example.authsim", "--host", "127.0.0.1", "--port", port,
                               "--ca", tmp_path / "Certs" / "ca.pem", "--certs", tmp_path / "Certs", "--json"],
                              capture_output=True, text=True, timeout=60)
        assert sent.returncode == 0, sent.stdout + sent.stderr
        answers = [json.loads(line) for line in sent.stdout.splitlines() if line.strip()]
        assert answers[0]["status"] == 200, answers
        stamp, *deliveries = (tmp_path / "State" / "deliveries.jsonl").read_text().splitlines()
        assert json.loads(stamp)["authsim-format"] == "delivery log", stamp
        assert len(deliveries) == 1 and json.loads(deliveries[0])["device-token"].lower() == token.lower()
    finally:
        receiver.terminate()
        assert receiver.wait(30) == 0


def test_serve_and_phone_sign_in(bundle: Path, tmp_path: Path):
    """authsim serve from the bundle answers /readyz; authsim phone signs in through it by silent push."""
    server = start_server(tmp_path / "serve", binary=str(bundle / "bin" / "authsim"))
    # Unix socket paths stop at 107 bytes: the app's runtime folder is a short one.
    runtime = Path(tempfile.mkdtemp(prefix="as-"))
    try:
        with urllib.request.urlopen(server.inspector_url + "/readyz", timeout=30) as response:
            assert response.status == 200
        phone = subprocess.run([bundle / "bin" / "authsim", "phone", "--backend", server.auth_emulator_host,
                                "--gateway", server.device_gateway_url.removeprefix("http://"),
                                "--certs", Path(server.ca_file).parent, "--state", tmp_path / "phone",
                                "--runtime-dir", runtime],
                               capture_output=True, text=True, timeout=120)
        assert phone.returncode == 0, phone.stdout + phone.stderr + server.logs()
        assert "Auth.canHandleNotification took it" in phone.stdout and "signed in" in phone.stdout, phone.stdout
        assert [sms.phone_number for sms in server.api.sms()] == ["+16505551234"]
        assert server.api.wait_for_push(topic=server.bundle_id, timeout=30).status == 200
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
        assert server.stop() == 0, server.logs()


def test_demo_finds_the_bundled_scenarios_from_anywhere(bundle: Path, tmp_path: Path):
    """authsim demo from another folder: Scenarios/ beside bin/ is the default; a scenario runs and passes."""
    listed = subprocess.run([bundle / "bin" / "authsim", "demo", "--list"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert len([line for line in listed.stdout.splitlines() if line.strip()]) >= 50
    ran = subprocess.run([bundle / "bin" / "authsim", "demo", "--scenario", "apns-silent-push"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_closed_pipe_ends_each_program_quietly(bundle: Path, tmp_path: Path):
    """`authsim explain … | head -1` and the like: a reader that left ends the program as SIGPIPE
    would (the shell's 141), with nothing on standard error, even with SIGPIPE ignored (as Python
    leaves it for its children here, and SwiftNIO inside the programs)."""
    authsim = str(bundle / "bin" / "authsim")
    events = subprocess.run([authsim, "demo", "--json", "--scenario", "debug-build-declares-prod"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert events.returncode == 0, events.stderr
    timeline = tmp_path / "demo.jsonl"
    timeline.write_text(events.stdout)
    for arguments in ([authsim, "explain", str(timeline)], [authsim, "demo", "--list"],
                      [str(bundle / "bin" / "push-receiver"), "devices", "list", "--state", str(tmp_path / "State")]):
        read, write = os.pipe()
        os.close(read)
        try:
            ended = subprocess.run(arguments, stdout=write, stderr=subprocess.PIPE, restore_signals=False, timeout=120)
        finally:
            os.close(write)
        assert ended.returncode == -signal.SIGPIPE, (arguments, ended.returncode, ended.stderr)
        assert ended.stderr == b"", (arguments, ended.stderr)


def test_shared_libraries_names_every_library_the_binary_loads(bundle: Path):
    """SHARED_LIBRARIES' first line names each library `ldd` finds (libz.so.1 was missing)."""
    summary = (bundle / "SHARED_LIBRARIES").read_text().splitlines()[0]
    ldd = subprocess.run(["ldd", str(bundle / "bin" / "authsim")], capture_output=True, text=True, timeout=60)
    assert ldd.returncode == 0, ldd.stderr
    names = [line.split()[0] for line in ldd.stdout.splitlines() if line.strip()]
    for name in names:
        if name.startswith("linux-vdso") or "ld-linux" in name:
            continue
        assert name in summary.split(), (name, summary)


def test_the_release_carries_its_documentation(bundle: Path, tmp_path: Path):
    """README.md and docs/ beside bin/, `authsim docs` lists and prints them, and every docs/*.md a
    message or help text of the binary names is there."""
    authsim = str(bundle / "bin" / "authsim")
    assert (bundle / "README.md").read_text().startswith("# authsim")
    listed = subprocess.run([authsim, "docs"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert str(bundle / "docs") in listed.stdout and "  security" in listed.stdout and "  README" in listed.stdout, listed.stdout
    page = subprocess.run([authsim, "docs", "fleet"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert page.returncode == 0 and page.stdout == (bundle / "docs" / "fleet.md").read_text(), page.stderr
    missing = subprocess.run([authsim, "docs", "nothing-here"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert missing.returncode != 0 and "authsim docs` lists them" in missing.stderr, missing.stderr
    named = set(re.findall(rb"docs/[a-z0-9-]+\.md", (bundle / "bin" / "authsim").read_bytes()))
    assert named, "the binary names no docs/ page: the check would prove nothing"
    for path in sorted(named):
        assert (bundle / path.decode()).is_file(), f"{path.decode()} is named by the binary but not in the release"
