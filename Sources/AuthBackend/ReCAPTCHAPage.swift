import Foundation

/// How the fake reCAPTCHA challenge ends, set per run.
public enum ReCAPTCHAOutcome: Sendable, Hashable {
    /// Solved: the page redirects with a fresh token for the event.
    case pass
    /// Solved after the user spends this long on the challenge (the page waits before redirecting).
    case slowChallenge(seconds: Double)
    /// The user closes the page: no redirect ever comes.
    case userCancels
    /// The page reports this error (`firebaseError` JSON in the callback).
    case firebaseError(code: String, message: String)
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
    static func parse(_ items: [URLQueryItem], apiKey: String, bundleID: String) -> Result<Query, BackendError> {
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        guard value("apiKey") == apiKey else { return .failure(BackendError("INVALID_REQUEST", "apiKey is missing or not this project's")) }
        guard value("authType") == "verifyApp" else { return .failure(BackendError("INVALID_REQUEST", "authType must be verifyApp")) }
        guard let ibi = value("ibi"), ibi == bundleID else { return .failure(BackendError("INVALID_REQUEST", "ibi must be the iOS app's bundle ID \(bundleID)")) }
        guard let event = value("eventId"), event.count == 10, event.allSatisfy({ $0.isASCII && $0.isUppercase }) else {
            return .failure(BackendError("INVALID_REQUEST", "eventId must be 10 uppercase letters"))
        }
        let scheme: String
        if let clientID = value("clientId"), !clientID.isEmpty {
            scheme = clientID.split(separator: ".").reversed().joined(separator: ".")
        } else if let appID = value("appId"), !appID.isEmpty {
            scheme = "app-" + appID.replacingOccurrences(of: ":", with: "-")
        } else {
            return .failure(BackendError("INVALID_REQUEST", "appId or clientId is required"))
        }
        return .success(Query(apiKey: apiKey, bundleID: ibi, eventID: event, scheme: scheme, language: value("hl")))
    }

    /// The redirect to the app for a token or an error.
    static func redirect(scheme: String, domain: String, eventID: String, token: String?, error: (String, String)?) -> String {
        var callback = "https://\(domain)/__/auth/callback?authType=verifyApp"
        if let token { callback += "&recaptchaToken=\(encode(token))" }
        if let error {
            let json = (try? JSONSerialization.data(withJSONObject: ["code": error.0, "message": error.1], options: [.sortedKeys]))
                .map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            callback += "&firebaseError=\(encode(json))"
        }
        callback += "&eventId=\(eventID)"
        return "\(scheme)://firebaseauth/link?deep_link_id=\(encode(callback))"
    }

    static func html(redirect: String?, delay: Double, eventID: String) -> String {
        let link = redirect.map { escapeHTML($0) }
        let script = link.map { url in
            "<script>setTimeout(function () { window.location.replace(\"\(url.replacingOccurrences(of: "\"", with: "%22"))\"); }, \(Int(delay * 1000)));</script>"
        } ?? ""
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>Verify you're not a robot</title>
            <meta name="viewport" content="width=device-width, initial-scale=1"></head>
            <body style="font-family: sans-serif; margin: 2em">
            <h1>authsim reCAPTCHA</h1>
            <p>Event <code>\(eventID)</code>. \(link == nil ? "The user closes this page without solving the challenge." : "Challenge solved.")</p>
            \(link.map { "<p><a id=\"authsim-redirect\" data-delay=\"\(delay)\" href=\"\($0)\">Return to the app</a></p>" } ?? "<p id=\"authsim-cancelled\">No redirect.</p>")
            \(script)
            </body></html>
            """
    }

    static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    static func escapeHTML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
