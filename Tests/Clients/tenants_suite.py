"""Tenants against `authsim backend`, with two clients unchanged:

- Google's generated client (PyPI google-api-python-client, its bundled `identitytoolkit.v2.json`
  discovery document) for Identity Platform's tenant management, `projects.tenants.*`: the
  Python Admin SDK's own `tenant_mgt` calls only identitytoolkit.googleapis.com (it has no
  emulator support), so the generated client is pointed at the backend instead, with the
  emulator's `Bearer owner`;
- the Firebase Admin SDK (PyPI firebase-admin 7.x) with FIREBASE_AUTH_EMULATOR_HOST, whose
  `tenant_mgt.auth_for_tenant(t)` manages one tenant's users and makes its custom tokens.

Plus `requests` for the REST calls an app makes with a tenant (the SDK's `tenantId` in each body).
Prints "ok <check>" per check, then "done"; any failure raises and the status is not 0.

usage: tenants_suite.py HOST:PORT PROJECT API_KEY
"""
import os
import sys

host, project, api_key = sys.argv[1], sys.argv[2], sys.argv[3]
os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = host

import firebase_admin  # noqa: E402
import jwt  # noqa: E402
import requests  # noqa: E402
from firebase_admin import auth, tenant_mgt  # noqa: E402
from google.oauth2.credentials import Credentials  # noqa: E402
from googleapiclient import discovery  # noqa: E402
from googleapiclient.errors import HttpError  # noqa: E402

from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402
from firebase_admin import credentials  # noqa: E402

# tenant_mgt asks the app for its credential when it starts (Application Default Credentials,
# which this machine has none of): a service account made here, in memory, is one. Nothing is
# signed in to Google with it; the emulator host takes `Bearer owner`.
key = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
firebase_admin.initialize_app(credentials.Certificate({
    "type": "service_account", "project_id": project, "private_key_id": "local", "private_key": key,
    "client_email": f"tests@{project}.iam.gserviceaccount.com", "client_id": "1", "token_uri": "https://oauth2.googleapis.com/token",
}), options={"projectId": project})
base = f"http://{host}"


def ok(name):
    print("ok", name, flush=True)


def client(path, body):
    """A client call as an app makes it: the API key, JSON."""
    return requests.post(f"{base}/identitytoolkit.googleapis.com/v1/{path}?key={api_key}", json=body, timeout=10)


def error_message(response):
    return response.json()["error"]["message"]


# --- Tenant management through Google's generated client -----------------------------------------
service = discovery.build("identitytoolkit", "v2", credentials=Credentials(token="owner"), static_discovery=True,
                          client_options={"api_endpoint": f"{base}/identitytoolkit.googleapis.com/"})
tenants = service.projects().tenants()
parent = f"projects/{project}"

shop = tenants.create(parent=parent, body={"displayName": "Shop", "allowPasswordSignup": True}).execute()
assert shop["name"].startswith(f"{parent}/tenants/"), shop
shop_id = shop["name"].split("/")[-1]
assert shop["allowPasswordSignup"] is True and shop["enableAnonymousUser"] is False, shop
assert shop["mfaConfig"] == {"state": "DISABLED", "enabledProviders": []}, shop
staff = tenants.create(parent=parent, body={"displayName": "Staff"}).execute()
staff_id = staff["name"].split("/")[-1]
ok("tenants.create")

got = tenants.get(name=f"{parent}/tenants/{shop_id}").execute()
assert got["displayName"] == "Shop", got
patched = tenants.patch(name=f"{parent}/tenants/{staff_id}", updateMask="enableAnonymousUser,displayName",
                        body={"enableAnonymousUser": True, "displayName": "Staff 2"}).execute()
assert patched["enableAnonymousUser"] is True and patched["displayName"] == "Staff 2", patched
assert patched["allowPasswordSignup"] is False, "a field the mask does not name stays"
ok("tenants.get and tenants.patch")

first = tenants.list(parent=parent, pageSize=1).execute()
assert len(first["tenants"]) == 1 and "nextPageToken" in first, first
rest = tenants.list(parent=parent, pageToken=first["nextPageToken"]).execute()
listed = [t["name"].split("/")[-1] for t in first["tenants"] + rest.get("tenants", [])]
assert sorted(listed) == sorted([shop_id, staff_id]), listed
ok("tenants.list with pages")

try:
    tenants.create(parent=parent, body={"displayName": "x", "passwordPolicyConfig": {}}).execute()
    raise AssertionError("an unsimulated field was taken")
except HttpError as error:
    assert error.resp.status == 400 and b"passwordPolicyConfig" in error.content, error.content
