import IdentityToolkitAPI
import Utilities
import Foundation

/// How the fake reCAPTCHA challenge ends, set per run.
package enum ReCAPTCHAOutcome: Sendable, Hashable {
    /// Solved: the page redirects with a fresh token for the event.
    case pass
    /// Solved after the user spends this long on the challenge (the page waits before redirecting).
    case slowChallenge(seconds: Double)
    /// The user closes the page: no redirect ever comes.
    case userCancels
    /// The page reports this error (`firebaseError` JSON in the callback).
    case firebaseError(code: String, message: String)

    /// Parses the command-line and scenario-file form: `pass`, `slow:<seconds>`, `cancel`,
    /// `error:<code>[:<message>]` (e.g. `error:auth/network-request-failed`).
    package init(argument: String) throws(IdentityToolkitError) {
        let parts = argument.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        switch parts[0] {
        case "pass" where parts.count == 1: self = .pass
        case "cancel" where parts.count == 1: self = .userCancels
        case "slow":
            guard parts.count == 2, let seconds = Double(parts[1]), seconds >= 0, seconds <= 3600 else {
                throw IdentityToolkitError(.invalidConfig, "slow takes seconds: slow:2.5")
            }
            self = .slowChallenge(seconds: seconds)
        case "error":
            let (code, message) = try Self.pageError(parts)
            self = .firebaseError(code: code, message: message)
        default:
            throw IdentityToolkitError(.invalidConfig, "the reCAPTCHA outcome is pass, slow:<seconds>, cancel or error:<code>[:<message>], not \(argument)")
        }
    }

    /// `error:<code>[:<message>]` split at its colons: the code, and the message given or the web
    /// widget's own for the code. (Also the provider page's form, ``ProviderPageOutcome``.)
    static func pageError(_ parts: [String]) throws(IdentityToolkitError) -> (code: String, message: String) {
        guard parts.count >= 2, !parts[1].isEmpty else {
            throw IdentityToolkitError(.invalidConfig, "error takes a firebaseError code: error:auth/network-request-failed[:message]")
        }
        return (parts[1], parts.count == 3 ? parts[2] : standardMessages[parts[1]] ?? "An error occurred.")
    }

    /// The messages the web widget sends with the codes the SDK maps.
    package static let standardMessages = [
        "auth/invalid-oauth-client-id": "The OAuth client ID provided is either invalid or does not match the specified API key.",
        "auth/network-request-failed": "A network error (such as timeout, interrupted connection or unreachable host) has occurred.",
        "auth/internal-error": "An internal error has occurred.",
    ]
}

/// The fake reCAPTCHA handler page at `/__/auth/handler`: reads the SDK's query, checks it, and
/// answers with a real HTML page whose link (and script) go to
/// `<scheme>://firebaseauth/link?deep_link_id=<https://<domain>/__/auth/callback?authType=verifyApp&recaptchaToken=…&eventId=…>`.
enum ReCAPTCHAPage {
    struct Query {
        let apiKey: String
        let bundleID: String
        let eventID: String
        let scheme: String
        let language: String?
    }

    /// Checks the handler's query as the page would, and says what is wrong.
    static func parse(_ items: [URLQueryItem], configuration: BackendConfiguration) -> Result<Query, IdentityToolkitError> {
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        let bundleID = configuration.bundleID
        guard let apiKey = value("apiKey"), configuration.accepts(apiKey: apiKey) else {
            return .failure(IdentityToolkitError(.invalidRequest, "apiKey is missing or not this project's"))
        }
        guard value("authType") == "verifyApp" else { return .failure(IdentityToolkitError(.invalidRequest, "authType must be verifyApp")) }
        guard let ibi = value("ibi"), ibi == bundleID else { return .failure(IdentityToolkitError(.invalidRequest, "ibi must be the iOS app's bundle ID \(bundleID)")) }
        guard let event = eventID(items) else {
            return .failure(IdentityToolkitError(.invalidRequest, "eventId must be 10 uppercase letters"))
        }
        guard let scheme = callbackScheme(items) else { return .failure(IdentityToolkitError(.invalidRequest, "appId or clientId is required")) }
        return .success(Query(apiKey: apiKey, bundleID: ibi, eventID: event, scheme: scheme, language: value("hl")))
    }

