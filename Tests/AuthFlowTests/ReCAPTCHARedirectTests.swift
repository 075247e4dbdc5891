import DeviceOS
import FirebaseAuthCore
import Foundation
import Testing

@Suite("reCAPTCHA: event IDs, the handler URL and reading the redirect")
struct ReCAPTCHARedirectTests {
    let scheme = "app-1-123456789012-ios-a1b2c3d4e5f60718"

    func redirect(_ callbackQuery: String, scheme: String? = nil, host: String = "firebaseauth", path: String = "/link") -> URL {
        let callback = "https://authsim-demo.firebaseapp.com/__/auth/callback?\(callbackQuery)"
        let encoded = callback.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return URL(string: "\(scheme ?? self.scheme)://\(host)\(path)?deep_link_id=\(encoded)")!
    }

    @Test("event IDs are 10 uppercase letters")
    func eventIDs() {
        for _ in 0..<100 {
            let id = ReCAPTCHAFlow.newEventID()
            #expect(id.count == 10 && id.allSatisfy { $0.isUppercase && $0.isASCII })
        }
    }

    @Test("the handler URL has the SDK's parameters in the SDK's order, encoded by URLComponents as the SDK's are; v is the SDK's user agent (AuthBackend.authUserAgent)")
    func handlerURL() throws {
        let url = try #require(ReCAPTCHAFlow.handlerURL(
            base: "https://authsim-demo.firebaseapp.com", apiKey: "KEY", bundleID: "com.example.authsim", userAgent: "FirebaseAuth.iOS/12.19.0 com.example.authsim/1.0 iPhone/18.1 hw/iPhone17_3",
            eventID: "ABCDEFGHIJ", clientID: nil, appID: "1:123456789012:ios:a1b2c3d4e5f60718", languageCode: "fr"))
        #expect(url.absoluteString == "https://authsim-demo.firebaseapp.com/__/auth/handler?apiKey=KEY&authType=verifyApp&ibi=com.example.authsim&v=FirebaseAuth.iOS/12.19.0%20com.example.authsim/1.0%20iPhone/18.1%20hw/iPhone17_3&eventId=ABCDEFGHIJ&appId=1:123456789012:ios:a1b2c3d4e5f60718&hl=fr")
        let withClient = try #require(ReCAPTCHAFlow.handlerURL(
            base: "https://x.web.app", apiKey: "K", bundleID: "b", userAgent: "1", eventID: "E", clientID: "123.apps.googleusercontent.com",
            appID: "1:2:ios:3", languageCode: nil))
        #expect(withClient.query == "apiKey=K&authType=verifyApp&ibi=b&v=1&eventId=E&clientId=123.apps.googleusercontent.com")
        // An empty language is still sent (audit 3, D1.8: PhoneAuthProvider.swift 637–639 tests `if let`).
        let emptyLanguage = try #require(ReCAPTCHAFlow.handlerURL(
            base: "https://x.web.app", apiKey: "K", bundleID: "b", userAgent: "1", eventID: "E", clientID: nil, appID: "1:2:ios:3", languageCode: ""))
        #expect(emptyLanguage.query == "apiKey=K&authType=verifyApp&ibi=b&v=1&eventId=E&appId=1:2:ios:3&hl=")
        #expect(ReCAPTCHAFlow.authDomain(from: ["localhost", "p.web.app", "p.firebaseapp.com"]) == "p.firebaseapp.com")
        #expect(ReCAPTCHAFlow.authDomain(from: ["localhost", "p.web.app"]) == "p.web.app")
        #expect(ReCAPTCHAFlow.authDomain(from: ["localhost"]) == nil)
    }

    /// `AuthWebUtils.fetchAuthDomain` and `extractDomain` (AuthWebUtils.swift 80–145; audit 3, D1.6).
    @Test("the auth domain as 12.19 picks it: two characters before firebaseapp.com or web.app; a customAuthDomain only if listed exactly, else 17038")
    func authDomainRules() throws {
        #expect(ReCAPTCHAFlow.authDomain(from: ["firebaseapp.com", "x.firebaseapp.com"]) == "x.firebaseapp.com")
        #expect(ReCAPTCHAFlow.authDomain(from: ["afirebaseapp.com", "p.web.app"]) == "p.web.app", "one character before the suffix is not enough")
        #expect(ReCAPTCHAFlow.domain(of: "HTTPS://auth.example.com/path/") == "auth.example.com")
        #expect(ReCAPTCHAFlow.domain(of: "http://auth.example.com") == "auth.example.com")
        #expect(ReCAPTCHAFlow.domain(of: "auth.example.com") == "auth.example.com")
        let listed = ["localhost", "p.firebaseapp.com", "auth.example.com"]
        #expect(try ReCAPTCHAFlow.authDomain(custom: "https://auth.example.com/", from: listed) == "auth.example.com")
        let refused = #expect(throws: AuthError.self) { try ReCAPTCHAFlow.authDomain(custom: "login.example.com", from: listed) }
        #expect(refused?.code == .unauthorizedDomain)
        #expect((refused as NSError?)?.localizedDescription == "Error while validating application identity: The configured custom domain is not allowlisted.")
        // A listed firebaseapp.com domain does not stand in for an unlisted custom one.
        #expect(throws: AuthError.self) { try ReCAPTCHAFlow.authDomain(custom: "sub.p.firebaseapp.com", from: listed) }
    }

    @Test("a solved challenge gives its token as URLComponents reads it: first occurrence wins, + stays +, percent-escapes decoded (PhoneAuthProvider.swift 578–615)")
    func token() {
        let url = redirect("authType=verifyApp&recaptchaToken=03A+tok%2Fen&eventId=ABCDEFGHIJ&recaptchaToken=second")
        #expect(ReCAPTCHAFlow.read(url, scheme: scheme, eventID: "ABCDEFGHIJ") == .token("03A+tok/en"))
    }

    @Test("recaptchaToken is read before firebaseError, and an empty one passes as it is (the backend then refuses it), as the SDK does")
    func tokenFirst() {
        let json = #"{"code":"auth/internal-error","message":"m"}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let both = redirect("authType=verifyApp&eventId=ABCDEFGHIJ&firebaseError=\(json)&recaptchaToken=T")
        #expect(ReCAPTCHAFlow.read(both, scheme: scheme, eventID: "ABCDEFGHIJ") == .token("T"))
        let empty = redirect("authType=verifyApp&eventId=ABCDEFGHIJ&recaptchaToken=")
        #expect(ReCAPTCHAFlow.read(empty, scheme: scheme, eventID: "ABCDEFGHIJ") == .token(""))
        let neither = redirect("authType=verifyApp&eventId=ABCDEFGHIJ")
        guard case .failure(let error) = ReCAPTCHAFlow.read(neither, scheme: scheme, eventID: "ABCDEFGHIJ") else {
            Issue.record("no failure")
            return
        }
        #expect(error.code == .appVerificationUserInteractionFailure)
    }

    @Test("redirects that are not Auth's are refused with the reason", arguments: [
        (URLRefusal.Code.wrongScheme, "com.googleusercontent.apps.1", "firebaseauth", "/link", "authType=verifyApp&recaptchaToken=T&eventId=ABCDEFGHIJ"),
        (.wrongScheme, "APP-1-123456789012-IOS-A1B2C3D4E5F60718", "firebaseauth", "/link", "authType=verifyApp&recaptchaToken=T&eventId=ABCDEFGHIJ"),
        (.wrongHostOrPath, nil, "somewhere", "/link", "authType=verifyApp&recaptchaToken=T&eventId=ABCDEFGHIJ"),
        (.wrongHostOrPath, nil, "firebaseauth", "/other", "authType=verifyApp&recaptchaToken=T&eventId=ABCDEFGHIJ"),
        (.wrongAuthType, nil, "firebaseauth", "/link", "authType=signInViaRedirect&recaptchaToken=T&eventId=ABCDEFGHIJ"),
        (.eventMismatch, nil, "firebaseauth", "/link", "authType=verifyApp&recaptchaToken=T&eventId=ZZZZZZZZZZ"),
        // The first eventId wins: a second, matching one does not make the redirect ours.
        (.eventMismatch, nil, "firebaseauth", "/link", "authType=verifyApp&recaptchaToken=T&eventId=ZZZZZZZZZZ&eventId=ABCDEFGHIJ"),
    ] as [(URLRefusal.Code, String?, String, String, String)])
    func notOurs(_ expected: URLRefusal.Code, scheme: String?, host: String, path: String, query: String) {
        let result = ReCAPTCHAFlow.read(redirect(query, scheme: scheme, host: host, path: path), scheme: self.scheme, eventID: "ABCDEFGHIJ")
        guard case .notOurs(let refusal) = result else {
            Issue.record("\(expected): \(result)")
            return
        }
        #expect(refusal.code == expected, "\(refusal.message)")
    }

    @Test("firebaseError codes map as the SDK maps them", arguments: [
        ("auth/invalid-oauth-client-id", AuthErrorCode.invalidClientID), ("auth/network-request-failed", .webNetworkRequestFailed),
        ("auth/internal-error", .webInternalError), ("auth/something-else", .webSignInUserInteractionFailure),
    ])
    func firebaseErrors(code: String, expected: AuthErrorCode) {
        let json = #"{"code":"\#(code)","message":"it failed"}"#
        let url = redirect("authType=verifyApp&eventId=ABCDEFGHIJ&firebaseError=\(json.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
        guard case .failure(let error) = ReCAPTCHAFlow.read(url, scheme: scheme, eventID: "ABCDEFGHIJ") else {
            Issue.record("no failure")
            return
        }
        #expect(error.code == expected)
        // A code the SDK does not know: its reason "[code] - message" (audit 3, D1.10: AuthErrorUtils.swift 355).
        if expected == .webSignInUserInteractionFailure { #expect(error.message == "[\(code)] - it failed") }
    }

    @Test("malformed errors: JSON without string code/message → 17059; invalid JSON → 17999; no deep link is not Auth's URL")
    func malformed() {
        let noCode = redirect("authType=verifyApp&eventId=ABCDEFGHIJ&firebaseError=%7B%22code%22%3A1%7D")
        let badJSON = redirect("authType=verifyApp&eventId=ABCDEFGHIJ&firebaseError=not-json")
        let noLink = URL(string: "\(scheme)://firebaseauth/link?other=1")!
        func code(_ url: URL) -> AuthErrorCode? {
            if case .failure(let error) = ReCAPTCHAFlow.read(url, scheme: scheme, eventID: "ABCDEFGHIJ") { return error.code }
            return nil
        }
        #expect(code(noCode) == .appVerificationUserInteractionFailure)
        #expect(code(badJSON) == .internalError)
        // A JSON array parses (JSONSerialization), is no object: 17059; a bare string does not parse: 17999
        // (PhoneAuthProvider.swift 595–611; audit 3, D1.9).
        #expect(code(redirect("authType=verifyApp&eventId=ABCDEFGHIJ&firebaseError=%5B1%5D")) == .appVerificationUserInteractionFailure)
        #expect(code(redirect("authType=verifyApp&eventId=ABCDEFGHIJ&firebaseError=%22x%22")) == .internalError)
        #expect(ReCAPTCHAFlow.read(noLink, scheme: scheme, eventID: "ABCDEFGHIJ") == .notOurs(URLRefusal(.noDeepLink, "")))
    }
}
