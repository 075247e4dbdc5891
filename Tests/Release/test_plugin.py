"""The pytest plugin as a user's test file uses it (installed from the wheel, no Swift): aioapns
pushes to the fixture's receiver, firebase-admin talks to its backend as the Auth Emulator."""

import asyncio
import os
import ssl

import firebase_admin
import pytest
from aioapns import APNs, NotificationRequest, PushType, connection
from authsim.client import AuthsimAPIError
from firebase_admin import auth


def test_silent_push_reaches_the_device(authsim):
    # aioapns keeps Apple's host and port as class attributes: point them at the fixture's receiver.
    connection.APNsDevelopmentClientProtocol.APNS_SERVER = "localhost"
    connection.APNsDevelopmentClientProtocol.APNS_PORT = int(authsim.apns_sandbox_url.rsplit(":", 1)[1])

    async def send():
        apns = APNs(key=open(authsim.auth_key_file).read(), key_id=authsim.key_id, team_id=authsim.team_id,
                    topic=authsim.bundle_id, use_sandbox=True, ssl_context=ssl.create_default_context(cafile=authsim.ca_file))
        return await apns.send_notification(NotificationRequest(
            device_token=authsim.device_token, message={"aps": {"content-available": 1}}, push_type=PushType.BACKGROUND, priority=5))

    assert asyncio.run(send()).is_successful
    push = authsim.api.wait_for_push(token=authsim.device_token)
    assert push.status == 200 and push.push_type == "background"


def test_admin_sdk_against_the_backend(authsim):
    # The fixture set FIREBASE_AUTH_EMULATOR_HOST: the Admin SDK talks to authsim's backend at once.
    assert os.environ["FIREBASE_AUTH_EMULATOR_HOST"] == authsim.auth_emulator_host
    app = firebase_admin.initialize_app(options={"projectId": authsim.project_id}, name="authsim-test")
    try:
        user = auth.create_user(phone_number="+16505550101", app=app)
        assert auth.get_user_by_phone_number("+16505550101", app=app).uid == user.uid
        assert [u.uid for u in authsim.api.users()] == [user.uid]
    finally:
        firebase_admin.delete_app(app)


