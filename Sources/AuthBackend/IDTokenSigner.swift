import APNsWire
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
        let iat = Int(now.timeIntervalSince1970)
        let header: [String: Any] = ["alg": "ES256", "kid": keyID, "typ": "JWT"]
        let claims: [String: Any] = [
            "iss": "https://securetoken.google.com/\(projectID)", "aud": projectID, "sub": uid, "user_id": uid,
            "iat": iat, "exp": iat + 3600, "auth_time": iat, "phone_number": phoneNumber,
            "firebase": ["identities": ["phone": [phoneNumber]], "sign_in_provider": "phone"],
        ]
        func segment(_ object: [String: Any]) -> String {
            Base64URL.encode(Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()))
        }
        let input = segment(header) + "." + segment(claims)
        let signature = try! key.signature(for: Array(input.utf8))
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
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
