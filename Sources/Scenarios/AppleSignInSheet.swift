import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The device's Sign in with Apple sheet (`ASAuthorizationController`), against the backend's
/// simulated Apple ID provider: a user consents, and the app gets what
/// `ASAuthorizationAppleIDCredential` holds.
public struct AppleSignInSheet: Sendable {
    /// The backend, `http://host:port`.
    public let backend: String

    public init(backend: String) { self.backend = backend }

    /// What the sheet returns.
    public struct Credential: Sendable {
        public let identityToken: String
        public let authorizationCode: String
        public let user: String
        /// Only the first time this Apple ID authorizes the app.
        public let email: String?
        public let fullName: PersonNameComponents?
    }

    public struct SheetError: Error, CustomStringConvertible {
        public let description: String
    }

    /// `appleUser` (a name for a simulated Apple ID) signs in to `clientID` with the request's
    /// `nonce` (the SHA-256 hex). `issuedAt` backdates the token (an expired one, for tests).
    public func authorize(clientID: String, appleUser: String, nonce: String?, scopes: [String] = ["name", "email"], hideEmail: Bool = false,
                          givenName: String? = "Ada", familyName: String? = "Lovelace", issuedAt: Date? = nil) async throws -> Credential {
        guard let url = URL(string: "\(backend)/appleid/auth/authorize") else { throw SheetError(description: "bad backend \(backend)") }
        var body: [String: Any] = ["client_id": clientID, "user": appleUser, "scope": scopes.joined(separator: " "), "hide_email": hideEmail]
        if let nonce { body["nonce"] = nonce }
        if let givenName { body["given_name"] = givenName }
        if let familyName { body["family_name"] = familyName }
        if let issuedAt { body["issued_at"] = issuedAt.timeIntervalSince1970 }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200,
              let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let token = object["identity_token"] as? String, let code = object["authorization_code"] as? String,
              let user = object["user"] as? String
        else { throw SheetError(description: "the Apple ID provider answered \(String(decoding: data, as: UTF8.self))") }
        var name: PersonNameComponents?
        if object["given_name"] != nil || object["family_name"] != nil {
            var components = PersonNameComponents()
            components.givenName = object["given_name"] as? String
            components.familyName = object["family_name"] as? String
            name = components
        }
        return Credential(identityToken: token, authorizationCode: code, user: user, email: object["email"] as? String, fullName: name)
    }
}

extension PhoneAuthWorld {
    /// The Sign in with Apple sheet of this world's devices.
    public var appleSheet: AppleSignInSheet { AppleSignInSheet(backend: backendURL) }
}
