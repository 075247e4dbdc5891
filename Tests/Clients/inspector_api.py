"""The inspector's API from clients we did not write: requests (PyPI) for every endpoint, the
Server-Sent Events stream read off the wire, and openapi-spec-validator (PyPI) for the OpenAPI
document it serves. Every JSON answer is validated (jsonschema) against the response schema the
document gives its path, method and status, and every operation with a JSON answer must have been
checked so by the end. Written for InspectorTests.swift, which starts `authsim serve` and passes its
URLs. Prints "ok <check>" per check and "done"; any failure raises (exit status 1).

usage: inspector_api.py INSPECTOR_URL GATEWAY_URL BACKEND_URL SANDBOX_PORT CERTS APNS_SENDER PAYLOAD API_KEY
"""
import json
import os
import subprocess
import sys
import threading
import time

import re

import jsonschema
import requests
from openapi_spec_validator import validate
from prometheus_client.parser import text_string_to_metric_families

inspector, gateway, backend, sandbox_port, certs, apns_sender, payload, api_key = sys.argv[1:9]
api = inspector + "/api/v1"


def ok(name):
    print("ok", name, flush=True)


def send_push(token, environment="sandbox"):
    run = subprocess.run([apns_sender, payload, "--token", token, "--certs", certs, "--port", sandbox_port, "--json"],
                         capture_output=True, text=True, timeout=600)
    return json.loads(run.stdout.splitlines()[0])


def error_message(answer, status):
    assert answer.status_code == status, (answer.status_code, answer.text)
    return answer.json()["error"]["message"]


# The OpenAPI document validates, and names every path this script uses.
document = requests.get(f"{api}/openapi.json", timeout=10).json()
validate(document)


