"""The Firebase Admin SDK for Python (PyPI firebase-admin 7.x), unchanged, against `authsim backend`
as its Auth Emulator (FIREBASE_AUTH_EMULATOR_HOST). Written for AdminSDKTests.swift, which starts
the backend (with --import of an emulator-format export, --sms-code and --id-seed) and reads the
lines this prints: "ok <check>" for each check, then "done". Any failure raises, and the exit
status is not 0.

Besides the Admin SDK: `requests` (one of its dependencies) for the client REST calls an app makes
(custom-token sign-in, token refresh) and PyJWT (another) to verify our RS256 ID tokens against
the published keys, as any JWT library would verify Google's.

usage: firebase_admin_suite.py HOST:PORT PROJECT API_KEY
"""
import json
import os
import sys
import time
import urllib.parse

host, project, api_key = sys.argv[1], sys.argv[2], sys.argv[3]
os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = host

import firebase_admin  # noqa: E402
import jwt  # noqa: E402
import requests  # noqa: E402
from cryptography import x509  # noqa: E402
from firebase_admin import auth  # noqa: E402

firebase_admin.initialize_app(options={"projectId": project})
base = f"http://{host}"
owner = {"Authorization": "Bearer owner"}


def ok(name):
    print("ok", name, flush=True)


def expect_error(kind, call, code=None):
    try:
        call()
    except kind as error:
        if code is not None:
            assert code in str(error) or getattr(error, "code", None) == code, (code, str(error))
        return error
    raise AssertionError(f"expected {kind.__name__}")


def by_provider(provider_id, raw_id):
    """The Python SDK's lookup by a provider's UID (get_users with a ProviderIdentifier)."""
    found = auth.get_users([auth.ProviderIdentifier(provider_id, raw_id)])
    if not found.users:
        raise auth.UserNotFoundError(f"no user for {provider_id} {raw_id}")
    return found.users[0]


def client(path, body):
    """A client call as an app makes it: the API key, JSON."""
    return requests.post(f"{base}/identitytoolkit.googleapis.com/v1/{path}?key={api_key}", json=body, timeout=10)


def sign_in_with_custom_token(token):
    answer = client("accounts:signInWithCustomToken", {"token": token, "returnSecureToken": True})
    return answer


def refresh(refresh_token):
    return requests.post(f"{base}/securetoken.googleapis.com/v1/token?key={api_key}",
                         data={"grant_type": "refresh_token", "refresh_token": refresh_token}, timeout=10)


# --- The import (--import of an Auth Emulator export) --------------------------------------------
imported = auth.get_user("imported-phone-user")
assert imported.phone_number == "+16505550199", imported.phone_number
assert imported.display_name == "Imported Phone"
apple = by_provider("apple.com", "000111.apple.sub.0001")
assert apple.uid == "imported-apple-user" and apple.email == "relay@privaterelay.appleid.com"
google = auth.get_user("imported-google-user")
assert sorted(p.provider_id for p in google.provider_data) == ["google.com", "password"], google.provider_data
assert google.custom_claims == {"role": "editor"}
mfa = auth.get_user("imported-mfa-user")
assert [f["phoneInfo"] for f in mfa._data["mfaInfo"]] == ["+16505550177"], mfa._data  # the Python SDK has no multi_factor on UserRecord
ok("import of an emulator export: phone, apple.com, google.com with claims, a second factor")

# --- Create, look up, errors ----------------------------------------------------------------------
alice = auth.create_user(uid="alice", phone_number="+16505550101", display_name="Alice", photo_url="https://example.com/a.png")
assert (alice.uid, alice.phone_number, alice.display_name, alice.disabled) == ("alice", "+16505550101", "Alice", False)
assert alice.user_metadata.creation_timestamp > 0
bob = auth.create_user(phone_number="+16505550102", disabled=True)
assert bob.disabled and len(bob.uid) == 28, bob.uid
assert auth.get_user_by_phone_number("+16505550101").uid == "alice"
found = auth.get_users([auth.UidIdentifier("alice"), auth.PhoneIdentifier("+16505550102"), auth.UidIdentifier("nobody")])
assert sorted(u.uid for u in found.users) == sorted(["alice", bob.uid]), found.users
assert [i.uid for i in found.not_found] == ["nobody"]
ok("create_user, get_user_by_phone_number, get_users")

