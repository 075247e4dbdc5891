@testable import FirebaseAuthCore
import Foundation
import Testing

/// What the headless presenter reads off the reCAPTCHA page the backend serves
/// (AuthBackend/ReCAPTCHAPage.swift: `<a id="authsim-redirect" data-delay="…" href="…">`): the
/// redirect, its `&amp;`s unescaped as a browser does, and the challenge's delay.
@Suite("The headless presenter reads the reCAPTCHA page")
struct HeadlessPageTests {
    static let page = """
        <html><body><a href="https://example.com/not-this">help</a>
        <p><a id="authsim-redirect" data-delay="1.5" href="app-1-123:/?deep_link_id=https%3A%2F%2Fx%2F%3FauthType%3DverifyApp&amp;recaptchaToken%3Dt&amp;other=1">Return to the app</a></p>
        </body></html>
        """

    @Test("the redirect after the marker, every &amp; unescaped; the delay in milliseconds")
    func redirectAndDelay() throws {
        let url = try #require(HeadlessPresenter.redirect(in: Self.page))
        #expect(url.absoluteString == "app-1-123:/?deep_link_id=https%3A%2F%2Fx%2F%3FauthType%3DverifyApp&recaptchaToken%3Dt&other=1")
        #expect(HeadlessPresenter.delay(in: Self.page) == .milliseconds(1500))
    }

    @Test("no marker, no href after it, or an unterminated href: no redirect; no or a bad delay: none")
    func missing() {
        #expect(HeadlessPresenter.redirect(in: #"<a href="app:/x">no marker</a>"#) == nil)
        #expect(HeadlessPresenter.redirect(in: #"<a href="app:/x" id="authsim-redirect">href before the marker</a>"#) == nil)
        #expect(HeadlessPresenter.redirect(in: #"<a id="authsim-redirect" href="app:/x"#) == nil)
        #expect(HeadlessPresenter.redirect(in: "") == nil)
        #expect(HeadlessPresenter.redirect(in: #"<a id="authsim-redirect" href="app:/a&amp;&amp;b&amp">"#)?.absoluteString == "app:/a&&b&amp")
        #expect(HeadlessPresenter.delay(in: #"<a id="authsim-redirect" href="app:/x">"#) == .zero)
        #expect(HeadlessPresenter.delay(in: #"data-delay="soon""#) == .zero)
        #expect(HeadlessPresenter.delay(in: #"data-delay="-2""#) == .zero)
    }
}
