import AuthBackend
import FirebaseAuthCore
import Foundation
import Scenarios
import TestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The href of the page's `authsim-redirect` link, HTML-unescaped.
func redirectLink(in html: String) -> URL? {
    guard let marker = html.range(of: "id=\"authsim-redirect\""),
          let hrefStart = html.range(of: "href=\"", range: marker.upperBound..<html.endIndex),
          let hrefEnd = html.range(of: "\"", range: hrefStart.upperBound..<html.endIndex)
    else { return nil }
    let raw = String(html[hrefStart.upperBound..<hrefEnd.lowerBound]).replacingOccurrences(of: "&amp;", with: "&")
    return URL(string: raw)
}

@Suite("The backend's reCAPTCHA page")
struct ReCAPTCHAPageTests {
    let appID = "1:123456789012:ios:a1b2c3d4e5f60718"
    let scheme = "app-1-123456789012-ios-a1b2c3d4e5f60718"

    func page(_ world: PhoneAuthWorld, eventID: String, bundleID: String = "com.example.authsim") async throws -> (Int, String) {
        let url = try #require(ReCAPTCHAFlow.handlerURL(base: world.backendURL, apiKey: world.apiKey, bundleID: bundleID,
                                                         userAgent: "FirebaseAuth.iOS/12.19.0 com.example.authsim/1.0 iPhone/18.1 hw/iPhone17_3", eventID: eventID, clientID: nil, appID: appID,
                                                         languageCode: "en"))
        let (data, response) = try await URLSession.shared.data(from: url)
        return ((response as! HTTPURLResponse).statusCode, String(decoding: data, as: UTF8.self))
    }

    @Test("a solved challenge redirects to the app's scheme with a token that buys exactly one code")
    func pass() async throws {
        try await withWorld { world, _ in
            let config = try await post("\(world.backendURL)/www.googleapis.com/identitytoolkit/v3/relyingparty/getProjectConfig?key=\(world.apiKey)", "{}")
            let domains = try #require(config.1["authorizedDomains"] as? [String])
            #expect(ReCAPTCHAFlow.authDomain(from: domains) == "authsim-demo.firebaseapp.com")

            let event = ReCAPTCHAFlow.newEventID()
            let (status, html) = try await page(world, eventID: event)
            #expect(status == 200)
            #expect(html.contains("<!DOCTYPE html>") && html.contains("window.location.replace"))
            let link = try #require(redirectLink(in: html))
            #expect(link.absoluteString.hasPrefix("\(scheme)://firebaseauth/link?deep_link_id=https%3A%2F%2Fauthsim-demo.firebaseapp.com%2F__%2Fauth%2Fcallback"))
            guard case .token(let token) = ReCAPTCHAFlow.read(link, scheme: scheme, eventID: event) else {
                Issue.record("no token in \(link)")
                return
            }
            // The same redirect replayed for another presentation is not Auth's.
            guard case .notOurs = ReCAPTCHAFlow.read(link, scheme: scheme, eventID: ReCAPTCHAFlow.newEventID()) else {
                Issue.record("a redirect for another event was accepted")
                return
            }
            let send = "\(world.backendURL)/www.googleapis.com/identitytoolkit/v3/relyingparty/sendVerificationCode?key=\(world.apiKey)"
            let first = try await post(send, #"{"phoneNumber":"+16505551234","recaptchaToken":"\#(token)"}"#)
            #expect(first.0 == 200 && first.1["sessionInfo"] != nil)
            let replay = try await post(send, #"{"phoneNumber":"+16505550000","recaptchaToken":"\#(token)"}"#)
            #expect(errorMessage(replay.1) == "CAPTCHA_CHECK_FAILED : Recaptcha verification failed - EXPIRED")
        }
    }

    @Test("the user cancels: a page with no redirect; the page reports errors as firebaseError")
    func cancelAndErrors() async throws {
        var configuration = BackendConfiguration()
        configuration.recaptchaOutcome = .userCancels
        try await withWorld(configuration: configuration) { world, _ in
            let (status, html) = try await page(world, eventID: "ABCDEFGHIJ")
            #expect(status == 200)
            #expect(redirectLink(in: html) == nil)
            #expect(html.contains("authsim-cancelled"))
        }
        configuration.recaptchaOutcome = .firebaseError(code: "auth/network-request-failed", message: "offline")
        try await withWorld(configuration: configuration, name: "firebaseError") { world, _ in
            let (_, html) = try await page(world, eventID: "ABCDEFGHIJ")
            let link = try #require(redirectLink(in: html))
            guard case .failure(let error) = ReCAPTCHAFlow.read(link, scheme: scheme, eventID: "ABCDEFGHIJ") else {
                Issue.record("no failure")
                return
            }
            #expect(error.code == .webNetworkRequestFailed)
        }
    }

    @Test("a request that is not the SDK's is refused with what is wrong")
    func badQuery() async throws {
        try await withWorld { world, _ in
            let (status, html) = try await page(world, eventID: "ABCDEFGHIJ", bundleID: "com.other.app")
            #expect(status == 400)
            #expect(html.contains("ibi must be the iOS app"))
            let (badEvent, _) = try await page(world, eventID: "abc")
            #expect(badEvent == 400)
        }
    }
}
