"""The pytest plugin as a user's test file uses it (installed from the wheel, no Swift): aioapns
pushes to the fixture's receiver, firebase-admin talks to its backend as the Auth Emulator."""

import asyncio
import os
import ssl

import firebase_admin
from aioapns import APNs, NotificationRequest, PushType, connection
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