expect_error(auth.UidAlreadyExistsError, lambda: auth.create_user(uid="alice"))
expect_error(auth.PhoneNumberAlreadyExistsError, lambda: auth.create_user(phone_number="+16505550101"))
expect_error(auth.UserNotFoundError, lambda: auth.get_user("nobody"))
expect_error(auth.UserNotFoundError, lambda: auth.update_user("nobody", display_name="x"))
expect_error(auth.UserNotFoundError, lambda: auth.delete_user("nobody"))
ok("errors: DUPLICATE_LOCAL_ID, PHONE_NUMBER_EXISTS, USER_NOT_FOUND")

# --- List with paging ------------------------------------------------------------------------------
for i in range(5):
    auth.create_user(uid=f"page-{i}")
seen = []
page = auth.list_users(max_results=3)
pages = 0
while page:
    pages += 1
    seen += [u.uid for u in page.users]
    page = page.get_next_page()
assert seen == sorted(seen) and len(seen) == len(set(seen)), seen
assert {"alice", bob.uid, "page-0", "page-4", "imported-phone-user"} <= set(seen) and pages >= 3, (pages, seen)
everyone = list(auth.list_users().iterate_all())
assert len(everyone) == len(seen)
ok(f"list_users pages of 3: {len(seen)} users in {pages} pages, by uid")

# --- Update --------------------------------------------------------------------------------------------
auth.update_user("alice", display_name="Alice A.", phone_number="+16505550103")
assert auth.get_user("alice").phone_number == "+16505550103"
expect_error(auth.PhoneNumberAlreadyExistsError, lambda: auth.update_user("alice", phone_number="+16505550102"))
auth.update_user("alice", photo_url=auth.DELETE_ATTRIBUTE)
assert auth.get_user("alice").photo_url is None
auth.update_user("imported-apple-user", providers_to_delete=["apple.com"])
expect_error(auth.UserNotFoundError, lambda: by_provider("apple.com", "000111.apple.sub.0001"))
auth.update_user("page-0", phone_number="+16505550104")
auth.update_user("page-0", phone_number=auth.DELETE_ATTRIBUTE)
assert auth.get_user("page-0").phone_number is None
ok("update_user: name, phone number (and PHONE_NUMBER_EXISTS), delete a provider, delete the phone")

# --- Custom tokens, custom claims in the next ID token -------------------------------------------------
auth.set_custom_user_claims("alice", {"admin": True, "tier": 3})
assert auth.get_user("alice").custom_claims == {"admin": True, "tier": 3}
expect_error(ValueError, lambda: auth.set_custom_user_claims("alice", {"sub": "x"}))
custom = auth.create_custom_token("alice", {"premium": True}).decode()
answer = sign_in_with_custom_token(custom)
assert answer.status_code == 200, answer.text
tokens = answer.json()
assert tokens["isNewUser"] is False
claims = auth.verify_id_token(tokens["idToken"])
assert claims["uid"] == "alice" and claims["admin"] is True and claims["tier"] == 3 and claims["premium"] is True, claims
assert claims["firebase"]["sign_in_provider"] == "custom"
assert claims["firebase"]["identities"] == {"phone": ["+16505550103"]}, claims["firebase"]
newcomer = sign_in_with_custom_token(auth.create_custom_token("carol").decode()).json()
assert newcomer["isNewUser"] is True and auth.get_user("carol").uid == "carol"
assert sign_in_with_custom_token('{"uid": "dave"}').status_code == 200  # the emulator's plain-JSON form
wrong = sign_in_with_custom_token(tokens["idToken"])
assert wrong.status_code == 400 and wrong.json()["error"]["message"].startswith("INVALID_CUSTOM_TOKEN"), wrong.text
ok("create_custom_token + signInWithCustomToken; custom and token claims in the ID token; an ID token is INVALID_CUSTOM_TOKEN")

