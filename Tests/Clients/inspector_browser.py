"""The inspector in a real browser: headless Chromium (Debian's), driven over the Chrome DevTools
Protocol with websocket-client (PyPI). Written for InspectorTests.swift, which starts `authsim serve`
and passes its URLs. Prints "ok <check>" per check and "done"; any failure raises (exit status 1).

It opens the inspector once and never reloads it (checked with the Navigation Timing entries):
- a push sent with apns-sender appears in the list without a reload;
- a rejected push shows its reason, and selecting it shows the cause and fix;
- a fault set on the Faults page makes the next push fail;
and writes a screenshot of each page (PNG) to OUTPUT.

usage: inspector_browser.py INSPECTOR_URL GATEWAY_URL SANDBOX_PORT CERTS APNS_SENDER PAYLOAD OUTPUT
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

from chromium_cdp import Chromium, ok, wait_for

inspector, gateway, sandbox_port, certs, apns_sender, payload, output = sys.argv[1:8]


def send_push(token):
    """apns-sender, a client we did not write for the inspector, to the sandbox port."""
    run = subprocess.run([apns_sender, payload, "--token", token, "--certs", certs, "--port", sandbox_port, "--json"],
                         capture_output=True, text=True, timeout=600)
    return json.loads(run.stdout.splitlines()[0])


def register_device():
    request = urllib.request.Request(f"{gateway}/devices", method="POST",
                                     data=json.dumps({"environment": "sandbox", "bundleID": "com.example.authsim", "label": "browser test"}).encode())
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)["token"]


with Chromium(output) as browser:
    cdp, js, screenshot = browser.cdp, browser.js, browser.screenshot
    # ?live=stream: the Server-Sent Events stream (headless Chrome polls by default, for screenshots).
    cdp("Page.navigate", url=inspector + "/?live=stream")
    wait_for("the live stream", lambda: js("document.querySelector('#live') && document.querySelector('#live').textContent === 'live'"))
    rows = lambda: js("document.querySelectorAll('#pushes tbody tr').length")
    before = rows()

    # A push to a registered token: accepted, listed without a reload.
    token = register_device()
    answer = send_push(token)
    assert answer["status"] == 200, answer
    wait_for("the accepted push in the list", lambda: rows() == before + 1)
    assert js("document.querySelector('#pushes tbody tr td.status').textContent") == "200"
    ok("a push sent with apns-sender appears in the list without a reload")

    # A push to a token nobody registered: BadDeviceToken, its cause and fix.
    rejected = send_push(os.urandom(32).hex())
    assert rejected["status"] == 400 and rejected["reason"] == "BadDeviceToken", rejected
    wait_for("the rejected push", lambda: rows() == before + 2)
    assert js("document.querySelector('#pushes tbody tr td.reason').textContent") == "BadDeviceToken"
    js("document.querySelector('#pushes tbody tr').click()")
    cause = wait_for("the cause", lambda: js("document.querySelector('#detail .cause') && document.querySelector('#detail .cause').textContent"))
    assert "BadDeviceToken" in cause, cause
    assert js("document.querySelector('#detail .fix').textContent"), "no fix shown"
    assert "InvalidProviderToken" not in js("document.querySelector('#detail').textContent")
    rejected_id = js("Number(document.querySelector('#pushes tbody tr').dataset.id)")
    assert js("location.hash") == f"#pushes/{rejected_id}", js("location.hash")
    ok("a rejected push shows its reason, and its cause and fix when selected")
    # At 1400 px the pushes table and the detail fit side by side: no sideways scrolling.
    wide = js("(() => { const w = document.querySelector('#page-pushes .table-wrap'); return [w.scrollWidth, w.clientWidth]; })()")
    assert wide[0] <= wide[1], f"the pushes table scrolls sideways at 1400 px: {wide}"
    ok("the pushes table fits beside the detail at 1400 px")
    screenshot("inspector-pushes.png")

    # The Faults page: a rule that makes the next push fail.
    js("document.querySelector('nav button[data-page=faults]').click()")
    wait_for("the faults page", lambda: js("!document.querySelector('#page-faults').hidden"))
    js("document.querySelector('#faults-text').value = 'reject=TooManyRequests,count=1'; document.querySelector('#faults-save').click()")
    wait_for("the rule in force", lambda: "1 rule" in (js("document.querySelector('#faults-message').textContent") or ""))
    screenshot("inspector-faults.png")
    failed = send_push(token)
    assert failed["status"] == 429 and failed["reason"] == "TooManyRequests", failed
    again = send_push(token)
    assert again["status"] == 200, again  # count=1: the rule is used up
    js("document.querySelector('nav button[data-page=pushes]').click()")
    wait_for("the failed push in the list", lambda: rows() == before + 4)
    reasons = js("[...document.querySelectorAll('#pushes tbody tr')].slice(0, 2).map(r => r.children[7].textContent)")
    assert reasons == ["", "TooManyRequests"], reasons
    ok("a fault set on the Faults page makes the next push fail (and only the next)")

    # Bad input on the Faults page says what was wrong.
    js("document.querySelector('nav button[data-page=faults]').click()")
    js("document.querySelector('#faults-text').value = 'reject=NoSuchReason'; document.querySelector('#faults-save').click()")
    message = wait_for("the error", lambda: "not an APNs reason" in (js("document.querySelector('#faults-message').textContent") or "") and
                       js("document.querySelector('#faults-message').textContent"))
    assert "NoSuchReason" in message, message
    ok("a fault naming no real reason is refused with the reason why")

    # Sign-ins: the flows the test drove before (authsim phone), as a sequence diagram.
    js("document.querySelector('nav button[data-page=flows]').click()")
    wait_for("the sign-ins", lambda: js("document.querySelectorAll('#flows tbody tr').length") >= 2)
    js("[...document.querySelectorAll('#flows tbody tr')].find(r => r.textContent.includes('signed in')).click()")
    wait_for("the diagram", lambda: js("document.querySelectorAll('#flow-detail .diagram .arrow').length") >= 4)
    text = js("document.querySelector('#flow-detail').textContent")
    assert "silent push" in text and "verifyClient" in text, text
    screenshot("inspector-sign-ins.png")
    ok("a sign-in's timeline as a sequence diagram, with its verification path")

    for page_name, file in [("devices", "inspector-devices.png"), ("sms", "inspector-sms.png")]:
        js(f"document.querySelector('nav button[data-page={page_name}]').click()")
        wait_for(f"the {page_name} page", lambda: js(f"!document.querySelector('#page-{page_name}').hidden"))
        time.sleep(0.3)
        screenshot(file)
    # One time format on every page (the SMS page showed 10:48:29 PM beside the pushes' 22:47:09.449).
    sms_time = js("document.querySelector('#sms tbody td').textContent")
    assert re.match(r"^\d{2}:\d{2}:\d{2}\.\d{3}$", sms_time or ""), sms_time
    assert js("document.querySelector('#devices tbody').textContent").count("browser test") == 1
    js("document.querySelector('nav button[data-page=devices]').click(); document.querySelector('#device-label').value = 'added in the page'; "
       "document.querySelector('#device-add button').click()")
    wait_for("the added device", lambda: "added in the page" in (js("document.querySelector('#devices tbody').textContent") or ""))
    js("document.documentElement.classList.add('dark'); document.querySelector('nav button[data-page=pushes]').click()")
    time.sleep(0.2)
    screenshot("inspector-pushes-dark.png")
    ok("screenshots of every page, light and dark")

    assert js("performance.getEntriesByType('navigation').length") == 1 and js("performance.getEntriesByType('navigation')[0].type") == "navigate"
    ok("the page was never reloaded")

    # The filter searches every push the server keeps, not only the newest the page loaded: 250
    # pushes to another topic, then 265 more; a fresh page loads the newest 200, none of the 250.
    for topic, count in [("com.example.older", 250), ("com.example.authsim", 265)]:
        run = subprocess.run([apns_sender, payload, "--token", token, "--topic", topic, "--count", str(count), "--certs", certs,
                              "--port", sandbox_port], capture_output=True, text=True, timeout=600)
        assert f"sent {count}:" in run.stdout, run.stdout + run.stderr
    cdp("Page.navigate", url=inspector + "/")
    wait_for("the reloaded page", lambda: js("document.querySelector('#live') && document.querySelector('#live').textContent === 'live'"))
    wait_for("the newest pushes", lambda: rows() == 200)
    js("const box = document.querySelector('#push-filter'); box.value = 'com.example.older'; box.dispatchEvent(new Event('input'))")
    wait_for("the older topic's pushes", lambda: "250 match" in (js("document.querySelector('#push-count').textContent") or ""))
    assert rows() == 200, rows()
    topics = js("[...new Set([...document.querySelectorAll('#pushes tbody tr')].map(r => r.children[2].textContent))]")
    assert topics == ["com.example.older"], topics
    ok("the push filter finds pushes older than the page loaded (250 of 515)")

    # Deep links: a push's address opens it; a changed address (and back) moves the page.
    cdp("Page.navigate", url=f"{inspector}/#pushes/{rejected_id}")
    heading = wait_for("the linked push", lambda: js("document.querySelector('#detail h2') && document.querySelector('#detail h2').textContent"))
    assert heading.startswith(f"Push {rejected_id}: 400 BadDeviceToken"), heading
    js("location.hash = '#flows'")
    wait_for("the sign-ins page after the address changed", lambda: js("!document.querySelector('#page-flows').hidden"))
    js("history.back()")
    wait_for("the push again, back", lambda: js("!document.querySelector('#page-pushes').hidden && location.hash") == f"#pushes/{rejected_id}")
    ok("deep links: #pushes/<id> opens the push, a changed address moves the page, back returns")
print("done", flush=True)
