import DeviceOS
import Foundation
import Utilities

/// The pieces of the SDK's reCAPTCHA fallback that are pure: the event ID, the handler URL it
/// opens, and how it reads the redirect that comes back to the app's URL scheme.
package enum ReCAPTCHAFlow {
    /// A new event ID: 10 random uppercase letters, as the SDK makes them.
    package static func newEventID() -> String {
        String((0..<10).map { _ in "ABCDEFGHIJKLMNOPQRSTUVWXYZ".randomElement()! })
    }

    /// The auth domain from `getProjectConfig`'s `authorizedDomains`, as `AuthWebUtils.fetchAuthDomain`
    /// picks it (AuthWebUtils.swift 100–145): the first ending in `firebaseapp.com` with at least
    /// two characters before it, else the same for `web.app`.
    package static func authDomain(from authorizedDomains: [String]) -> String? {
        for suffix in ["firebaseapp.com", "web.app"] {
            if let domain = authorizedDomains.first(where: { $0.hasSuffix(suffix) && $0.count >= suffix.count + 2 }) { return domain }
        }
        return nil
    }

    /// With `Auth.customAuthDomain` set, the auth domain is that domain if the project's
    /// authorized domains list it exactly, else `unauthorizedDomain` (17038), whatever else is listed.
    package static func authDomain(custom: String, from authorizedDomains: [String]) throws(AuthError) -> String {
        if let domain = domain(of: custom), authorizedDomains.contains(domain) { return domain }
        // The SDK's `unauthorizedDomainError(message:)`: its message as the description.
        let message = "Error while validating application identity: The configured custom domain is not allowlisted."
        throw AuthError(.unauthorizedDomain, "\(message) (\(custom) is not among \(authorizedDomains.joined(separator: ", ")))",
                        serverMessage: "UNAUTHORIZED_DOMAIN : \(message)")
    }

    /// `AuthWebUtils.extractDomain(urlString:)`: the scheme (`http://`, `https://`, any case) off,
    /// the path standardized, the part before the first `/`.
    package static func domain(of urlString: String) -> String? {
        var domain = Substring(urlString)
        for scheme in ["http://", "https://"] where domain.prefix(scheme.count).lowercased() == scheme {
            domain = domain.dropFirst(scheme.count)
            break
        }
        return (String(domain) as NSString).standardizingPath.components(separatedBy: "/").first
    }

    /// `https://<authDomain>/__/auth/handler?apiKey=…&authType=verifyApp&ibi=…&v=…&eventId=…&(clientId=…|appId=…)[&hl=…]`,
    /// in the SDK's parameter order. `clientId` when the reversed client ID is the callback scheme.
    package static func handlerURL(base: String, apiKey: String, bundleID: String, userAgent: String, eventID: String,
                                  clientID: String?, appID: String, languageCode: String?) -> URL? {
        var items = [
            URLQueryItem(name: "apiKey", value: apiKey), URLQueryItem(name: "authType", value: "verifyApp"),
            URLQueryItem(name: "ibi", value: bundleID), URLQueryItem(name: "v", value: userAgent),
            URLQueryItem(name: "eventId", value: eventID),
        ]
        if let clientID { items.append(URLQueryItem(name: "clientId", value: clientID)) } else {
            items.append(URLQueryItem(name: "appId", value: appID))
        }
        // `hl` whenever a language is set, an empty one too (PhoneAuthProvider.swift 637–639).
        if let languageCode { items.append(URLQueryItem(name: "hl", value: languageCode)) }
        // Through URLComponents.queryItems, as the SDK builds it (PhoneAuthProvider.swift reCAPTCHAURL):
        // its percent-encoding, not a stricter one (":" and "/" stay as they are).
        var components = URLComponents(string: base + "/__/auth/handler?")
        components?.queryItems = items
        return components?.url
    }

    /// What a redirect to the app's scheme says.
    package enum Redirect: Sendable, Hashable {
        /// The challenge was solved: the token for sendVerificationCode.
        case token(String)
        /// The provider's answer (`OAuthProvider`'s web flow): the callback's `link`.
        case link(String)
        /// The page reported an error (mapped as the SDK maps it).
        case failure(AuthError)
        /// Not the presented event's redirect (`canHandle(url)` answers false), and why.
        case notOurs(URLRefusal)
    }

    /// Reads a redirect as `canHandle(url)` does (`AuthWebUtils.isExpectedCallbackURL`):
    /// `<scheme>://firebaseauth/link?deep_link_id=<callback>`, the callback carrying the presented
    /// page's `authType` and `eventId`; then, for reCAPTCHA, `recaptchaToken` or `firebaseError`,
    /// for a provider's page its `link` or `firebaseError` (``OAuthWebFlow/readCallback(_:)``).
    /// In each query the first occurrence of a key wins, `+` is a space, values are
    /// percent-decoded (a value that does not decode is empty).
    package static func read(_ url: URL, scheme: String, eventID: String, authType: WebAuthType = .verifyApp) -> Redirect {
        // The SDK compares <scheme>://firebaseauth/link as a whole URL: exactly, case included.
        guard url.scheme == scheme else {
            let found = url.scheme ?? "none"
            let hint = found.lowercased() == scheme.lowercased() ? " (only the case differs: the SDK compares exactly)" : ""
            return .notOurs(URLRefusal(.wrongScheme, "scheme \(found) is not the callback scheme \(scheme)\(hint)"))
        }
        guard url.host == "firebaseauth", url.path == "/link", url.user == nil, url.port == nil else {
            return .notOurs(URLRefusal(.wrongHostOrPath, "\(url.host ?? "")\(url.path) is not firebaseauth/link"))
        }
        let outer = queryDictionary(url.query)
        guard let deepLink = outer["deep_link_id"], let callback = URL(string: deepLink) else {
            return .notOurs(URLRefusal(.noDeepLink, "the URL has no deep_link_id carrying the page's callback"))
        }
        let inner = queryDictionary(callback.query)
        guard inner["authType"] == authType.rawValue else {
            return .notOurs(URLRefusal(.wrongAuthType, "authType is \(inner["authType"].map { "\"\($0)\"" } ?? "missing"), not \(authType.rawValue), the presented page's"))
        }
        guard inner["eventId"] == eventID else {
            return .notOurs(URLRefusal(.eventMismatch, "event \(inner["eventId"] ?? "missing") is not the presented event \(eventID)", eventID: inner["eventId"]))
        }
        return authType == .verifyApp ? readCallback(url) : OAuthWebFlow.readCallback(url)
    }

    /// The SDK's `reCAPTCHAToken(forURL:)` (PhoneAuthProvider.swift 578–615), once the redirect
    /// matched: the query read with `URLComponents.queryItems` (percent-decoded, `+` kept: the
    /// matcher above decodes `+` as a space, this does not), first occurrence winning;
    /// `recaptchaToken` before `firebaseError`, an empty token passing as it is; `firebaseError`
    /// that is not JSON 17999, JSON without string `code` and `message` 17059, as is a callback
    /// with neither.
    static func readCallback(_ url: URL) -> Redirect {
        func first(_ name: String, in items: [URLQueryItem]?) -> String?? {
            guard let item = items?.first(where: { $0.name == name }) else { return nil }
            return .some(item.value)
        }
        guard case let deepLink?? = first("deep_link_id", in: URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems) else {
            return .failure(AuthError(.appVerificationUserInteractionFailure, "Failed to get url Components for url: \(url)"))
        }
        let items = URLComponents(string: deepLink)?.queryItems
        if case let token?? = first("recaptchaToken", in: items) {
            return .token(token)
        }
        if case let errorJSON?? = first("firebaseError", in: items) {
            // As JSONSerialization reads it: what does not parse as an array or object is 17999;
            // anything else without string code and message (an array too) 17059 (audit 3, D1.9).
            guard let parsed = try? JSONSerialization.jsonObject(with: Data(errorJSON.utf8)) else {
                return .failure(AuthError(.internalError, "firebaseError is not JSON: \(errorJSON)"))
            }
            if let object = parsed as? [String: Any], let code = object["code"] as? String, let message = object["message"] as? String {
                return .failure(webError(code: code, message: message))
            }
        }
        return .failure(AuthError(.appVerificationUserInteractionFailure,
                                  "An unknown error occurred with the following response: \(deepLink) (no recaptchaToken, no firebaseError with a string code and message)"))
    }

    /// `AuthErrorUtils.urlResponseError(code:message:)`: the web page's error codes the SDK knows,
    /// and 17063 with `[code] - message` for others (AuthErrorUtils.swift 345–358).
    static func webError(code: String, message: String) -> AuthError {
        switch code {
        case "auth/invalid-oauth-client-id": AuthError(.invalidClientID, message)
        case "auth/network-request-failed": AuthError(.webNetworkRequestFailed, message)
        case "auth/internal-error": AuthError(.webInternalError, message)
        default: AuthError(.webSignInUserInteractionFailure, "[\(code)] - \(message)")
        }
    }

    /// The event a redirect names, if it is shaped like Auth's redirect at all (for diagnosis).
    static func eventID(of url: URL) -> String? {
        guard url.host == "firebaseauth", url.path == "/link",
              let deepLink = queryDictionary(url.query)["deep_link_id"], let callback = URL(string: deepLink)
        else { return nil }
        return queryDictionary(callback.query)["eventId"]
    }

    /// `a=1&b=2+3&a=9` → `["a": "1", "b": "2 3"]`: first occurrence wins, `+` is a space (the
    /// SDK's `dictionary(withHttpArgumentsString:)`, which its callback matcher uses).
    static func queryDictionary(_ query: String?) -> [String: String] { WebText.formFields(query ?? "") }

}