# --- RS256 with kid, verified with the published keys by PyJWT ----------------------------------------
header = jwt.get_unverified_header(tokens["idToken"])
assert header["alg"] == "RS256" and header["kid"], header
jwks = jwt.PyJWKClient(f"{base}/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com")
key = jwks.get_signing_key_from_jwt(tokens["idToken"]).key
verified = jwt.decode(tokens["idToken"], key, algorithms=["RS256"], audience=project, issuer=f"https://securetoken.google.com/{project}")
assert verified["sub"] == "alice"
certificates = requests.get(f"{base}/www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com", timeout=10).json()
certificate = x509.load_pem_x509_certificate(certificates[header["kid"]].encode())
jwt.decode(tokens["idToken"], certificate.public_key(), algorithms=["RS256"], audience=project)
forged = tokens["idToken"].rsplit(".", 1)[0] + ".AAAA"
expect_error(jwt.InvalidSignatureError, lambda: jwt.decode(forged, key, algorithms=["RS256"], audience=project))
ok("ID tokens are RS256 with kid; PyJWT verifies them with the JWKS and with the x509 certificate")

# --- Refresh, revocation, check_revoked ----------------------------------------------------------------
fresh = refresh(tokens["refreshToken"])
assert fresh.status_code == 200, fresh.text
refreshed = auth.verify_id_token(fresh.json()["id_token"], check_revoked=True)
assert refreshed["auth_time"] == claims["auth_time"] and refreshed["premium"] is True
time.sleep(1.1)  # revocation counts whole seconds: sign-in and revocation must not share one
auth.revoke_refresh_tokens("alice")
assert auth.get_user("alice").tokens_valid_after_timestamp > 0
expect_error(auth.RevokedIdTokenError, lambda: auth.verify_id_token(tokens["idToken"], check_revoked=True))
auth.verify_id_token(tokens["idToken"])  # without check_revoked it still verifies, as in production
revoked = refresh(tokens["refreshToken"])
assert revoked.status_code == 400 and revoked.json()["error"]["message"].startswith("TOKEN_EXPIRED"), revoked.text
again = sign_in_with_custom_token(custom).json()
auth.verify_id_token(again["idToken"], check_revoked=True)
ok("refresh keeps auth_time and claims; revoke_refresh_tokens: refresh TOKEN_EXPIRED, check_revoked refuses older tokens, a new sign-in works")

# --- Disabled users ----------------------------------------------------------------------------------------
auth.update_user("alice", disabled=True)
expect_error(auth.UserDisabledError, lambda: auth.verify_id_token(again["idToken"], check_revoked=True))
blocked = sign_in_with_custom_token(custom)
assert blocked.status_code == 400 and blocked.json()["error"]["message"].startswith("USER_DISABLED"), blocked.text
assert refresh(again["refreshToken"]).json()["error"]["message"].startswith("USER_DISABLED")
auth.update_user("alice", disabled=False)
assert sign_in_with_custom_token(custom).status_code == 200
ok("a disabled user: check_revoked UserDisabledError, sign-in and refresh USER_DISABLED; enabled again signs in")

# --- Phone sign-in with the fixed SMS code, deterministic UIDs ----------------------------------------------
test_number = client("accounts:sendVerificationCode", {"phoneNumber": "+16505553434"}).json()
signed = client("accounts:signInWithPhoneNumber", {"sessionInfo": test_number["sessionInfo"], "code": "654321"}).json()
assert signed["phoneNumber"] == "+16505553434" and signed["isNewUser"] is True, signed
print("uid-of-test-number", signed["localId"], flush=True)
ok("a test number signs in; its UID is printed for the next run to compare")

