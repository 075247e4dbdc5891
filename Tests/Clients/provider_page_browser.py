"""An identity provider's sign-in page (OAuthProvider's web flow) in headless Chromium: a person
adds a new account with the page's form; prints the redirect the page's script computed for the
app (`redirect <url>`), which the Swift test hands to the app.

    python3 provider_page_browser.py <page URL> <email> <display name> <output folder>
"""
import sys

from chromium_cdp import Chromium, ok, wait_for

url, email, name, output = sys.argv[1:5]
with Chromium(output) as browser:
    browser.cdp("Page.navigate", url=url)
    wait_for("the page", lambda: browser.js("document.readyState === 'complete' && !!document.getElementById('authsim-new-account')"))
    provider = browser.js("document.getElementById('authsim-provider').textContent")
    assert provider, "the page names no provider"
    ok("the page names its provider: " + provider)
    accounts = browser.js("Array.from(document.querySelectorAll('#authsim-accounts a.authsim-account')).map(a => a.textContent)")
    assert all(email not in account for account in accounts), f"{email} is already listed: {accounts}"
    ok("the page lists the provider's accounts: %d" % len(accounts))
    browser.js(f"""(() => {{
        const form = document.getElementById('authsim-new-account');
        form.email.value = {email!r};
        form.displayName.value = {name!r};
        form.requestSubmit();
    }})()""")
    target = wait_for("the redirect", lambda: browser.js("document.body.getAttribute('data-state') === 'redirecting' && document.body.getAttribute('data-redirect')"))
    browser.screenshot("provider-page.png")
    ok("the form signs in as a new account and redirects to the app's scheme")
    print("redirect", target, flush=True)
