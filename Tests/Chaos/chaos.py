#!/usr/bin/env python3
"""Chaos with a history check: two `authsim serve --store` nodes (each a backend, a push-receiver
with its device gateway, and an inspector) on one PostgreSQL, driven by concurrent clients while
nodes are killed (SIGKILL) and restarted, paused (SIGSTOP/SIGCONT), and PostgreSQL restarts.
Every operation is recorded with its answer (history.jsonl); afterwards the history and the final
state (users from the Admin API, deliveries from the store) are checked:

  codes          no SMS code (a session) signs in twice
  recaptcha      no reCAPTCHA token gets a code twice
  temporary-proofs  no temporary proof (linking a number another user holds) signs in twice
  receipts       no receipt is issued twice; a receipt with a wrong secret never gets a code
  users-kept     every user a 200 sign-in named exists afterwards, with that number
  one-user       one user per phone number: in the final state, and in every 200 sign-in
  pushes         every push answered 200 is in the delivery log exactly once; others at most once
  half-done      a sign-in answered 5xx (or cut off) left no code spent without its user:
                 retried once the fleet is whole, it signs in, or the number has its user

`--self-test` breaks each rule on purpose in a copy of a run's history and final state and
shows that the check fails for each (the run itself must pass).

The clients are not authsim's: requests (HTTP/1.1) for the Identity Toolkit, the Admin REST API,
the inspector and the device gateway; httpx over HTTP/2 with a PyJWT ES256 provider token for APNs.

A long run (`--long`, no faults): the same clients on numbers that come back (no new user per
sign-in), with each node's resident memory and open files and the store's size sampled every
`--sample-every` seconds into samples.jsonl, and a table of them at the end; `--one-node` runs a
single `authsim serve` with its state in files instead of the fleet.

usage: chaos.py --bin DIR [--minutes M] [--seed N] [--out DIR] [--no-faults] [--self-test]
       chaos.py --bin DIR --long [--one-node] [--minutes M] [--sample-every S]
       chaos.py --check DIR [--self-test]     (check a recorded run again)
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

import httpx
import jwt
import requests

API_KEY = "AIzaSyA-authsim-local-api-key-0000000"
PROJECT = "authsim-demo"
BUNDLE = "com.example.authsim"
TOKEN = "chaos-admin-token-" + "7f3a9c2e5b8d1f4a6c0e9b2d5f8a1c3e"
TIMEOUT = (3, 10)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log(*parts):
    print(time.strftime("%H:%M:%S"), *parts, flush=True)


class Postgres:
    """Debian's PostgreSQL in a folder, on a Unix socket, trusting the user authsim (as nobody when root)."""

    def __init__(self, folder, small_disk_mb=None):
        versions = sorted(int(v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit())
        self.bin = f"/usr/lib/postgresql/{versions[-1]}/bin"
        os.makedirs(folder, exist_ok=True)
        self.folder = folder
        self.data = os.path.join(folder, "data")
        # On a size-limited tmpfs of its own, the disk can be filled to its last byte (the
        # disk-full fault); mounting one needs root with CAP_SYS_ADMIN, else the fault is off.
        self.small_disk = False
        if small_disk_mb:
            mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={small_disk_mb}m,mode=0755", "tmpfs", folder],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.small_disk = mounted.returncode == 0
            log(f"PostgreSQL on a {small_disk_mb} MB tmpfs: the disk-full fault is on" if self.small_disk
                else "cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN): the disk-full fault is off")
        self.filler = os.path.join(folder, "filler")
        self.as_user = []
        if os.getuid() == 0:
            os.chown(folder, 65534, 65534)
            self.as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        subprocess.run(self.as_user + [f"{self.bin}/initdb", "-D", self.data, "-U", "authsim", "--auth=trust", "-E", "UTF8",
                                       "--no-sync", "--locale=C"], check=True, stdout=subprocess.DEVNULL)
        self.process = None
        self.start()
        self.psql("postgres", "CREATE DATABASE authsim")

    @property
    def url(self):
        return f"postgres://authsim@/authsim?host={self.folder}"

    def start(self):
        # WAL bounded, so that a small disk holds a run's worth of it.
        self.process = subprocess.Popen(self.as_user + [f"{self.bin}/postgres", "-D", self.data, "-k", self.folder, "-c", "listen_addresses=",
                                                        "-c", "max_connections=200", "-c", "max_wal_size=64MB", "-c", "min_wal_size=32MB"],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in self.process.stdout:
            if "ready to accept connections" in line:
                break
        threading.Thread(target=lambda p=self.process: [None for _ in p.stdout], daemon=True).start()

    def restart(self):
        self.process.send_signal(signal.SIGINT)
        self.process.wait()
        self.start()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait()

    def fill_disk(self):
        """Fills PostgreSQL's disk to its last byte (it fails its writes, or stops: PANIC on WAL)."""
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            for size in (1 << 20, 4096, 1):
                block = b"." * size
                try:
                    while True:
                        os.write(fd, block)
                except OSError:
                    pass
        finally:
            os.close(fd)

    def free_disk(self):
        """Frees the disk; starts PostgreSQL again if the full disk stopped it."""
        os.remove(self.filler)
        if self.process.poll() is not None:
            log("PostgreSQL stopped on the full disk: starting it again")
            self.start()

    def unmount(self):
        if self.small_disk:
            subprocess.run(["umount", "-l", self.folder], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            shutil.rmtree(self.folder, ignore_errors=True)

    def psql(self, database, sql):
        return subprocess.run([f"{self.bin}/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", self.folder, "-U", "authsim",
                               "-d", database, "-c", sql], check=True, capture_output=True, text=True).stdout


class Node:
    """One `authsim serve --store` node on fixed ports (a restart takes them again)."""

    def __init__(self, name, binary, folder, certs, store, token_file):
        self.name = name
        self.state = os.path.join(folder, name)
        self.ports = {k: free_port() for k in ["sandbox", "production", "device", "backend", "ui"]}
        self.args = [binary, "serve"] + (["--store", store, "--node-name", name] if store else []) \
            + ["--certs", certs,
                     "--state", os.path.join(folder, name), "--admin-token-file", token_file,
                     "--sandbox-port", str(self.ports["sandbox"]), "--production-port", str(self.ports["production"]),
                     "--device-port", str(self.ports["device"]), "--backend-port", str(self.ports["backend"]),
                     "--ui-port", str(self.ports["ui"])]
        self.log = open(os.path.join(folder, f"{name}.log"), "a")
        self.process = None
        self.paused = False

    backend = property(lambda self: f"http://127.0.0.1:{self.ports['backend']}")
    gateway = property(lambda self: f"http://127.0.0.1:{self.ports['device']}")
    inspector = property(lambda self: f"http://127.0.0.1:{self.ports['ui']}")
    apns = property(lambda self: f"https://localhost:{self.ports['sandbox']}")

    def start(self):
        self.process = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self.log, text=True)
        for line in self.process.stdout:
            self.log.write(line)
            if "Ctrl-C stops everything" in line:
                break
        else:
            raise RuntimeError(f"{self.name} did not start: see {self.log.name}")
        self.log.flush()
        threading.Thread(target=lambda p=self.process, f=self.log: [f.write(line) for line in p.stdout], daemon=True).start()

    def kill(self):
        if self.paused:
            self.resume()
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def pause(self):
        self.process.send_signal(signal.SIGSTOP)
        self.paused = True

    def resume(self):
        self.process.send_signal(signal.SIGCONT)
        self.paused = False

    def terminate(self):
        if self.process and self.process.poll() is None:
            if self.paused:
                self.resume()
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()


class History:
    """Every operation and its answer, one JSON line each, as they end."""

    def __init__(self, path):
        self.file = open(path, "a")
        self.lock = threading.Lock()
        self.count = 0

    def record(self, **entry):
        entry["t"] = round(time.time(), 3)
        with self.lock:
            self.file.write(json.dumps(entry) + "\n")
            self.count += 1

    def close(self):
        self.file.close()


def answer(response):
    try:
        body = response.json()
    except ValueError:
        body = {}
    message = body.get("error", {}).get("message") if isinstance(body.get("error"), dict) else None
    return response.status_code, body, message


class Workload:
    def __init__(self, nodes, history, seed, stop):
        self.nodes = nodes
        self.history = history
        self.random = random.Random(seed)
        self.stop = stop
        self.numbers = [f"+1650555{n:04d}" for n in range(1000, 1040)]  # numbers signed in again and again
        self.fresh = iter(range(2000, 10000))
        self.fresh_lock = threading.Lock()
        self.devices = []  # (token, node of its stream)
        self.pushes = {}  # receipt -> secret, from the devices' streams
        self.push_event = threading.Condition()
        self.certs = None
        # A long run's numbers all come back: the users are a fixed set, as a team's test accounts.
        self.returning = False
        self.credentials = {}  # device -> (receipt, secret, when): a long run's devices keep theirs
        self.held = {}  # number -> the user a 200 sign-in named

    def node(self):
        return self.random.choice(self.nodes)

    def other(self, node):
        return next((n for n in self.nodes if n is not node), node)

    def number(self):
        if self.returning or self.random.random() < 0.5:
            return self.random.choice(self.numbers)
        with self.fresh_lock:
            return f"+1650556{next(self.fresh):04d}"

    # The devices: registered at a gateway, each holding a notification stream (again after a node dies).
    def register_devices(self, count):
        for index in range(count):
            node = self.nodes[index % len(self.nodes)]
            while True:
                try:
                    r = requests.post(node.gateway + "/devices", json={"environment": "sandbox", "bundleID": BUNDLE},
                                      headers={"Authorization": f"Bearer {TOKEN}"}, timeout=TIMEOUT)
                    if r.status_code == 200:
                        break
                except requests.RequestException:
                    pass
                time.sleep(0.2)
            token = r.json()["token"]
            self.devices.append(token)
            threading.Thread(target=self.stream, args=(token, index), daemon=True).start()

    def stream(self, token, index):
        attempt = index
        while not self.stop.is_set():
            node = self.nodes[attempt % len(self.nodes)]
            attempt += 1
            try:
                with requests.get(f"{node.gateway}/devices/sandbox/{token}/notifications", stream=True, timeout=(3, None),
                                  headers={"Authorization": f"Bearer {TOKEN}"}) as r:
                    for line in r.iter_lines():
                        if self.stop.is_set():
                            return
                        if not line:
                            continue
                        push = json.loads(line)
                        auth = (push.get("payload") or {}).get("com.google.firebase.auth")
                        if auth:
                            with self.push_event:
                                self.pushes[auth["receipt"]] = auth["secret"]
                                self.push_event.notify_all()
            except (requests.RequestException, ValueError):
                pass
            self.stop.wait(0.3)

    def wait_secret(self, receipt, limit=15):
        deadline = time.time() + limit
        with self.push_event:
            while receipt not in self.pushes and time.time() < deadline and not self.stop.is_set():
                self.push_event.wait(0.5)
            return self.pushes.get(receipt)

    def call(self, op, node, method, path, **kwargs):
        """One request, recorded with what it was and what came back."""
        url = node.backend + path
        params = kwargs.pop("params", {})
        record = kwargs.pop("record", {})
        try:
            r = requests.request(method, url, params=params, timeout=TIMEOUT, **kwargs)
            status, body, message = answer(r)
        except requests.RequestException as error:
            status, body, message = None, {}, type(error).__name__
        self.history.record(op=op, node=node.name, status=status, message=message, **record,
                            **{k: body[k] for k in ("sessionInfo", "localId", "phoneNumber", "receipt", "temporaryProof") if k in body})
        return status, body, message

    def code_for(self, node, session):
        status, body, _ = self.call("outbox", node, "GET", f"/emulator/v1/projects/{PROJECT}/verificationCodes",
                                    headers={"Authorization": f"Bearer {TOKEN}"})
        if status != 200:
            return None
        return next((c["code"] for c in body.get("verificationCodes", []) if c["sessionInfo"] == session), None)

    # A phone sign-in: an app verification (silent push or reCAPTCHA), a code, the sign-in, replays.
    def sign_in(self):
        number = self.number()
        key = {"key": API_KEY}
        node = self.node()
        send = {"phoneNumber": number}
        if self.random.random() < 0.5:
            device = self.random.choice(self.devices)
            held = self.credentials.get(device)
            if self.returning and held and time.time() - held[2] < 3000:
                # As the SDK's AuthAppCredentialManager: a device keeps its app credential until it expires.
                send.update(iosReceipt=held[0], iosSecret=held[1])
                proof = {"receipt": held[0], "held": True}
                return self.send_and_sign_in(node, number, send, proof)
            status, body, _ = self.call("verifyClient", node, "POST", "/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyClient",
                                        params=key, json={"appToken": device, "isSandbox": True}, record={"device": device})
            if status != 200:
                return
            receipt = body["receipt"]
            secret = self.wait_secret(receipt)
            if secret is None:
                self.history.record(op="silentPushLost", receipt=receipt)
                return
            if self.random.random() < 0.1:
                # A forged secret must never get a code.
                self.call("sendCode", self.node(), "POST", "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode", params=key,
                          json={"phoneNumber": number, "iosReceipt": receipt, "iosSecret": secret[::-1] + "x"},
                          record={"receipt": receipt, "forged": True, "number": number})
            send.update(iosReceipt=receipt, iosSecret=secret)
            proof = {"receipt": receipt}
            self.credentials[device] = (receipt, secret, time.time())
        else:
            token = self.recaptcha_token(node)
            if token is None:
                return
            send.update(recaptchaToken=token)
            proof = {"recaptcha": token[-16:]}
        return self.send_and_sign_in(node, number, send, proof)

    def recaptcha_token(self, node):
        """A solved reCAPTCHA's token from the page's redirect, recorded; None when none came."""
        event = "".join(self.random.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(10))
        try:
            page = requests.get(node.backend + "/__/auth/handler", timeout=TIMEOUT,
                                params={"apiKey": API_KEY, "authType": "verifyApp", "ibi": BUNDLE, "eventId": event, "appId": "1:1:ios:chaos"})
        except requests.RequestException as error:
            self.history.record(op="recaptchaPage", node=node.name, status=None, message=type(error).__name__)
            return None
        found = re.search(r"recaptchaToken%3D([^%&\"]+(?:%25[0-9A-F]{2}[^%&\"]*)*)", page.text)
        self.history.record(op="recaptchaPage", node=node.name, status=page.status_code, message=None if found else "no token")
        return urllib.parse.unquote(urllib.parse.unquote(found.group(1))) if found else None

    def send_and_sign_in(self, node, number, send, proof):
        key = {"key": API_KEY}
        node = self.node()
        status, body, _ = self.call("sendCode", node, "POST", "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode",
                                    params=key, json=send, record=dict(proof, number=number))
        if "recaptcha" in proof and self.random.random() < 0.3:
            # The same token again, on either node: spent.
            self.call("sendCode", self.node(), "POST", "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode",
                      params=key, json=send, record=dict(proof, number=number, replay=True))
        if status != 200:
            return
        session = body["sessionInfo"]
        code = self.code_for(self.node(), session)
        if code is None:
            return
        node = self.node()
        status, body, _ = self.call("signIn", node, "POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber",
                                    params=key, json={"sessionInfo": session, "code": code}, record={"session": session, "code": code, "number": number})
        if status is None or status >= 500:
            # Cut off: ask again, on either node, until an answer that decides (a code lives 5 min).
            # It signs in (the first never did), or the code is spent and the number has its user.
            deadline = time.time() + 120
            while time.time() < deadline and not self.stop.is_set():
                retry, _, _ = self.call("retry", self.node(), "POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber",
                                        params=key, json={"sessionInfo": session, "code": code}, record={"session": session, "code": code, "number": number})
                if retry is not None and retry < 500:
                    break
                self.stop.wait(1)
        elif self.random.random() < 0.3:
            # The same code again: spent once signed in.
            self.call("signIn", self.other(node), "POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber",
                      params=key, json={"sessionInfo": session, "code": code}, record={"session": session, "code": code, "number": number, "replay": True})
        if status == 200 and body.get("localId"):
            with self.fresh_lock:
                self.held[number] = body["localId"]
            if not self.returning and self.random.random() < 0.15:
                self.link_held(body.get("idToken"), number)

    def link_held(self, id_token, mine):
        """Linking a number another user holds: a temporary proof, which signs in to that user once."""
        with self.fresh_lock:
            others = [n for n in self.held if n != mine]
        if not others or not id_token:
            return
        other = self.random.choice(others)
        key = {"key": API_KEY}
        node = self.node()
        token = self.recaptcha_token(node)
        if token is None:
            return
        status, body, _ = self.call("sendCode", self.node(), "POST", "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode", params=key,
                                    json={"phoneNumber": other, "recaptchaToken": token}, record={"recaptcha": token[-16:], "number": other})
        if status != 200:
            return
        session = body["sessionInfo"]
        code = self.code_for(self.node(), session)
        if code is None:
            return
        status, body, _ = self.call("link", self.node(), "POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber", params=key,
                                    json={"idToken": id_token, "sessionInfo": session, "code": code}, record={"session": session, "number": other})
        proof = body.get("temporaryProof")
        if status != 200 or not proof:
            return
        for replay in (False, True):
            if replay and self.random.random() < 0.5:
                break
            self.call("proofSignIn", self.node(), "POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber", params=key,
                      json={"temporaryProof": proof, "phoneNumber": other}, record={"proof": proof[-16:], "number": other, "replay": replay})

    def push(self, client, jwt_token):
        node = self.node()
        device = self.random.choice(self.devices)
        apns_id = str(uuid.uuid4()).upper()
        try:
            r = client.post(f"{node.apns}/3/device/{device}", headers={
                "authorization": f"bearer {jwt_token()}", "apns-topic": BUNDLE, "apns-push-type": "alert", "apns-id": apns_id},
                json={"aps": {"alert": "chaos"}}, timeout=10)
            status, reason = r.status_code, (r.json().get("reason") if r.content else None)
        except (httpx.HTTPError, ValueError) as error:
            status, reason = None, type(error).__name__
        self.history.record(op="push", node=node.name, status=status, message=reason, apnsID=apns_id, device=device)

    def inspect(self):
        node = self.node()
        for path in ["/api/v1/pushes?limit=20", "/api/v1/users", "/metrics"]:
            try:
                r = requests.get(node.inspector + path, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=TIMEOUT)
                status = r.status_code
            except requests.RequestException as error:
                status = None
            self.history.record(op="inspect", node=node.name, status=status, path=path)

    def admin_create(self):
        email = f"chaos-{uuid.uuid4().hex[:12]}@example.com"
        node = self.node()
        self.call("adminCreate", node, "POST", f"/identitytoolkit.googleapis.com/v1/projects/{PROJECT}/accounts",
                  headers={"Authorization": f"Bearer {TOKEN}"}, json={"email": email, "displayName": "Chaos " + email},
                  record={"email": email})


def run_clients(workload, threads):
    """Sign-in, push, inspector and admin clients until the stop is set."""
    key = json.load(open(os.path.join(workload.certs, "apns-key.json")))
    private = open(os.path.join(workload.certs, key["p8"])).read()
    minted = {"at": 0, "token": None}
    mint_lock = threading.Lock()

    def jwt_token():
        with mint_lock:
            if time.time() - minted["at"] > 1200:
                minted["token"] = jwt.encode({"iss": key["teamID"], "iat": int(time.time())}, private, algorithm="ES256",
                                             headers={"kid": key["keyID"]})
                minted["at"] = time.time()
            return minted["token"]

    def loop(kind, seed):
        rng = random.Random(seed)
        client = httpx.Client(http2=True, verify=os.path.join(workload.certs, "ca.pem")) if kind == "push" else None
        while not workload.stop.is_set():
            try:
                if kind == "signIn":
                    workload.sign_in()
                elif kind == "push":
                    workload.push(client, jwt_token)
                elif kind == "inspect":
                    workload.inspect()
                    workload.stop.wait(0.5)
                elif kind == "admin":
                    workload.admin_create()
                    workload.stop.wait(0.2)
            except Exception as error:  # a client bug must show, not hide as a quiet thread
                workload.history.record(op="clientError", kind=kind, message=repr(error))
                workload.stop.wait(0.2)
            rng.random()
        if client:
            client.close()

    kinds = ["signIn"] * threads + ["push", "push", "inspect"] + ([] if workload.returning else ["admin"])
    workers = [threading.Thread(target=loop, args=(kind, i), daemon=True) for i, kind in enumerate(kinds)]
    for worker in workers:
        worker.start()
    return workers


def run_faults(nodes, postgres, stop, seed, history):
    """Every few seconds one of: kill a node and start it again, pause one, restart PostgreSQL,
    fill PostgreSQL's disk for a few seconds (where it is a tmpfs of its own)."""
    rng = random.Random(seed)
    # Each kind once in the first ones (a short run meets them all), then at random.
    kinds = ["kill", "pause", "postgres"] + (["disk-full"] if postgres.small_disk else [])
    first = list(kinds)
    rng.shuffle(first)
    while not stop.wait(rng.uniform(4, 9)):
        fault = first.pop(0) if first else rng.choice(["kill"] + kinds)
        if fault == "disk-full":
            log("fault: PostgreSQL's disk full")
            history.record(op="fault", fault="disk-full")
            postgres.fill_disk()
            stop.wait(rng.uniform(2, 5))
            postgres.free_disk()
            continue
        if fault == "kill":
            node = rng.choice(nodes)
            log("fault: SIGKILL", node.name)
            history.record(op="fault", fault="kill", node=node.name)
            node.kill()
            stop.wait(rng.uniform(0.5, 2))
            node.start()
        elif fault == "pause":
            node = rng.choice(nodes)
            log("fault: SIGSTOP", node.name)
            history.record(op="fault", fault="pause", node=node.name)
            node.pause()
            stop.wait(rng.uniform(2, 6))
            node.resume()
        else:
            log("fault: restart PostgreSQL")
            history.record(op="fault", fault="postgres")
            postgres.restart()


def rss_and_files(pid):
    """A process's resident memory (MB) and open files."""
    try:
        status = open(f"/proc/{pid}/status").read()
        rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024
        return round(rss, 1), len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, AttributeError):
        return None, None


def folder_size(path, predicate):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            if predicate(full):
                try:
                    total += os.path.getsize(full)
                except OSError:
                    pass
    return total


def sample(nodes, postgres, history, started):
    """One sample: each node's memory and files; the store's state and its logs (the deliveries
    and refusals every push leaves, kept on purpose), in MB."""
    row = {"minute": round((time.time() - started) / 60, 2), "operations": history.count}
    for node in nodes:
        row[node.name] = rss_and_files(node.process.pid)
    mb = 1024 * 1024
    if postgres:
        sizes = postgres.psql("authsim", """SELECT coalesce(sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.relname IN ('receiver_delivery_batches', 'receiver_rejections', 'backend_events')), 0),
                                                   coalesce(sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.relname NOT IN ('receiver_delivery_batches', 'receiver_rejections', 'backend_events')), 0)
                                            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'""").strip().split("|")
        row["log MB"], row["state MB"] = round(int(sizes[0]) / mb, 2), round(int(sizes[1]) / mb, 2)
    else:
        logs = lambda path: path.endswith("deliveries.jsonl") or path.endswith("rejections.jsonl")
        row["log MB"] = round(sum(folder_size(n.state, logs) for n in nodes) / mb, 2)
        row["state MB"] = round(sum(folder_size(n.state, lambda p: not logs(p)) for n in nodes) / mb, 2)
    return row


def long_report(samples, nodes):
    """The samples as a table, and whether memory, files and the state stayed flat after warm-up
    (16 minutes: a code's 5 and the 10 it is kept after; or half a shorter run): the highest value
    of the last third at most 15 % (and 10 MB, 5 files, 1 MB of state) over the highest between
    warm-up and the last third. Highest against highest, because the journal is a sawtooth
    (rewritten once doubled) and a fleet's rows go in steps (once a minute): a bound, not a line."""
    log("minute | operations | " + " | ".join(f"{n.name} RSS MB, files" for n in nodes) + " | state MB | log MB")
    for row in samples:
        log(f"{row['minute']} | {row['operations']} | " + " | ".join(f"{row[n.name][0]}, {row[n.name][1]}" for n in nodes)
            + f" | {row['state MB']} | {row['log MB']}")
    end = samples[-1]["minute"]
    warm = min(16, end / 2)
    middle = [r for r in samples if warm <= r["minute"] < end * 2 / 3]
    late = [r for r in samples if r["minute"] >= end * 2 / 3]
    if not middle or not late:
        log("too few samples after warm-up to say")
        return False
    flat = True
    series = [(f"{n.name} RSS MB", lambda r, n=n: r[n.name][0], 10) for n in nodes] + \
             [(f"{n.name} open files", lambda r, n=n: r[n.name][1], 5) for n in nodes] + [("state MB", lambda r: r["state MB"], 1)]
    for name, value, slack in series:
        before, after = max(value(r) for r in middle), max(value(r) for r in late)
        ok = after <= before * 1.15 + slack
        flat &= ok
        log(f"{'flat' if ok else 'GROWS'}: {name} at most {before} from minute {middle[0]['minute']}, at most {after} in the last third")
    first, last = samples[0], samples[-1]
    per_op = (last["log MB"] - first["log MB"]) * 1024 * 1024 / max(1, last["operations"] - first["operations"])
    log(f"logs (kept on purpose): {last['log MB']} MB, {per_op:.0f} bytes per operation")
    return flat


def final_state(nodes, postgres, out):
    """Users from the Admin API (every page), deliveries from the store, written beside the history."""
    users, page = [], None
    while True:
        params = {"maxResults": 1000}
        if page:
            params["nextPageToken"] = page
        r = requests.get(f"{nodes[0].backend}/identitytoolkit.googleapis.com/v1/projects/{PROJECT}/accounts:batchGet", params=params,
                         headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
        r.raise_for_status()
        body = r.json()
        users += [{k: u.get(k) for k in ("localId", "phoneNumber", "email", "displayName")} for u in body.get("users", [])]
        page = body.get("nextPageToken")
        if not page:
            break
    if postgres:
        rows = postgres.psql("authsim", "SELECT apns_id, count(*) FROM receiver_deliveries GROUP BY apns_id")
        deliveries = {line.split("|")[0]: int(line.split("|")[1]) for line in rows.splitlines() if "|" in line}
    else:
        deliveries = {}
        for node in nodes:
            for line in open(os.path.join(node.state, "deliveries.jsonl")):
                if line.startswith('{"authsim-format"'):
                    continue  # the log's format stamp
                apns_id = json.loads(line)["apns-id"]
                deliveries[apns_id] = deliveries.get(apns_id, 0) + 1
    state = {"users": users, "deliveries": deliveries}
    json.dump(state, open(os.path.join(out, "final.json"), "w"))
    return state


def half_done_retries(workload, entries, nodes):
    """Sign-ins answered 5xx or cut off, never signed in: try each once more, now the fleet is whole."""
    decided = {e["session"] for e in entries if e.get("op") in ("signIn", "retry") and e.get("status") is not None and e["status"] < 500}
    cut = {e["session"]: e for e in entries if e.get("op") == "signIn" and (e.get("status") is None or e["status"] >= 500)}
    for session, entry in cut.items():
        if session in decided:
            continue
        workload.call("retry", nodes[0], "POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber", params={"key": API_KEY},
                      json={"sessionInfo": session, "code": entry["code"]}, record={"session": session, "number": entry["number"]})


# The operations whose 200 names the user signed in (`localId`).
SIGN_IN_OPS = ("signIn", "retry", "proofSignIn")


def check(entries, state):
    """The rules, over a history and a final state: a list of (rule, what broke it)."""
    problems = []
    ok = [e for e in entries if e.get("status") == 200]
    # codes: a session signs in at most once.
    by_session = {}
    for e in ok:
        if e["op"] in ("signIn", "retry"):
            by_session.setdefault(e["session"], []).append(e)
    problems += [("codes", f"session …{s[-12:]} signed in {len(v)} times") for s, v in by_session.items() if len(v) > 1]
    # recaptcha: a token gets a code at most once.
    by_token = {}
    for e in ok:
        if e["op"] == "sendCode" and "recaptcha" in e:
            by_token.setdefault(e["recaptcha"], []).append(e)
    problems += [("recaptcha", f"token …{t} got {len(v)} codes") for t, v in by_token.items() if len(v) > 1]
    # temporary-proofs: a proof signs in at most once.
    by_proof = {}
    for e in ok:
        if e["op"] == "proofSignIn":
            by_proof.setdefault(e["proof"], []).append(e)
    problems += [("temporary-proofs", f"temporary proof …{p} signed in {len(v)} times") for p, v in by_proof.items() if len(v) > 1]
    # receipts: issued once; a forged secret never gets a code.
    issued = {}
    for e in ok:
        if e["op"] == "verifyClient":
            issued.setdefault(e["receipt"], []).append(e)
    problems += [("receipts", f"receipt …{r[-12:]} issued {len(v)} times") for r, v in issued.items() if len(v) > 1]
    problems += [("receipts", f"a code for a receipt never issued (…{e['receipt'][-12:]})") for e in ok
                 if e["op"] == "sendCode" and "receipt" in e and e["receipt"] not in issued]
    problems += [("receipts", f"a forged secret for receipt …{e['receipt'][-12:]} got a code") for e in ok if e["op"] == "sendCode" and e.get("forged")]
    # users-kept and one-user.
    users = state["users"]
    by_id = {u["localId"]: u for u in users}
    by_number = {}
    for u in users:
        if u.get("phoneNumber"):
            by_number.setdefault(u["phoneNumber"], []).append(u["localId"])
    problems += [("one-user", f"{n} has {len(ids)} users") for n, ids in by_number.items() if len(ids) > 1]
    signed_ids = {}
    for e in ok:
        if e["op"] in SIGN_IN_OPS and e.get("localId"):
            user = by_id.get(e["localId"])
            if user is None or user.get("phoneNumber") != e["number"]:
                problems.append(("users-kept", f"{e['number']} signed in as {e['localId']} at {e['t']}, and that user is {'gone' if user is None else 'another number'}"))
            signed_ids.setdefault(e["number"], set()).add(e["localId"])
    problems += [("one-user", f"{n} signed in as {len(ids)} users") for n, ids in signed_ids.items() if len(ids) > 1]
    # pushes.
    delivered = state["deliveries"]
    for e in entries:
        if e.get("op") != "push":
            continue
        count = delivered.get(e["apnsID"], 0)
        if e.get("status") == 200 and count != 1:
            problems.append(("pushes", f"push {e['apnsID']} answered 200 is in the log {count} times"))
        elif e.get("status") != 200 and count > 1:
            problems.append(("pushes", f"push {e['apnsID']} answered {e.get('status')} is in the log {count} times"))
    # half-done: a retried session that is spent must have its user (an expired one decides nothing:
    # the retry came after the code's 5 minutes).
    for e in entries:
        if e.get("op") == "retry" and e.get("status") is not None and 400 <= e["status"] < 500 and e.get("message") != "SESSION_EXPIRED":
            if not by_number.get(e["number"]):
                problems.append(("half-done", f"session …{e['session'][-12:]} is spent ({e.get('message')}) and {e['number']} has no user"))
    # answered-503: a part that cannot reach its state answers 503 (try again); any other 5xx is a
    # failure nothing mapped (the inspector's users list once answered a bare 500 with the database cut).
    problems += [("answered-503", " ".join(filter(None, [e["op"], e.get("path"), "on", e.get("node"), "answered", str(e["status"])])))
                 for e in entries if isinstance(e.get("status"), int) and e["status"] >= 500 and e["status"] != 503]
    return problems


def remove_signed_in_user(history, state):
    """Removes a user a 200 sign-in named (a phone user can also come from a sign-in whose answer was lost)."""
    named = {e.get("localId") for e in history if e.get("op") in SIGN_IN_OPS and e.get("status") == 200}
    state["users"].remove(next(u for u in state["users"] if u["localId"] in named))


BREAKS = {
    "codes": lambda h, s: h.append(next(dict(e) for e in h if e.get("op") == "signIn" and e.get("status") == 200)),
    "recaptcha": lambda h, s: h.append(next(dict(e) for e in h if e.get("op") == "sendCode" and "recaptcha" in e and e.get("status") == 200)),
    "temporary-proofs": lambda h, s: h.append(next(dict(e) for e in h if e.get("op") == "proofSignIn" and e.get("status") == 200)),
    "receipts": lambda h, s: h.append(dict(next(e for e in h if e.get("op") == "sendCode" and "receipt" in e and e.get("status") == 200), forged=True)),
    "users-kept": remove_signed_in_user,
    "one-user": lambda h, s: s["users"].append(dict(next(u for u in s["users"] if u.get("phoneNumber")), localId="second-" + uuid.uuid4().hex)),
    "pushes": lambda h, s: s["deliveries"].pop(next(e["apnsID"] for e in h if e.get("op") == "push" and e.get("status") == 200)),
    "answered-503": lambda h, s: h.append({"op": "inspect", "node": "node-a", "status": 500, "path": "/api/v1/users", "t": 0}),
    "half-done": lambda h, s: h.append({"op": "retry", "status": 400, "message": "INVALID_SESSION_INFO", "session": "x" * 20, "number": "+16505559999", "t": 0}),
}


def self_test(entries, state):
    """Each rule broken on purpose in a copy: its check must fail. Returns whether every one did."""
    failed_all = True
    for rule, breaking in BREAKS.items():
        history, final = [dict(e) for e in entries], json.loads(json.dumps(state))
        breaking(history, final)
        caught = [p for p in check(history, final) if p[0] == rule]
        log(f"self-test {rule}: {'caught: ' + caught[0][1] if caught else 'NOT CAUGHT'}")
        failed_all &= bool(caught)
    return failed_all


def report(entries, state, out, long_run=False):
    counts = {}
    for e in entries:
        key = f"{e.get('op')} {e.get('status') if e.get('op') != 'fault' else e.get('fault')}"
        counts[key] = counts.get(key, 0) + 1
    log("history:", ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    log(f"final state: {len(state['users'])} users, {sum(state['deliveries'].values())} deliveries")
    problems = check(entries, state)
    for rule, what in problems:
        log(f"FAIL {rule}: {what}")
    needed = {"signIn 200": "sign-ins", "push 200": "pushes", "sendCode 200": "codes"}
    if not long_run:
        needed["proofSignIn 200"] = "temporary proofs"
    thin = [name for key, name in needed.items() if counts.get(key, 0) == 0]
    if thin:
        log("FAIL the run proved nothing about:", ", ".join(thin))
    return not problems and not thin


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", help="folder with the authsim executable")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--out", help="folder for the history, the nodes' logs and the final state (default: a new temporary folder)")
    parser.add_argument("--sign-in-clients", type=int, default=6)
    parser.add_argument("--no-faults", action="store_true")
    parser.add_argument("--self-test", action="store_true", help="also break each rule on purpose and show its check fails")
    parser.add_argument("--check", metavar="DIR", help="check the run recorded in DIR again; start nothing")
    parser.add_argument("--long", action="store_true", help="a long run: no faults, returning numbers, samples of memory, files and store")
    parser.add_argument("--one-node", action="store_true", help="with --long: one authsim serve, its state in files")
    parser.add_argument("--sample-every", type=float, default=30)
    args = parser.parse_args()

    if args.check:
        entries = [json.loads(line) for line in open(os.path.join(args.check, "history.jsonl"))]
        state = json.load(open(os.path.join(args.check, "final.json")))
        samples_file = os.path.join(args.check, "samples.jsonl")
        passed = report(entries, state, args.check, long_run=os.path.exists(samples_file))
        if os.path.exists(samples_file):
            samples = [json.loads(line) for line in open(samples_file)]
            names = [k for k in samples[0] if k.startswith("node")]
            passed &= long_report(samples, [argparse.Namespace(name=n) for n in names])
        if args.self_test:
            passed &= self_test(entries, state)
        sys.exit(0 if passed else 1)

    out = args.out or tempfile.mkdtemp(prefix="authsim-chaos-")
    os.makedirs(out, exist_ok=True)
    log(f"chaos: {args.minutes} min, seed {args.seed}, output in {out}")
    work = tempfile.mkdtemp(prefix="authsim-chaos-run-")
    # Copies of the programs: a build during the run must not change what a restarted node runs.
    for program in ("authsim", "apns-sender"):
        shutil.copy2(os.path.join(args.bin, program), os.path.join(work, program))
    binary = os.path.join(work, "authsim")
    certs = os.path.join(work, "Certs")
    subprocess.run([os.path.join(work, "apns-sender"), "--print-token", "--certs", certs], check=True, stdout=subprocess.DEVNULL)
    token_file = os.path.join(work, "admin-token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    # Its own folder under /tmp: nobody must reach it (a socket's path has at most 107 bytes).
    if args.long:
        args.no_faults = True
    postgres = None if args.one_node else Postgres(tempfile.mkdtemp(prefix="authsim-chaos-pg-"),
                                                    small_disk_mb=None if args.no_faults or args.long else 384)
    names = ["node"] if args.one_node else ["node-a", "node-b"]
    nodes = [Node(name, binary, out, certs, postgres.url if postgres else None, token_file) for name in names]
    history = History(os.path.join(out, "history.jsonl"))
    stop = threading.Event()
    passed = False
    try:
        for node in nodes:
            node.start()
        workload = Workload(nodes, history, args.seed, stop)
        workload.certs = certs
        workload.returning = args.long
        started = time.time()
        workload.register_devices(8)
        workers = run_clients(workload, args.sign_in_clients)
        faults = None
        if not args.no_faults:
            faults = threading.Thread(target=run_faults, args=(nodes, postgres, stop, args.seed + 1, history), daemon=True)
            faults.start()
        deadline = time.time() + args.minutes * 60
        samples = []
        every = args.sample_every if args.long else 30
        while time.time() < deadline:
            time.sleep(min(every, max(0, deadline - time.time())))
            if args.long:
                samples.append(sample(nodes, postgres, history, started))
                with open(os.path.join(out, "samples.jsonl"), "a") as f:
                    f.write(json.dumps(samples[-1]) + "\n")
            log(f"{history.count} operations so far")
        stop.set()
        if faults:
            faults.join()
        for worker in workers:
            worker.join(30)
        # The fleet whole again (a fault's restart has finished above): check what it kept.
        for node in nodes:
            if node.paused:
                node.resume()
        history.file.flush()
        entries = [json.loads(line) for line in open(os.path.join(out, "history.jsonl"))]
        half_done_retries(workload, entries, nodes)
        history.file.flush()
        entries = [json.loads(line) for line in open(os.path.join(out, "history.jsonl"))]
        state = final_state(nodes, postgres, out)
        passed = report(entries, state, out, long_run=args.long)
        if args.long:
            passed &= long_report(samples, nodes)
        if args.self_test:
            passed &= self_test(entries, state)
    finally:
        stop.set()
        for node in nodes:
            node.terminate()
        history.close()
        shutil.rmtree(work, ignore_errors=True)
        if postgres:
            postgres.stop()
            shutil.rmtree(postgres.folder, ignore_errors=True)
            postgres.unmount()
    log("chaos: " + ("PASSED" if passed else "FAILED") + f" (history and logs in {out})")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