def test_an_app_per_test_reaches_each_tests_backend(pytester):
    """authsim_firebase_app: two tests, two servers, each test's users on its own backend. With one
    default App made once, the second test reached the first test's stopped server."""
    pytester.makepyfile("""
        import firebase_admin
        from firebase_admin import auth
        def test_one(authsim, authsim_firebase_app):
            auth.create_user(phone_number="+16505550101", app=authsim_firebase_app)
            assert [u.phone_number for u in authsim.api.users()] == ["+16505550101"]
        def test_two(authsim, authsim_firebase_app):
            auth.create_user(phone_number="+16505550102", app=authsim_firebase_app)
            assert [u.phone_number for u in authsim.api.users()] == ["+16505550102"]
        def test_the_pitfall_one(authsim):
            app = firebase_admin.initialize_app(options={"projectId": authsim.project_id}, name="shared")
            auth.create_user(phone_number="+16505550103", app=app)
        def test_the_pitfall_two(authsim):
            # The same App, made for the previous test's server: its client still calls that one.
            auth.create_user(phone_number="+16505550104", app=firebase_admin.get_app("shared"))
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*test_the_pitfall_two*"])


def test_a_failing_test_gets_the_servers_logs(pytester):
    """A failing test's report carries authsim serve's output (the plugin's makereport hook)."""
    pytester.makepyfile("def test_fails(authsim):\n    assert authsim.api.pushes() == ['not there']\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*authsim serve*", "*Ctrl-C stops everything.*"])


def test_the_session_fixture_is_shared(pytester):
    """authsim_session: one server for every test that takes it; a failing one still gets its logs."""
    pytester.makepyfile("""
        seen = []
        def test_one(authsim_session):
            seen.append(authsim_session.inspector_url)
        def test_two(authsim_session):
            seen.append(authsim_session.inspector_url)
            assert len(set(seen)) == 1 and len(seen) == 2
            assert authsim_session.api.pushes(token=authsim_session.device_token) == ['not there']
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    # test_two failed at its second assertion (the server was shared), and its report has the logs.
    result.stdout.fnmatch_lines(["*test_two*", "E       AssertionError: assert [] == ['not there']", "*authsim serve*",
                                 "*Ctrl-C stops everything.*"])


def test_the_emulator_variable_is_restored(pytester, monkeypatch):
    """FIREBASE_AUTH_EMULATOR_HOST is the fixture's while it lives, and what it was before after."""
    pytester.makepyfile("""
        import os
        def test_during(authsim, monkeypatch):
            assert os.environ["FIREBASE_AUTH_EMULATOR_HOST"] == authsim.auth_emulator_host
        def test_after():
            assert os.environ.get("FIREBASE_AUTH_EMULATOR_HOST") == "before:1"
    """)
    monkeypatch.setenv("FIREBASE_AUTH_EMULATOR_HOST", "before:1")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_phone_sign_in_through_the_channel(authsim):
    """An app-like phone sign-in from Python: the silent push proves the app; on a simulator (no
    push) the reCAPTCHA page and its redirect do. The user is then in the backend."""
    by_push = authsim.phone_sign_in("+16505550102")
    assert by_push.signed_in and by_push.returncode == 0 and by_push.path == "silentPush", by_push.output
    assert any(push.push_type == "background" for push in authsim.api.pushes()), by_push.output
    by_page = authsim.phone_sign_in("+16505550103", simulator=True, expect="recaptcha")
    assert by_page.signed_in and by_page.path == "reCAPTCHA", by_page.output
    assert {u.phone_number for u in authsim.api.users()} >= {"+16505550102", "+16505550103"}
    refused = authsim.phone_sign_in("+16505550104", code="000000")
    assert not refused.signed_in and refused.returncode != 0, refused.output


def test_api_key_and_emails(authsim):
    """The fixture's api_key, and any key (as the Auth Emulator takes it); the email outbox from Python."""
    import json
    import urllib.request

    def call(path: str, body: dict, key: str) -> dict:
        request = urllib.request.Request(f"http://{authsim.auth_emulator_host}/identitytoolkit.googleapis.com/v1/{path}?key={key}",
                                         data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    assert authsim.api_key.startswith("AIza")
    call("accounts:signUp", {"email": "Ada@Example.com", "password": "correct horse", "returnSecureToken": True}, authsim.api_key)
    call("accounts:sendOobCode", {"requestType": "PASSWORD_RESET", "email": "ada@example.com"}, "fake-api-key")
    emails = authsim.api.emails(email="ada@example.com")
    assert [e.request_type for e in emails] == ["PASSWORD_RESET"] and not emails[0].used, emails
    assert emails[0].code in emails[0].link
    assert authsim.api.emails(request_type="VERIFY_EMAIL") == []


def test_the_wheel_carries_the_documentation():
    """`authsim docs --path` from the wheel's PATH names a folder with the README and docs/."""
    import subprocess
    from pathlib import Path

    found = subprocess.run(["authsim", "docs", "--path"], capture_output=True, text=True, timeout=60)
    assert found.returncode == 0, found.stderr
    root = Path(found.stdout.strip())
    assert (root / "README.md").is_file() and (root / "docs" / "auth-emulator.md").is_file(), root


def test_users_from_python(authsim):
    """The Python README's test_seeded_users, as written, and the refusals it names."""
    ada = authsim.api.add_user(email="ada@example.com", password="correct horse", custom_claims={"role": "admin"})
    assert ada.custom_claims == {"role": "admin"}
    authsim.api.update_user(ada.uid, display_name="Ada Lovelace", disabled=True)
    assert [u.display_name for u in authsim.api.users(search="lovelace")] == ["Ada Lovelace"]
    seed = authsim.api.export_users()
    assert authsim.api.import_users(seed, overwrite=True) == {"imported": 1, "replaced": 1}
    with pytest.raises(AuthsimAPIError) as taken:
        authsim.api.add_user(email="ada@example.com")
    assert taken.value.status == 409 and "EMAIL_EXISTS" in taken.value.message
    with pytest.raises(AuthsimAPIError) as exists:
        authsim.api.import_users(seed)
    assert exists.value.status == 409 and ada.uid in exists.value.message
    with pytest.raises(TypeError):
        authsim.api.add_user(colour="red")
    authsim.api.delete_user(ada.uid)
    assert authsim.api.users() == []