ok("tenants.create refuses what it does not simulate, by name")

# --- One tenant's users through the Admin SDK ------------------------------------------------------
shop_auth = tenant_mgt.auth_for_tenant(shop_id)
staff_auth = tenant_mgt.auth_for_tenant(staff_id)
ada = shop_auth.create_user(uid="ada", email="ada@example.com", password="secret-1")
assert ada.tenant_id == shop_id, ada.tenant_id
same = auth.create_user(uid="ada", email="ada@example.com", password="secret-2")
assert same.tenant_id is None
assert shop_auth.get_user_by_email("ada@example.com").tenant_id == shop_id
try:
    staff_auth.get_user("ada")
    raise AssertionError("another tenant's user was found")
except auth.UserNotFoundError:
    pass
ok("the same UID and email in the project and a tenant are two users")

page = shop_auth.list_users()
assert [u.uid for u in page.users] == ["ada"], [u.uid for u in page.users]
imported = staff_auth.import_users([auth.ImportUserRecord(uid="bob", email="bob@example.com")])
assert imported.success_count == 1, imported.errors
assert [u.uid for u in staff_auth.list_users().users] == ["bob"]
ok("list_users and import_users per tenant")

# --- An app signs in to the tenant (the SDK's tenantId in each body) -------------------------------
signed = client("accounts:signInWithPassword", {"email": "ada@example.com", "password": "secret-1", "returnSecureToken": True,
                                                "tenantId": shop_id})
assert signed.status_code == 200, signed.text
claims = jwt.decode(signed.json()["idToken"], options={"verify_signature": False})
assert claims["firebase"]["tenant"] == shop_id and claims["sub"] == "ada", claims
decoded = shop_auth.verify_id_token(signed.json()["idToken"])
assert decoded["uid"] == "ada" and decoded["firebase"]["tenant"] == shop_id, decoded
wrong = client("accounts:signInWithPassword", {"email": "ada@example.com", "password": "secret-2", "returnSecureToken": True,
                                               "tenantId": shop_id})
assert wrong.status_code == 400, "the project's password is not the tenant user's"
ok("password sign-in in a tenant: an ID token naming it, verified by the tenant's client")

# The tenant's Admin link: its code resets the tenant user's password, not the project's.
reset = shop_auth.generate_password_reset_link("ada@example.com")
code = reset.split("oobCode=")[1].split("&")[0]
spent = client("accounts:resetPassword", {"oobCode": code, "newPassword": "secret-3", "tenantId": shop_id})
assert spent.status_code == 200, spent.text
assert client("accounts:signInWithPassword", {"email": "ada@example.com", "password": "secret-3", "returnSecureToken": True,
                                             "tenantId": shop_id}).status_code == 200
assert client("accounts:signInWithPassword", {"email": "ada@example.com", "password": "secret-2", "returnSecureToken": True}).status_code == 200
ok("a tenant's password reset link (auth_for_tenant.generate_password_reset_link) changes the tenant user's password alone")

anonymous = client("accounts:signUp", {"returnSecureToken": True, "tenantId": shop_id})
assert anonymous.status_code == 400 and error_message(anonymous).startswith("ADMIN_ONLY_OPERATION"), anonymous.text
staff_anonymous = client("accounts:signUp", {"returnSecureToken": True, "tenantId": staff_id})
assert staff_anonymous.status_code == 200, staff_anonymous.text
ok("each tenant's sign-in settings")

token = shop_auth.create_custom_token("carol").decode()
by_token = client("accounts:signInWithCustomToken", {"token": token, "returnSecureToken": True, "tenantId": shop_id})
assert by_token.status_code == 200, by_token.text
elsewhere = client("accounts:signInWithCustomToken", {"token": token, "returnSecureToken": True, "tenantId": staff_id})
assert elsewhere.status_code == 400 and error_message(elsewhere).startswith("TENANT_ID_MISMATCH"), elsewhere.text
ok("a tenant's custom token signs in to it alone")

# --- Deleting a tenant takes its users ---------------------------------------------------------------
tenants.delete(name=f"{parent}/tenants/{staff_id}").execute()
try:
    tenants.delete(name=f"{parent}/tenants/{staff_id}").execute()
    raise AssertionError("a deleted tenant was deleted again")
except HttpError as error:
    assert error.resp.status == 400 and b"TENANT_NOT_FOUND" in error.content, error.content
remaining = [t["name"].split("/")[-1] for t in tenants.list(parent=parent).execute().get("tenants", [])]
assert remaining == [shop_id], remaining
assert auth.get_user("ada").tenant_id is None, "the project's own user stays"
ok("tenants.delete")
print("done", flush=True)
