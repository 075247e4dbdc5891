"""The inspector's Users screen in a real browser (headless Chromium over the DevTools protocol,
chromium_cdp.py): what the Emulator Suite's Authentication tab does, and a user's own page. Written
for InspectorTests.swift, which starts `authsim serve`, signs a phone user in through it (`authsim
phone`) and passes its inspector's URL. Prints "ok <check>" per check and "done"; any failure
raises (exit status 1). Writes inspector-users.png, inspector-user-edit.png and
inspector-user-page-dark.png to OUTPUT.

usage: inspector_users_browser.py INSPECTOR_URL OUTPUT
"""
import json
import os
import sys
import tempfile
import time
import urllib.request

from chromium_cdp import Chromium, ok, wait_for

inspector, output = sys.argv[1:3]


def api(path):
    with urllib.request.urlopen(f"{inspector}/api/v1/{path}", timeout=10) as answer:
        return json.load(answer)


with Chromium(output) as browser:
    cdp, js = browser.cdp, browser.js
    text = lambda selector: js(f"(document.querySelector({json.dumps(selector)}) || {{}}).textContent || ''")
    rows = lambda: js("[...document.querySelectorAll('#users tbody tr[data-uid]')].map(r => r.children[0].textContent)")
    # The page's confirm() dialogs answer yes: the test drives the page, not the browser's dialog.
    cdp("Page.addScriptToEvaluateOnNewDocument", source="window.confirm = () => true;")
    cdp("Page.navigate", url=inspector + "/#users")
    phone_user = next(u for u in api("users") if u.get("phoneNumber"))
    wait_for("the phone user in the list", lambda: phone_user["phoneNumber"] in (rows() or []))
    assert text("#user-count") == "1 user", text("#user-count")

    # Add a user through the dialog, claims and all.
    js("document.querySelector('#user-add').click()")
    wait_for("the dialog", lambda: js("document.querySelector('#user-dialog').open"))
    assert text("#user-dialog-title") == "Add a user"
    js("""(() => { const f = document.querySelector('#user-form');
        f.displayName.value = 'Ada Lovelace'; f.email.value = 'ada@example.com'; f.password.value = 'correct horse';
        f.phoneNumber.value = '+16505550199'; f.customClaims.value = '{"role": "admin"}';
        f.querySelector('button[type=submit]').click(); })()""")
    wait_for("the added user", lambda: "ada@example.com" in (rows() or []))
    assert not js("document.querySelector('#user-dialog').open")
    wait_for("the new user's page", lambda: "Custom claims" in text("#user-detail"))
    assert '"role": "admin"' in text("#user-detail pre"), text("#user-detail")
    ada = next(u for u in api("users") if u.get("email") == "ada@example.com")
    assert ada["displayName"] == "Ada Lovelace" and json.loads(ada["customAttributes"]) == {"role": "admin"} and ada["phoneNumber"] == "+16505550199", ada
    assert js("location.hash") == f"#users/{ada['localId']}"
    ok("a user added in the dialog (name, email, password, phone, claims) is the backend's, and their page opens")

    # Refusals stay in the dialog, with the service's reason; nothing is added.
    js("document.querySelector('#user-add').click()")
    js("(() => { const f = document.querySelector('#user-form'); f.email.value = 'x@example.com'; f.customClaims.value = '{role'; f.querySelector('button[type=submit]').click(); })()")
    assert "not JSON" in wait_for("the claims problem", lambda: text("#user-form-problem"))
    js("(() => { const f = document.querySelector('#user-form'); f.email.value = 'ada@example.com'; f.customClaims.value = ''; f.querySelector('button[type=submit]').click(); })()")
    wait_for("the taken email", lambda: "EMAIL_EXISTS" in text("#user-form-problem"))
    assert js("document.querySelector('#user-dialog').open")
    browser.screenshot("inspector-user-edit.png")
    js("document.querySelector('#user-cancel').click()")
    assert len(api("users")) == 2
    ok("bad claims and a taken email are refused in the dialog, saying why; nothing added")

    # Search, as the Suite's: name, any case.
    search = lambda text: js(f"(() => {{ const box = document.querySelector('#user-search'); box.value = {json.dumps(text)}; box.dispatchEvent(new Event('input')); }})()")
    search("LOVELACE")
    wait_for("the search", lambda: rows() == ["ada@example.com"])
    assert text("#user-count") == "1 user found"
    search("")
    wait_for("everyone again", lambda: len(rows() or []) == 2)
    ok("search by name finds one user, in any case; clearing it lists everyone")

    # Edit: a new name; disable; the list and the page follow.
    js(f"location.hash = 'users/{ada['localId']}'")
    wait_for("Ada's page", lambda: "Edit" in text("#user-detail .bar"))
    js("[...document.querySelectorAll('#user-detail .bar button')].find(b => b.textContent === 'Edit').click()")
    wait_for("the edit dialog", lambda: js("document.querySelector('#user-dialog').open") and text("#user-dialog-title").startswith("Edit"))
    assert js("document.querySelector('#user-form').displayName.value") == "Ada Lovelace"
    assert js("document.querySelector('#user-form').localId.disabled")
    js("(() => { const f = document.querySelector('#user-form'); f.displayName.value = 'Ada King'; f.customClaims.value = '{\"role\": \"owner\"}'; f.querySelector('button[type=submit]').click(); })()")
    wait_for("the new name in the list", lambda: js("[...document.querySelectorAll('#users tbody tr')].some(r => r.children[1].textContent === 'Ada King')"))
    ada = next(u for u in api("users") if u.get("email") == "ada@example.com")
    assert ada["displayName"] == "Ada King" and json.loads(ada["customAttributes"]) == {"role": "owner"} and ada["phoneNumber"] == "+16505550199", ada
    wait_for("the page after the edit", lambda: '"role": "owner"' in text("#user-detail pre"))
    js("[...document.querySelectorAll('#user-detail .bar button')].find(b => b.textContent === 'Disable').click()")
    wait_for("disabled in the list", lambda: js(f"document.querySelector('#users tr[data-uid=\"{ada['localId']}\"]').children[6].textContent") == "disabled")
    assert next(u for u in api("users") if u["localId"] == ada["localId"]).get("disabled") is True
    js("[...document.querySelectorAll('#user-detail .bar button')].find(b => b.textContent === 'Enable').click()")
    wait_for("enabled again", lambda: js(f"document.querySelector('#users tr[data-uid=\"{ada['localId']}\"]').children[6].textContent") == "enabled")
    ok("edited in the dialog (name, claims; unchanged fields left alone), disabled and enabled from the user's page")

    # The phone user's page: their sign-ins, pushes and SMS, each a link.
    js(f"document.querySelector('#users tr[data-uid=\"{phone_user['localId']}\"]').click()")
    wait_for("the phone user's page", lambda: "Sign-ins (" in text("#user-detail") and phone_user["phoneNumber"] in text("#user-detail h2"))
    detail = text("#user-detail")
    for part in ["Sign-ins (", "Pushes (", "SMS (", "Emails (0)", "silent push", "signed in"]:
        assert part in detail, (part, detail)
    assert js("document.querySelectorAll('#user-detail a[href^=\"#pushes/\"]').length") >= 1, detail
    assert js("document.querySelectorAll('#user-detail ul.trail code').length") >= 1, detail
    wide = js("(() => { const w = document.querySelector('#page-users .table-wrap'); return [w.scrollWidth, w.clientWidth]; })()")
    assert wide[0] <= wide[1], f"the users table scrolls sideways at 1400 px: {wide}"
    browser.screenshot("inspector-users.png")
    flow_link = js("document.querySelector('#user-detail a[href^=\"#flows/\"]').getAttribute('href')")
    js("document.querySelector('#user-detail a[href^=\"#flows/\"]').click()")
    wait_for("the sign-in it links to", lambda: js("!document.querySelector('#page-flows').hidden") and js("location.hash") == flow_link
             and js("document.querySelectorAll('#flow-detail .diagram .arrow').length") >= 4)
    js("history.back()")
    wait_for("the user again, back", lambda: js("!document.querySelector('#page-users').hidden") and phone_user["phoneNumber"] in text("#user-detail h2"))
    js("document.documentElement.classList.add('dark')")
    time.sleep(0.2)  # a repaint before the picture; nothing is checked after it
    browser.screenshot("inspector-user-page-dark.png")
    js("document.documentElement.classList.remove('dark')")
    ok("from a user, their sign-ins, pushes and SMS (the list beside, no sideways scrolling at 1400 px); a sign-in's link opens its timeline, back returns")

    # Export, clear all, import: the users come back; a second import asks, then replaces.
    downloads = tempfile.mkdtemp(prefix="authsim-downloads-")
    cdp("Page.setDownloadBehavior", behavior="allow", downloadPath=downloads)
    js("document.querySelector('#user-export').click()")
    exported_path = os.path.join(downloads, "accounts.json")
    wait_for("the downloaded accounts.json", lambda: os.path.exists(exported_path) and os.path.getsize(exported_path) > 0)
    exported = json.load(open(exported_path))
    assert exported["kind"] == "identitytoolkit#DownloadAccountResponse" and len(exported["users"]) == 2, exported
    assert "exported 2 users" in text("#user-message")
    js("document.querySelector('#user-clear').click()")
    wait_for("no users", lambda: "No users yet" in text("#users tbody"))
    assert api("users") == []
    document = cdp("DOM.getDocument")["root"]["nodeId"]
    node = cdp("DOM.querySelector", nodeId=document, selector="#user-import")["nodeId"]
    cdp("DOM.setFileInputFiles", nodeId=node, files=[exported_path])
    wait_for("the imported users", lambda: len(rows() or []) == 2)
    assert "imported 2 users from accounts.json" in text("#user-message"), text("#user-message")
    cdp("DOM.setFileInputFiles", nodeId=node, files=[exported_path])
    wait_for("the replaced users", lambda: "(2 replaced)" in text("#user-message"))
    assert {u["localId"] for u in api("users")} == {u["localId"] for u in exported["users"]}
    ok("export downloads accounts.json; clear all empties the list; importing it brings the users back, and again replaces them")

    # Delete one from their page.
    js(f"location.hash = 'users/{phone_user['localId']}'")
    wait_for("the phone user's page", lambda: phone_user["phoneNumber"] in text("#user-detail h2"))
    js("[...document.querySelectorAll('#user-detail .bar button')].find(b => b.textContent === 'Delete').click()")
    wait_for("one user left", lambda: rows() == ["ada@example.com"])
    assert [u["localId"] for u in api("users")] == [ada["localId"]]
    ok("a user deleted from their page is gone")
print("done", flush=True)