def json_schema(schema):
    """OpenAPI 3.0's schema dialect as JSON Schema: `nullable: true` is a null type beside the others."""
    if isinstance(schema, list):
        return [json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    converted = {key: json_schema(value) for key, value in schema.items() if key != "nullable"}
    if schema.get("nullable") and "type" in converted:
        converted["type"] = [converted["type"], "null"] if isinstance(converted["type"], str) else converted["type"] + ["null"]
    return converted


components = json_schema(document.get("components", {}))
operations = []  # (method, path template, regex, operation)
for template, item in document["paths"].items():
    pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$")
    for method, operation in item.items():
        operations.append((method.upper(), template, pattern, operation))
checked = set()


def check_answer(response):
    """Validates a JSON answer against its operation's schema for its status."""
    request = response.request
    path = requests.utils.urlparse(request.url).path
    if not path.startswith("/api/v1") or "json" not in response.headers.get("content-type", ""):
        return
    matches = [op for op in operations if op[0] == request.method and op[2].match(path)]
    if not matches:  # a path the API does not have: 404 in the error envelope the document describes
        assert response.status_code == 404, f"{request.method} {path} is not in the OpenAPI document but answered {response.status_code}"
        jsonschema.validate(response.json(), {"$ref": "#/components/schemas/Error", "components": components})
        return
    method, template, _, operation = max(matches, key=lambda op: op[1].count("/") - op[1].count("{"))
    answer = operation["responses"].get(str(response.status_code))
    assert answer, f"{method} {template} answered {response.status_code}, which the document does not list"
    schema = answer.get("content", {}).get("application/json", {}).get("schema")
    assert schema is not None, f"{method} {template} {response.status_code} answered JSON the document does not describe"
    try:
        jsonschema.validate(response.json(), dict(json_schema(schema), components=components))
    except jsonschema.ValidationError as error:
        raise AssertionError(f"{method} {template} {response.status_code}: {error.message} at {list(error.absolute_path)}") from None
    checked.add((method, template, str(response.status_code)))


_request = requests.sessions.Session.request


def request_and_check(self, method, url, **kwargs):
    response = _request(self, method, url, **kwargs)
    if not kwargs.get("stream"):
        check_answer(response)
    return response


requests.sessions.Session.request = request_and_check
for path in ["/api/v1/pushes", "/api/v1/pushes/latest", "/api/v1/pushes/{id}", "/api/v1/rejections", "/api/v1/events", "/api/v1/faults",
             "/api/v1/devices", "/api/v1/devices/{environment}/{token}/invalidate", "/api/v1/sms", "/api/v1/emails", "/api/v1/users", "/api/v1/users/{uid}",
             "/api/v1/accounts.json",
             "/metrics", "/livez", "/readyz"]:
    assert path in document["paths"], path
ok("the OpenAPI document validates (openapi-spec-validator) and describes every endpoint")

assert requests.get(f"{inspector}/livez", timeout=10).status_code == 200
assert requests.get(f"{inspector}/readyz", timeout=10).status_code == 200
ok("/livez and /readyz")

# The live stream, read as any SSE client reads it.
events = []
stream = requests.get(f"{api}/events", stream=True, timeout=30)
assert stream.headers["content-type"].startswith("text/event-stream")


def read_stream():
    try:
        for line in stream.iter_lines(decode_unicode=True):
            if line and line.startswith("data: "):
                batch = json.loads(line[6:])
                assert isinstance(batch["skipped"], int)
                events.extend(batch["pushes"])
    except Exception:  # the stream is closed at the end
        pass


threading.Thread(target=read_stream, daemon=True).start()
time.sleep(0.3)

device = requests.post(f"{gateway}/devices", json={"environment": "sandbox", "bundleID": "com.example.authsim", "label": "api test"}, timeout=10).json()
token = device["token"]
assert send_push(token)["status"] == 200
stranger = os.urandom(32).hex()
assert send_push(stranger)["reason"] == "BadDeviceToken"
deadline = time.time() + 10
while len(events) < 2 and time.time() < deadline:
    time.sleep(0.05)
assert [e["status"] for e in events[:2]] == [200, 400], events
ok("/api/v1/events streams each push as it is answered")

# Pushes, filters, latest, one by id.
mine = requests.get(f"{api}/pushes", params={"token": token}, timeout=10).json()
assert len(mine) == 1 and mine[0]["status"] == 200 and mine[0]["topic"] == "com.example.authsim", mine
# What the device side did with it, once APNs' latency has passed: no device is listening on that token.
deadline = time.time() + 10
while "no simulated device" not in (mine[0].get("device") or "") and time.time() < deadline:
    time.sleep(0.1)
    mine = requests.get(f"{api}/pushes", params={"token": token}, timeout=10).json()
assert "no simulated device has token" in mine[0]["device"], mine[0]
latest = requests.get(f"{api}/pushes/latest", params={"status": 400}, timeout=10).json()
assert latest["deviceToken"] == stranger and latest["reason"] == "BadDeviceToken" and "not registered" in latest["cause"], latest
assert latest["providerToken"]["alg"] == "ES256" and latest["providerToken"]["kid"], latest["providerToken"]
assert requests.get(f"{api}/pushes/{latest['id']}", timeout=10).json()["apnsID"] == latest["apnsID"]
rejections = requests.get(f"{api}/rejections", params={"environment": "sandbox"}, timeout=10).json()
assert all(r["status"] != 200 for r in rejections) and rejections
since = requests.get(f"{api}/pushes", params={"after": latest["id"]}, timeout=10).json()
assert since == []
ok("pushes by token (with what the device side did), latest by status, one by id, rejections, after")

# Faults: set, used, cleared.
put = requests.put(f"{api}/faults", json={"faults": [f"reject=Unregistered,token={token},count=1"]}, timeout=10)
assert put.status_code == 200 and put.json()["faults"] == [f"reject=Unregistered,token={token},count=1"], put.text
failed = send_push(token)
assert failed["status"] == 410 and failed["reason"] == "Unregistered", failed
assert requests.get(f"{api}/faults", timeout=10).json() == {"faults": []}  # count=1: used up
assert requests.put(f"{api}/faults", json={"faults": ["delay=5"]}, timeout=10).status_code == 200
assert requests.delete(f"{api}/faults", timeout=10).status_code == 204
assert requests.get(f"{api}/faults", timeout=10).json() == {"faults": []}
ok("faults: PUT, used by the next push, DELETE")

# Devices: add one, invalidate one; its next push is 410 Unregistered.
added = requests.post(f"{api}/devices", json={"environment": "production", "bundleID": "com.example.authsim", "label": "added by API"}, timeout=10)
assert added.status_code == 200 and added.json()["environment"] == "production" and len(added.json()["token"]) == 64, added.text
assert "environment is sandbox or production" in error_message(requests.post(f"{api}/devices", json={"environment": "moon", "bundleID": "x"}, timeout=10), 400)
invalidated = requests.post(f"{api}/devices/sandbox/{token}/invalidate", params={"as": "unregistered"}, timeout=10)
assert invalidated.status_code == 200 and invalidated.json()["state"] == "unregistered", invalidated.text
assert send_push(token)["reason"] == "Unregistered"
ok("devices: invalidated, and APNs answers 410 for it")

# Users: what the Emulator Suite's Authentication tab does, through the API; the Admin SDK (firebase-admin,
# a client we did not write) sees every change, and the inspector sees the Admin SDK's.
os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = backend.split("://", 1)[1]
import firebase_admin  # noqa: E402
from firebase_admin import auth  # noqa: E402
firebase_admin.initialize_app(options={"projectId": "authsim-demo"})

def client(path, body):
    return requests.post(f"{backend}/identitytoolkit.googleapis.com/v1/{path}", params={"key": api_key}, json=body, timeout=10)

phone_users = requests.get(f"{api}/users", timeout=10).json()
added = requests.post(f"{api}/users", json={"email": "ada@example.com", "password": "correct horse", "displayName": "Ada Lovelace",
                                            "phoneNumber": "+16505550111", "customClaims": {"role": "admin", "level": 3}}, timeout=10)
assert added.status_code == 201 and added.json()["displayName"] == "Ada Lovelace" and "passwordHash" in added.json(), added.text
ada = auth.get_user_by_email("ada@example.com")
assert ada.uid == added.json()["localId"] and ada.display_name == "Ada Lovelace" and ada.phone_number == "+16505550111", ada
assert ada.custom_claims == {"role": "admin", "level": 3}, ada.custom_claims
assert client("accounts:signInWithPassword", {"email": "ada@example.com", "password": "correct horse", "returnSecureToken": True}).status_code == 200
ok("users: one added in the inspector is the Admin SDK's, password and custom claims included")

before = len(requests.get(f"{api}/users", timeout=10).json())
assert "EMAIL_EXISTS" in error_message(requests.post(f"{api}/users", json={"email": "ada@example.com"}, timeout=10), 409)
assert "PHONE_NUMBER_EXISTS" in error_message(requests.post(f"{api}/users", json={"phoneNumber": "+16505550111"}, timeout=10), 409)
assert "WEAK_PASSWORD" in error_message(requests.post(f"{api}/users", json={"email": "b@example.com", "password": "123"}, timeout=10), 400)
assert "FORBIDDEN_CLAIM" in error_message(requests.post(f"{api}/users", json={"email": "c@example.com", "customClaims": {"sub": "x"}}, timeout=10), 400)
assert "CLAIMS_TOO_LARGE" in error_message(requests.post(f"{api}/users", json={"email": "d@example.com", "customClaims": {"x": "y" * 1000}}, timeout=10), 400)
assert "colour" in error_message(requests.post(f"{api}/users", json={"colour": "red"}, timeout=10), 400)
assert len(requests.get(f"{api}/users", timeout=10).json()) == before
ok("users: a taken email or number is 409, a weak password, a reserved or too large claim, an unknown field 400; nothing added")

grace = auth.create_user(email="grace@example.com", display_name="Grace Hopper", phone_number="+16505550123")
assert [u["localId"] for u in requests.get(f"{api}/users", params={"q": "HOPPER"}, timeout=10).json()] == [grace.uid]
assert [u["localId"] for u in requests.get(f"{api}/users", params={"q": "grace@"}, timeout=10).json()] == [grace.uid]
assert [u["localId"] for u in requests.get(f"{api}/users", params={"q": grace.uid[:6]}, timeout=10).json()] == [grace.uid]
assert {u["localId"] for u in requests.get(f"{api}/users", params={"q": "+1650555012"}, timeout=10).json()} == {grace.uid}
assert requests.get(f"{api}/users", params={"q": "nobody-at-all"}, timeout=10).json() == []
ok("users: one the Admin SDK made is found by name (any case), email, ID and phone number")

changed = requests.patch(f"{api}/users/{grace.uid}", json={"displayName": "", "phoneNumber": "", "customClaims": {"tier": 2}, "disabled": True}, timeout=10)
assert changed.status_code == 200, changed.text
grace = auth.get_user(grace.uid)
assert grace.display_name is None and grace.phone_number is None and grace.disabled and grace.custom_claims == {"tier": 2}, grace
assert requests.patch(f"{api}/users/{grace.uid}", json={"customClaims": {}, "disabled": False, "email": "rear.admiral@example.com", "emailVerified": True}, timeout=10).status_code == 200
grace = auth.get_user(grace.uid)
assert not grace.custom_claims and not grace.disabled and grace.email == "rear.admiral@example.com" and grace.email_verified, grace
assert "nothing to change" in error_message(requests.patch(f"{api}/users/{grace.uid}", json={}, timeout=10), 400)
assert "cannot change" in error_message(requests.patch(f"{api}/users/{grace.uid}", json={"localId": "other"}, timeout=10), 400)
assert "EMAIL_EXISTS" in error_message(requests.patch(f"{api}/users/{grace.uid}", json={"email": "ada@example.com"}, timeout=10), 409)
assert "USER_NOT_FOUND" in error_message(requests.patch(f"{api}/users/no-such-user", json={"disabled": True}, timeout=10), 404)
ok("users: edited (a name and number removed, claims set then removed, disabled, enabled, email changed) as the Admin SDK reads them; bad edits refused")

# A user's page: the phone user of the sign-ins before, with the flows, pushes and SMS that were theirs.
phone_user = next(u for u in phone_users if u.get("phoneNumber"))
trail = requests.get(f"{api}/users/{phone_user['localId']}", timeout=10).json()
assert trail["user"]["localId"] == phone_user["localId"]
assert trail["flows"] and all(f["uid"] == phone_user["localId"] or f["phoneNumber"] == phone_user["phoneNumber"] for f in trail["flows"]), trail["flows"]
assert any(f["outcome"] == "signed in" and f["path"] == "silent push" for f in trail["flows"]), trail["flows"]
assert trail["sms"] and all(m["phoneNumber"] == phone_user["phoneNumber"] for m in trail["sms"]), trail["sms"]
tokens = {f["deviceToken"].lower() for f in trail["flows"] if f.get("deviceToken")}
# The pushes of the sign-ins left the view (cleared above): one more to their device, by apns-sender.
assert tokens and send_push(sorted(tokens)[0])["status"] == 200
trail = requests.get(f"{api}/users/{phone_user['localId']}", timeout=10).json()
assert trail["pushes"] and {p["deviceToken"].lower() for p in trail["pushes"]} <= tokens and any(p["status"] == 200 for p in trail["pushes"]), trail["pushes"]
assert client("accounts:sendOobCode", {"requestType": "PASSWORD_RESET", "email": "ada@example.com"}).status_code == 200
ada_trail = requests.get(f"{api}/users/{ada.uid}", timeout=10).json()
assert [m["requestType"] for m in ada_trail["emails"]] == ["PASSWORD_RESET"] and ada_trail["flows"][-1]["path"] == "email and password", ada_trail
assert ada_trail["pushes"] == [] and ada_trail["sms"] == [], ada_trail
assert "no user nobody" in error_message(requests.get(f"{api}/users/nobody", timeout=10), 404)
ok("a user's page: their sign-ins, the pushes to their device, the SMS to their number, the emails to their address")

# Export, clear, import: the emulator's accounts.json round trip, all or nothing.
exported = requests.get(f"{api}/accounts.json", timeout=10).json()
assert exported["kind"] == "identitytoolkit#DownloadAccountResponse" and len(exported["users"]) == before + 1, exported
assert requests.delete(f"{api}/users", timeout=10).status_code == 204
assert requests.get(f"{api}/users", timeout=10).json() == [] and not list(auth.list_users().iterate_all())
imported = requests.post(f"{api}/accounts.json", json=exported, timeout=10)
assert imported.status_code == 200 and imported.json() == {"imported": len(exported["users"]), "replaced": 0}, imported.text
assert auth.get_user_by_email("ada@example.com").custom_claims == {"role": "admin", "level": 3}
assert client("accounts:signInWithPassword", {"email": "ada@example.com", "password": "correct horse", "returnSecureToken": True}).status_code == 200
message = error_message(requests.post(f"{api}/accounts.json", json=exported, timeout=10), 409)
assert ada.uid in message and "nothing was imported" in message, message
replaced = requests.post(f"{api}/accounts.json", params={"overwrite": "true"}, json=exported, timeout=10).json()
assert replaced == {"imported": len(exported["users"]), "replaced": len(exported["users"])}, replaced
bad = {"users": [{"localId": "new-one", "email": "new@example.com"}, {"localId": "bad-one", "email": "not an email"}]}
message = error_message(requests.post(f"{api}/accounts.json", json=bad, timeout=10), 400)
assert "user 1 (bad-one)" in message and "nothing was imported" in message, message
assert "new-one" not in [u["localId"] for u in requests.get(f"{api}/users", timeout=10).json()]
ok("users: exported as accounts.json, cleared, imported (passwords and claims kept); a second import 409 unless overwrite; a bad user imports nothing")

sms = requests.get(f"{api}/sms", timeout=10).json()
assert all(m["phoneNumber"].startswith("+") and len(m["code"]) == 6 for m in sms), sms
# The email outbox: an app's sign-up and password reset (REST, as the SDK sends them), the code spent.
assert client("accounts:signUp", {"email": "lin@example.com", "password": "correct horse", "returnSecureToken": True}).status_code == 200
assert client("accounts:sendOobCode", {"requestType": "PASSWORD_RESET", "email": "lin@example.com"}).status_code == 200
emails = requests.get(f"{api}/emails", timeout=10).json()
reset = [m for m in emails if m["email"] == "lin@example.com" and m["requestType"] == "PASSWORD_RESET"]
assert len(reset) == 1 and reset[0]["used"] is False and reset[0]["code"] in reset[0]["link"], emails
assert client("accounts:resetPassword", {"oobCode": reset[0]["code"], "newPassword": "battery staple"}).status_code == 200
assert [m["used"] for m in requests.get(f"{api}/emails", timeout=10).json() if m["code"] == reset[0]["code"]] == [True]
assert requests.delete(f"{api}/users/{ada.uid}", timeout=10).status_code == 204
assert ada.uid not in [u["localId"] for u in requests.get(f"{api}/users", timeout=10).json()]
ok("users deleted; the SMS outbox; the email outbox, a code shown spent")

# Metrics in Prometheus' text format.
metrics = requests.get(f"{inspector}/metrics", timeout=10).text
assert 'authsim_pushes_total{environment="sandbox",status="400",reason="BadDeviceToken"} 1' in metrics, metrics
assert 'authsim_pushes_total{environment="sandbox",status="410",reason="Unregistered"} 2' in metrics, metrics
assert "# TYPE authsim_pushes_total counter" in metrics and "authsim_inspector_subscribers 1" in metrics
assert "# TYPE authsim_backend_request_duration_seconds histogram" in metrics, metrics
count_lines = [l for l in metrics.splitlines() if l.startswith("authsim_backend_request_duration_seconds_count{") and "accounts\"" in l and 'status="200"' in l]
assert count_lines and int(count_lines[0].split()[-1]) >= 1, metrics
inf = [l for l in metrics.splitlines() if l.startswith("authsim_backend_request_duration_seconds_bucket{") and 'le="+Inf"' in l]
assert inf, metrics
families = {family.name: family for family in text_string_to_metric_families(metrics)}  # Prometheus' own parser
assert families["authsim_pushes"].type == "counter" and families["authsim_backend_request_duration_seconds"].type == "histogram", families.keys()
ok("/metrics counts pushes by environment, status and reason, and times the backend's routes (histograms)")

# Bad input says what was wrong and changes nothing.
assert "unknown filter colour" in error_message(requests.get(f"{api}/pushes", params={"colour": "red"}, timeout=10), 400)
assert "environment is sandbox or production" in error_message(requests.get(f"{api}/pushes", params={"environment": "moon"}, timeout=10), 400)
assert "since is RFC 3339" in error_message(requests.get(f"{api}/pushes", params={"since": "yesterday"}, timeout=10), 400)
assert "the body is" in error_message(requests.put(f"{api}/faults", data="{not json", timeout=10), 400)
assert "not an APNs reason" in error_message(requests.put(f"{api}/faults", json={"faults": ["reject=Whatever"]}, timeout=10), 400)
assert "unknown fault part" in error_message(requests.put(f"{api}/faults", json={"faults": ["explode"]}, timeout=10), 400)
assert requests.get(f"{api}/faults", timeout=10).json() == {"faults": []}
assert "no push 99999" in error_message(requests.get(f"{api}/pushes/99999", timeout=10), 404)
assert "id is an integer, not abc" in error_message(requests.get(f"{api}/pushes/abc", timeout=10), 400)
assert "status is an integer, not ok" in error_message(requests.get(f"{api}/pushes", params={"status": "ok"}, timeout=10), 400)
assert "limit is at least 1, not 0" in error_message(requests.get(f"{api}/pushes", params={"limit": "0"}, timeout=10), 400)
assert "unknown filter x: GET /api/v1/devices takes no query parameters" in error_message(requests.get(f"{api}/devices", params={"x": "1"}, timeout=10), 400)
assert "bundleID is required" in error_message(requests.post(f"{api}/devices", json={"environment": "sandbox"}, timeout=10), 400)
assert "faults[1] is a string" in error_message(requests.put(f"{api}/faults", json={"faults": ["reject=BadDeviceToken", 7]}, timeout=10), 400)
assert "as is unregistered or expired, not gone" in error_message(requests.post(f"{api}/devices/sandbox/{token}/invalidate", params={"as": "gone"}, timeout=10), 400)
assert "no such path" in error_message(requests.get(f"{api}/nothing", timeout=10), 404)
assert "the body is a JSON object" in error_message(requests.patch(f"{api}/users/x", data="[]", timeout=10), 400)
ok("bad input, checked against the document before a handler runs: unknown filter, bad values, bad JSON, a missing field, an unknown reason, unknown ids and paths: 4xx that say why")

assert requests.delete(f"{api}/pushes", timeout=10).status_code == 204
assert requests.get(f"{api}/pushes", timeout=10).json() == []
ok("DELETE /api/v1/pushes clears the view")
# Every operation that answers JSON was called, and its answer held against its schema.
requests.get(f"{api}/openapi.json", timeout=10)
requests.get(f"{api}/devices", timeout=10)
requests.get(f"{api}/flows", timeout=10)
flows = requests.get(f"{api}/flows", timeout=10).json()
if flows:
    requests.get(f"{api}/flows/{flows[-1]['id']}", timeout=10)
assert "id is an integer, not abc" in error_message(requests.get(f"{api}/flows/abc", timeout=10), 400)
successes = {(method, template) for method, template, _, operation in operations
             if "application/json" in operation["responses"].get("200", {}).get("content", {})}
unchecked = sorted(f"{method} {template}" for method, template in successes if (method, template, "200") not in checked)
assert not unchecked, f"JSON answers never checked against the document: {unchecked}"
ok(f"every JSON answer matched its schema in the OpenAPI document ({len(checked)} operation and status pairs, every 200 among them)")
# The stream stays open: the reading thread is a daemon (closing it under the reader waits for its timeout).
print("done", flush=True)
