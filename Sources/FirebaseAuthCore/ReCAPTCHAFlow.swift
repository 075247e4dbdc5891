import Foundation

/// The pieces of the SDK's reCAPTCHA fallback that are pure: the event ID, the handler URL it
/// opens, and how it reads the redirect that comes back to the app's URL scheme.
public enum ReCAPTCHAFlow {
    /// A new event ID: 10 random uppercase letters, as the SDK makes them.
    public static func newEventID() -> String {
        String((0..<10).map { _ in "ABCDEFGHIJKLMNOPQRSTUVWXYZ".randomElement()! })
    }

    /// The auth domain from `getProjectConfig`'s `authorizedDomains`: the first ending in
    /// `firebaseapp.com`, else the first ending in `web.app`.
    public static func authDomain(from authorizedDomains: [String]) -> String? {
        authorizedDomains.first { $0.hasSuffix("firebaseapp.com") } ?? authorizedDomains.first { $0.hasSuffix("web.app") }
    }

    /// `https://<authDomain>/__/auth/handler?apiKey=…&authType=verifyApp&ibi=…&v=…&eventId=…&(clientId=…|appId=…)[&hl=…]`,
    /// in the SDK's parameter order. `clientId` when the reversed client ID is the callback scheme.
    public static func handlerURL(base: String, apiKey: String, bundleID: String, sdkVersion: String, eventID: String,
                                  clientID: String?, appID: String, languageCode: String?) -> URL? {
        var items = [
            URLQueryItem(name: "apiKey", value: apiKey), URLQueryItem(name: "authType", value: "verifyApp"),
            URLQueryItem(name: "ibi", value: bundleID), URLQueryItem(name: "v", value: sdkVersion),
            URLQueryItem(name: "eventId", value: eventID),
        ]
        if let clientID { items.append(URLQueryItem(name: "clientId", value: clientID)) } else {
            items.append(URLQueryItem(name: "appId", value: appID))
        }
        if let languageCode, !languageCode.isEmpty { items.append(URLQueryItem(name: "hl", value: languageCode)) }
        var components = URLComponents(string: base + "/__/auth/handler")
        components?.percentEncodedQueryItems = items.map {
            URLQueryItem(name: $0.name, value: $0.value?.addingPercentEncoding(withAllowedCharacters: queryValueAllowed))
        }
        return components?.url
    }

    /// What a redirect to the app's scheme says.
    public enum Redirect: Sendable, Hashable {
        /// The challenge was solved: the token for sendVerificationCode.
        case token(String)
        /// The page reported an error (mapped as the SDK maps it).
        case failure(AuthError)
        /// Not Auth's URL, and why.
        case notOurs(String)
    }

    /// Reads a redirect as `canHandle(url)` does: `<scheme>://firebaseauth/link?deep_link_id=<callback>`,
    /// the callback carrying `authType=verifyApp`, the expected `eventId`, and `recaptchaToken` or
    /// `firebaseError`. In each query the first occurrence of a key wins, `+` is a space, values are
    /// percent-decoded.
    public static func read(_ url: URL, scheme: String, eventID: String) -> Redirect {
        guard url.scheme?.lowercased() == scheme.lowercased() else {
            return .notOurs("scheme \(url.scheme ?? "none") is not the callback scheme \(scheme)")
        }
        guard url.host == "firebaseauth", url.path == "/link" else {
            return .notOurs("\(url.host ?? "")\(url.path) is not firebaseauth/link")
        }
        let outer = queryDictionary(url.query)
        guard let deepLink = outer["deep_link_id"], let callback = URL(string: deepLink) else {
            return .failure(AuthError(.appVerificationUserInteractionFailure, "the redirect has no deep_link_id"))
        }
        let inner = queryDictionary(callback.query)
        guard inner["authType"] == "verifyApp" else {
            return .notOurs("authType is \(inner["authType"] ?? "missing"), not verifyApp")
        }
        guard inner["eventId"] == eventID else {
            return .notOurs("event \(inner["eventId"] ?? "missing") is not the presented event \(eventID)")
        }
        if let errorJSON = inner["firebaseError"] {
            guard let data = errorJSON.data(using: .utf8),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return .failure(AuthError(.internalError, "firebaseError is not JSON: \(errorJSON)")) }
            guard let code = object["code"] as? String, let message = object["message"] as? String else {
                return .failure(AuthError(.appVerificationUserInteractionFailure, "firebaseError has no string code and message"))
            }
            switch code {
            case "auth/invalid-oauth-client-id": return .failure(AuthError(.invalidClientID, message))
            case "auth/network-request-failed": return .failure(AuthError(.webNetworkRequestFailed, message))
            case "auth/internal-error": return .failure(AuthError(.webInternalError, message))
            default: return .failure(AuthError(.webSignInUserInteractionFailure, "\(code): \(message)"))
            }
        }
        guard let token = inner["recaptchaToken"], !token.isEmpty else {
            return .failure(AuthError(.appVerificationUserInteractionFailure, "the callback has neither recaptchaToken nor firebaseError"))
        }
        return .token(token)
    }

    /// `a=1&b=2+3&a=9` → `["a": "1", "b": "2 3"]`: first occurrence wins, `+` is a space.
    static func queryDictionary(_ query: String?) -> [String: String] {
        var result: [String: String] = [:]
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard let rawKey = parts.first else { continue }
            let key = decode(rawKey)
            if result[key] == nil { result[key] = parts.count > 1 ? decode(parts[1]) : "" }
        }
        return result
    }

    private static func decode(_ text: String) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    private static let queryValueAllowed: CharacterSet = {
        var set = CharacterSet.alphanumerics
        set.insert(charactersIn: "-._~")
        return set
    }()
}