# --- Import, query, batch delete ---------------------------------------------------------------------------
result = auth.import_users([
    auth.ImportUserRecord(uid="imp-1", phone_number="+16505550111", custom_claims={"plan": "pro"}),
    auth.ImportUserRecord(uid="imp-2", display_name="Two", provider_data=[auth.UserProvider(uid="000222.apple", provider_id="apple.com")]),
    auth.ImportUserRecord(uid="imp-3", phone_number="+16505550111"),
])
assert result.success_count == 2 and result.failure_count == 1, (result.success_count, [e.reason for e in result.errors])
assert result.errors[0].index == 2 and "exists in other account" in result.errors[0].reason
assert auth.get_user("imp-1").custom_claims == {"plan": "pro"}
assert by_provider("apple.com", "000222.apple").uid == "imp-2"
ok("import_users: two imported, one refused by index and reason")

query = requests.post(f"{base}/identitytoolkit.googleapis.com/v1/projects/{project}/accounts:query", headers=owner,
                      json={"expression": [{"phoneNumber": "+16505550111"}, {"userId": "imp-2"}], "sortBy": "USER_ID", "order": "DESC"},
                      timeout=10).json()
assert [u["localId"] for u in query["userInfo"]] == ["imp-2", "imp-1"] and query["recordsCount"] == "2", query
count = requests.post(f"{base}/identitytoolkit.googleapis.com/v1/projects/{project}/accounts:query", headers=owner,
                      json={"returnUserInfo": False}, timeout=10).json()
assert int(count["recordsCount"]) == len(list(auth.list_users().iterate_all()))
ok("accounts:query: expressions, sort, order, count only")

not_forced = requests.post(f"{base}/identitytoolkit.googleapis.com/v1/projects/{project}/accounts:batchDelete", headers=owner,
                           json={"localIds": ["imp-1", "imp-2", "nobody"]}, timeout=10).json()
assert [(e["index"], e["localId"]) for e in not_forced["errors"]] == [(0, "imp-1"), (1, "imp-2")], not_forced
assert all(e["message"].startswith("NOT_DISABLED") for e in not_forced["errors"])
assert auth.get_user("imp-1").uid == "imp-1"
deleted = auth.delete_users(["imp-1", "imp-2", "nobody"])  # the Python SDK always forces
assert deleted.success_count == 3 and deleted.failure_count == 0, (deleted.success_count, deleted.failure_count)
expect_error(auth.UserNotFoundError, lambda: auth.get_user("imp-1"))
auth.update_user("page-1", disabled=True)
assert auth.delete_users(["page-1"]).success_count == 1
expect_error(auth.UserNotFoundError, lambda: auth.get_user("page-1"))
auth.delete_user("page-2")
expect_error(auth.UserNotFoundError, lambda: auth.get_user("page-2"))
ok("batchDelete: enabled users NOT_DISABLED without force (kept), deleted with it (delete_users); delete_user")

# --- Bad input gets the emulator's shapes -----------------------------------------------------------------
def admin(path, body, headers=owner, project_id=project):
    return requests.post(f"{base}/identitytoolkit.googleapis.com/v1/projects/{project_id}/{path}", headers=headers, json=body, timeout=10)

unknown = admin("accounts:update", {"localId": "alice", "colour": "red"}).json()["error"]
assert unknown["code"] == 400 and unknown["status"] == "INVALID_ARGUMENT" and 'Unknown name "colour"' in unknown["message"], unknown
wrong_type = admin("accounts:update", {"localId": "alice", "disableUser": "yes"}).json()["error"]
assert wrong_type["code"] == 400 and "disableUser" in wrong_type["message"], wrong_type
too_many = admin("accounts:batchDelete", {"localIds": [f"u{i}" for i in range(1001)], "force": True}).json()["error"]
assert too_many["message"].startswith("LOCAL_ID_LIST_EXCEEDS_LIMIT"), too_many
elsewhere = admin("accounts:lookup", {"localId": ["alice"]}, project_id="another-project").json()["error"]
assert elsewhere["message"].startswith("CONFIGURATION_NOT_FOUND"), elsewhere
anonymous = admin("accounts:lookup", {"localId": ["alice"]}, headers={}).json()["error"]
assert anonymous["code"] == 401 and anonymous["status"] == "UNAUTHENTICATED", anonymous
weak = admin("accounts", {"email": "e@example.com", "password": "12345"}).json()["error"]
assert weak["message"].startswith("WEAK_PASSWORD"), weak
claims_too_big = admin("accounts:update", {"localId": "alice", "customAttributes": json.dumps({"k": "v" * 1000})}).json()["error"]
assert claims_too_big["message"].startswith("CLAIMS_TOO_LARGE"), claims_too_big
assert auth.get_user("alice").custom_claims == {"admin": True, "tier": 3}  # nothing lost
ok("bad input: unknown field, wrong type, 1001 IDs, another project, no credential, a weak password, large claims; nothing changed")