    /// A handler query's `eventId`, if it is 10 uppercase letters (the SDK's event IDs; both pages).
    static func eventID(_ items: [URLQueryItem]) -> String? {
        guard let event = items.first(where: { $0.name == "eventId" })?.value, event.count == 10,
              event.allSatisfy({ $0.isASCII && $0.isUppercase }) else { return nil }
        return event
    }

    /// The app's scheme the page redirects to, as the widget derives it: the reversed `clientId`,
    /// else `app-` and the `appId` with `-` for `:`; nil with neither (both pages).
    static func callbackScheme(_ items: [URLQueryItem]) -> String? {
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value.flatMap { $0.isEmpty ? nil : $0 } }
        if let clientID = value("clientId") { return clientID.split(separator: ".").reversed().joined(separator: ".") }
        return value("appId").map { "app-" + $0.replacingOccurrences(of: ":", with: "-") }
    }

    /// The redirect to the app for a token or an error.
    static func redirect(scheme: String, domain: String, eventID: String, token: String?, error: (String, String)?) -> String {
        var callback = "https://\(domain)/__/auth/callback?authType=verifyApp"
        if let token { callback += "&recaptchaToken=\(encode(token))" }
        if let error {
            // Two strings always encode.
            let json = (try? IdentityToolkitJSON.encode(FirebaseWebError(code: error.0, message: error.1)))
                .map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            callback += "&firebaseError=\(encode(json))"
        }
        callback += "&eventId=\(eventID)"
        return "\(scheme)://firebaseauth/link?deep_link_id=\(encode(callback))"
    }

    /// The page. Without scripts it is a link (what the headless presenter follows); in a browser
    /// its script shows the challenge's progress in `#authsim-status` and `data-state` on the body
    /// (`solving` → `redirecting`, or `cancelled`) and then replaces the page with the redirect.
    static func html(redirect: String?, delay: Double, eventID: String) -> String {
        let link = redirect.map { escapeHTML($0) }
        let script: String
        if let redirect {
            script = """
                <script>
                (function () {
                  var target = \(javaScriptString(redirect));
                  var status = document.getElementById("authsim-status");
                  document.body.setAttribute("data-state", "solving");
                  status.textContent = "Solving the challenge…";
                  setTimeout(function () {
                    document.body.setAttribute("data-state", "redirecting");
                    status.textContent = "Challenge solved. Returning to the app: " + target;
                    window.location.replace(target);
                  }, \(Int(delay * 1000)));
                })();
                </script>
                """
        } else {
            script = """
                <script>
                document.body.setAttribute("data-state", "cancelled");
                document.getElementById("authsim-status").textContent = "The user closed the page without solving the challenge.";
                </script>
                """
        }
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>Verify you're not a robot</title>
            <meta name="viewport" content="width=device-width, initial-scale=1"></head>
            <body data-state="loaded" style="font-family: sans-serif; margin: 2em">
            <h1>authsim reCAPTCHA</h1>
            <p>Event <code id="authsim-event">\(eventID)</code>.</p>
            <p id="authsim-status">\(link == nil ? "The user closes this page without solving the challenge." : "Challenge solved.")</p>
            \(link.map { "<p><a id=\"authsim-redirect\" data-delay=\"\(delay)\" href=\"\($0)\">Return to the app</a></p>" } ?? "<p id=\"authsim-cancelled\">No redirect.</p>")
            \(script)
            </body></html>
            """
    }

    /// A JavaScript string literal for `text`, safe inside a `<script>` element.
    static func javaScriptString(_ text: String) -> String {
        // "</" as "<\/" (the same string to JavaScript), so that "</script>" cannot end the element early.
        let json = CompactJSON.string(text)
        return json.utf8.contains(UInt8(ascii: "<")) ? json.replacing("</", with: "<\\/") : json
    }

    static func encode(_ text: String) -> String { WebText.percentEncode(text) }

    static func escapeHTML(_ text: String) -> String { WebText.escapeHTML(text) }
}
