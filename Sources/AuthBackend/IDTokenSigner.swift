import Utilities
import Crypto
import Foundation

/// Mints Firebase ID tokens with the real claim set, signed ES256 with a key the backend
/// publishes as a JWKS. (Firebase signs RS256; ES256 keeps this backend on swift-crypto's core API.
/// Verifiers must read `alg` from the JWKS, as they should anyway.)
public struct IDTokenSigner: Sendable {
    public let projectID: String
    public let keyID: String
    private let key: P256.Signing.PrivateKey

    public init(projectID: String, key: P256.Signing.PrivateKey = .init()) {
        self.projectID = projectID
        self.key = key
        self.keyID = String(Base64URL.encode(Array(SHA256.hash(data: key.publicKey.rawRepresentation))).prefix(16))
    }

    public var publicKey: P256.Signing.PublicKey { key.publicKey }

    public func token(uid: String, phoneNumber: String, now: Date) -> String {
        token(for: BackendUser(localId: uid, phoneNumber: phoneNumber, createdAt: now), provider: "phone", now: now)
    }

    /// An ID token for `user`, signed in with `provider` (`phone`, `apple.com`).
    public func token(for user: BackendUser, provider: String, now: Date) -> String {
        let iat = Int(now.timeIntervalSince1970)
        let header: [String: Any] = ["alg": "ES256", "kid": keyID, "typ": "JWT"]
        var identities: [String: [String]] = [:]
        if let phone = user.phoneNumber { identities["phone"] = [phone] }
        if let sub = user.appleSub { identities["apple.com"] = [sub] }
        if let email = user.email { identities["email"] = [email] }
        var claims: [String: Any] = [
            "iss": "https://securetoken.google.com/\(projectID)", "aud": projectID, "sub": user.localId, "user_id": user.localId,
            "iat": iat, "exp": iat + 3600, "auth_time": iat,
            "firebase": ["identities": identities, "sign_in_provider": provider],
        ]
        if let phone = user.phoneNumber { claims["phone_number"] = phone }
        if let email = user.email {
            claims["email"] = email
            claims["email_verified"] = true
        }
        if let name = user.displayName { claims["name"] = name }
        func segment(_ object: [String: Any]) -> String {
            Base64URL.encode(CompactJSON.bytes(object) ?? [])
        }
        let input = segment(header) + "." + segment(claims)
        let signature = try! key.signature(for: Array(input.utf8))
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    /// The user ID in one of this signer's tokens, if it is valid at `now`.
    public func verifiedUID(_ token: String, now: Date) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let claimBytes = Base64URL.decode(parts[1]), let signatureBytes = Base64URL.decode(parts[2]),
              let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
              key.publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)),
              let claims = (try? JSONSerialization.jsonObject(with: Data(claimBytes))) as? [String: Any],
              claims["aud"] as? String == projectID, let exp = claims["exp"] as? Int, Double(exp) > now.timeIntervalSince1970
        else { return nil }
        return claims["sub"] as? String
    }

    /// The JWKS the backend publishes.
    public var jwks: [String: Any] {
        let raw = Array(key.publicKey.rawRepresentation)
        return ["keys": [[
            "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": keyID,
            "x": Base64URL.encode(raw[0..<32]), "y": Base64URL.encode(raw[32..<64]),
        ]]]
    }
}
