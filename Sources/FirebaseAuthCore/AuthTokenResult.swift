import Foundation
import Utilities

/// `AuthTokenResult` (FirebaseAuth 12.19 `Auth/AuthTokenResult.swift`): the ID token and what its
/// payload says, decoded without verifying it, as the SDK does. An `NSObject` that archives itself
/// (`NSSecureCoding`: the token alone, parsed again when read), not `Sendable`, as 12.19's.
open class AuthTokenResult: NSObject, NSSecureCoding {
    /// The ID token (a JWT).
    public let token: String
    /// `exp`.
    public let expirationDate: Date
    /// `auth_time`: when the user signed in, not when the token was refreshed.
    public let authDate: Date
    /// `iat`: when the token was issued (refreshed).
    public let issuedAtDate: Date
    /// `firebase.sign_in_provider` (`phone`, `apple.com`, `custom`, …).
    public let signInProvider: String
    /// `firebase.sign_in_second_factor` (`phone` after a second factor), else "".
    public let signInSecondFactor: String
    /// The whole payload: the reserved claims and the custom ones an admin set.
    public let claims: [String: Any]

    private struct Payload: Decodable {
        struct Firebase: Decodable {
            let sign_in_provider: String
            let sign_in_second_factor: String?
        }
        let exp: Double
        let auth_time: Double
        let iat: Double
        let firebase: Firebase
    }

    /// Parses `token` as the SDK's `tokenResult(token:)` does.
    /// - Throws: ``AuthError`` `malformedJWT` (18000) when it is not a JWT with those claims.
    static func parse(_ token: String) throws(AuthError) -> AuthTokenResult {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]).map({ Data($0) }) else {
            throw AuthError(.malformedJWT, "the ID token is not a JWT of three parts")
        }
        let claims: [String: Any]
        let decoded: Payload
        do {
            claims = try JSONSerialization.jsonObject(with: payload) as? [String: Any] ?? [:]
            decoded = try JSONDecoder().decode(Payload.self, from: payload)
        } catch {
            throw AuthError(.malformedJWT, "the ID token's payload lacks exp, auth_time, iat or firebase.sign_in_provider: \(error)")
        }
        return AuthTokenResult(token: token, expirationDate: Date(timeIntervalSince1970: decoded.exp),
                               authDate: Date(timeIntervalSince1970: decoded.auth_time), issuedAtDate: Date(timeIntervalSince1970: decoded.iat),
                               signInProvider: decoded.firebase.sign_in_provider,
                               signInSecondFactor: decoded.firebase.sign_in_second_factor ?? "", claims: claims)
    }

    private init(token: String, expirationDate: Date, authDate: Date, issuedAtDate: Date, signInProvider: String,
                 signInSecondFactor: String, claims: [String: Any]) {
        self.token = token
        self.expirationDate = expirationDate
        self.authDate = authDate
        self.issuedAtDate = issuedAtDate
        self.signInProvider = signInProvider
        self.signInSecondFactor = signInSecondFactor
        self.claims = claims
    }

    // MARK: Secure coding (the SDK's key; the rest is read from the token again)

    public static let supportsSecureCoding = true

    public func encode(with coder: NSCoder) {
        coder.encode(token, forKey: "token")
    }

    /// Nil when the archive has no token, or one that is not a JWT with the claims above.
    public required convenience init?(coder: NSCoder) {
        guard let token = coder.decodeIfPresent(of: NSString.self, forKey: "token") as String?,
              let parsed = try? AuthTokenResult.parse(token) else { return nil }
        self.init(token: parsed.token, expirationDate: parsed.expirationDate, authDate: parsed.authDate, issuedAtDate: parsed.issuedAtDate,
                  signInProvider: parsed.signInProvider, signInSecondFactor: parsed.signInSecondFactor, claims: parsed.claims)
    }
}

extension User {
    /// `getIDTokenResult(forcingRefresh:)`: ``getIDToken(forcingRefresh:)``'s token, with its claims.
    public func getIDTokenResult(forcingRefresh forceRefresh: Bool = false) async throws -> AuthTokenResult {
        return try await AuthError.forApp {
            try AuthTokenResult.parse(try await idToken(forcingRefresh: forceRefresh))
        }
    }

    /// `getIDTokenResult(completion:)`.
    public func getIDTokenResult(completion: ((AuthTokenResult?, (any Error)?) -> Void)?) {
        getIDTokenResult(forcingRefresh: false, completion: completion)
    }

    /// `getIDTokenResult(forcingRefresh:completion:)`.
    public func getIDTokenResult(forcingRefresh forceRefresh: Bool, completion: ((AuthTokenResult?, (any Error)?) -> Void)?) {
        complete(completion, with: self) { (user: User) async throws -> AuthTokenResult in try await user.getIDTokenResult(forcingRefresh: forceRefresh) }
    }
}