# --- Passwords: the Admin SDK sets them, the app's REST calls sign in with them -------------------------------
ada = auth.create_user(email="ada@example.com", password="correct horse")
signed = client("accounts:signInWithPassword", {"email": "ada@example.com", "password": "correct horse", "returnSecureToken": True}).json()
assert signed["localId"] == ada.uid and signed["idToken"], signed
assert auth.verify_id_token(signed["idToken"])["firebase"]["sign_in_provider"] == "password"
auth.update_user(ada.uid, password="battery staple")
refused = client("accounts:signInWithPassword", {"email": "ada@example.com", "password": "correct horse"}).json()["error"]
# The emulator export imported first has enumeration protection off (its config.json): INVALID_PASSWORD.
assert refused["message"] == "INVALID_PASSWORD", refused
assert client("accounts:signInWithPassword", {"email": "ada@example.com", "password": "battery staple"}).json()["localId"] == ada.uid
assert [p.provider_id for p in auth.get_user(ada.uid).provider_data] == ["password"]
ok("passwords: create_user(password=), signInWithPassword, update_user(password=) ends the old one")

# --- Email action links: the Admin SDK makes them (returnOobLink), the app's REST calls spend them ----------
def link_code(link):
    return urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["oobCode"][0]

reset = auth.generate_password_reset_link("ada@example.com")
assert client("accounts:resetPassword", {"oobCode": link_code(reset), "newPassword": "third one"}).json()["email"] == "ada@example.com"
assert client("accounts:signInWithPassword", {"email": "ada@example.com", "password": "third one"}).json()["localId"] == ada.uid
spent = client("accounts:resetPassword", {"oobCode": link_code(reset), "newPassword": "fourth one"}).json()["error"]
assert spent["message"] == "INVALID_OOB_CODE", spent
verify = auth.generate_email_verification_link("ada@example.com")
assert client("accounts:update", {"oobCode": link_code(verify)}).json()["emailVerified"] is True
assert auth.get_user(ada.uid).email_verified
expect_error(auth.UserNotFoundError, lambda: auth.generate_email_verification_link("nobody@example.com"))
settings = auth.ActionCodeSettings(url="https://authsim-demo.firebaseapp.com/finish?cart=1", handle_code_in_app=True,
                                   ios_bundle_id="com.example.authsim")
sign_in = auth.generate_sign_in_with_email_link("lin@example.com", settings)
assert urllib.parse.parse_qs(urllib.parse.urlparse(sign_in).query)["continueUrl"] == ["https://authsim-demo.firebaseapp.com/finish?cart=1"], sign_in
lin = client("accounts:signInWithEmailLink", {"email": "lin@example.com", "oobCode": link_code(sign_in)}).json()
assert lin["isNewUser"] is True and auth.verify_id_token(lin["idToken"])["email"] == "lin@example.com", lin
# returnOobLink is an admin's: an app's call with it is refused.
app_link = client("accounts:sendOobCode", {"requestType": "PASSWORD_RESET", "email": "ada@example.com", "returnOobLink": True}).json()["error"]
assert app_link["message"].startswith("INSUFFICIENT_PERMISSION"), app_link
ok("email action links: generate_password_reset_link, generate_email_verification_link, generate_sign_in_with_email_link spent by REST, once each")

print("users-at-exit", len(list(auth.list_users().iterate_all())), flush=True)
print("done", flush=True)
