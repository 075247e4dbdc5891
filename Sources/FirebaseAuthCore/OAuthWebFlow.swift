import Foundation
import Utilities

/// The kind of page Auth presents, as the callback's `authType` names it.
package enum WebAuthType: String, Sendable, Hashable {
    /// The reCAPTCHA fallback of phone verification.
    case verifyApp
    /// An identity provider's sign-in page (`OAuthProvider`'s web flow).
    case signInWithRedirect
}

/// The pieces of `OAuthProvider`'s web flow that are pure (FirebaseAuth 12.19
/// AuthProvider/OAuthProvider.swift): the session, the handler URL it opens, and how it reads the
/// provider's answer from the redirect to the app's scheme.
package enum OAuthWebFlow {
    /// `AuthWebUtils.randomString(withLength: 10)`: the event and session IDs, 10 uppercase letters.
    package static func newSessionID() -> String { ReCAPTCHAFlow.newEventID() }

    /// `hash(forString:)`: the lowercase hex SHA-256 of the session ID, what the handler URL
    /// carries (the raw one goes to signInWithIdp).
    package static func sessionHash(_ sessionID: String) -> String {
        Hex.encode(SHA256Digest.hash(Array(sessionID.utf8)))
    }

    /// What the handler URL carries beyond the app's identity.
    package struct Request: Sendable, Hashable {
        package var apiKey: String
        package var bundleID: String
        package var sessionID: String
        package var userAgent: String
        package var eventID: String
        package var providerID: String
        /// `clientId` when the reversed client ID is the callback scheme, else `appId`.
        package var clientID: String?
        package var appID: String
        package var tenantID: String?
        package var scopes: [String]?
        package var customParameters: [String: String]?
        package var languageCode: String?

        package init(apiKey: String, bundleID: String, sessionID: String, userAgent: String, eventID: String, providerID: String,
                     clientID: String?, appID: String, tenantID: String?, scopes: [String]?, customParameters: [String: String]?,
                     languageCode: String?) {
            (self.apiKey, self.bundleID, self.sessionID, self.userAgent, self.eventID, self.providerID) = (apiKey, bundleID, sessionID, userAgent, eventID, providerID)
            (self.clientID, self.appID, self.tenantID, self.scopes, self.customParameters, self.languageCode) = (clientID, appID, tenantID, scopes, customParameters, languageCode)
        }
    }

    /// `getHeadfulLiteUrl(eventID:sessionID:)`: `http://<emulator>/emulator/auth/handler` with the
    /// emulator, else `https://<authDomain>/__/auth/handler`, with `apiKey`, `authType`, `ibi`,
    /// `sessionId` (the hash), `v`, `eventId`, `providerId`, `clientId` or `appId`, then `tid`,
    /// `scopes` (comma-joined, when not empty), `customParameters` (JSON, when not empty) and
    /// `hl`, in the SDK's order, `+` written `%2B`.
    package static func handlerURL(domain: String, emulator: Bool, _ request: Request) -> URL? {
        var items = [
            URLQueryItem(name: "apiKey", value: request.apiKey),
            URLQueryItem(name: "authType", value: WebAuthType.signInWithRedirect.rawValue),
            URLQueryItem(name: "ibi", value: request.bundleID),
            URLQueryItem(name: "sessionId", value: sessionHash(request.sessionID)),
            URLQueryItem(name: "v", value: request.userAgent),
            URLQueryItem(name: "eventId", value: request.eventID),
            URLQueryItem(name: "providerId", value: request.providerID),
        ]
        if let clientID = request.clientID { items.append(URLQueryItem(name: "clientId", value: clientID)) } else {
            items.append(URLQueryItem(name: "appId", value: request.appID))
        }
        if let tenantID = request.tenantID { items.append(URLQueryItem(name: "tid", value: tenantID)) }
        if let scopes = request.scopes, !scopes.isEmpty {
            items.append(URLQueryItem(name: "scopes", value: scopes.joined(separator: ",")))
        }
        if let parameters = request.customParameters, !parameters.isEmpty {
            // JSONSerialization, as the SDK writes it: its key order, "/" escaped.
            if let data = try? JSONSerialization.data(withJSONObject: parameters) {
                items.append(URLQueryItem(name: "customParameters", value: String(decoding: data, as: UTF8.self)))
            }
        }
        if let languageCode = request.languageCode { items.append(URLQueryItem(name: "hl", value: languageCode)) }
        var components = URLComponents(string: emulator ? "http://\(domain)/emulator/auth/handler" : "https://\(domain)/__/auth/handler")
        components?.queryItems = items
        if let query = components?.percentEncodedQuery {
            components?.percentEncodedQuery = query.replacingOccurrences(of: "+", with: "%2B")
        }
        return components?.url
    }

    /// The SDK's `oAuthResponseForURL(url:)`, once the redirect matched: the callback's `link` (the
    /// provider's answer, sent to signInWithIdp as `requestUri`); else its `firebaseError` (the
    /// web page's codes mapped as for reCAPTCHA, others 17063 `[code] - message`, JSON that does
    /// not parse an internal error); else 17063. Queries are read as the SDK's
    /// `dictionary(withHttpArgumentsString:)` reads them (`+` a space, first occurrence wins).
    static func readCallback(_ url: URL) -> ReCAPTCHAFlow.Redirect {
        var fields = ReCAPTCHAFlow.queryDictionary(url.query)
        if let deepLink = fields["deep_link_id"], let callback = URL(string: deepLink) {
            fields = ReCAPTCHAFlow.queryDictionary(callback.query)
            if let link = fields["link"] { return .link(link) }
        }
        if let errorJSON = fields["firebaseError"] {
            guard let parsed = try? JSONSerialization.jsonObject(with: Data(errorJSON.utf8), options: [.fragmentsAllowed]) else {
                return .failure(AuthError(.internalError, "the page's firebaseError is not JSON: \(errorJSON)"))
            }
            let object = parsed as? [String: Any]
            let code = object?["code"] as? String ?? "missing code"
            let message = object?["message"] as? String ?? "missing message"
            return .failure(ReCAPTCHAFlow.webError(code: code, message: message))
        }
        return .failure(AuthError(.webSignInUserInteractionFailure,
                                  "SignIn failed with unparsable firebaseError (the redirect carries neither link nor firebaseError: \(url.absoluteString.prefix(200)))"))
    }
}
