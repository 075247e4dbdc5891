import IdentityToolkitAPI
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
    /// The token header's segment: the same for every token this signer makes.
    private let headerSegment: String

    public init(projectID: String, key: P256.Signing.PrivateKey = .init()) {
        self.projectID = projectID
        self.key = key
        let keyID = String(Base64URL.encode(Array(SHA256.hash(data: key.publicKey.rawRepresentation))).prefix(16))
        self.keyID = keyID
        headerSegment = Base64URL.encode((try? IdentityToolkitJSON.encode(JWTHeader(alg: "ES256", kid: keyID))) ?? [])
    }

    public var publicKey: P256.Signing.PublicKey { key.publicKey }

    public func token(uid: String, phoneNumber: String, now: Date) -> String {
        token(for: BackendUser(localId: uid, phoneNumber: phoneNumber, createdAt: now), provider: "phone", now: now)
    }

    /// An ID token for `user`, signed in with `provider` (`phone`, `apple.com`), and with the
    /// second factor `secondFactor` (an enrollment ID) when one completed the sign-in.
    public func token(for user: BackendUser, provider: String, secondFactor: String? = nil, now: Date) -> String {
        var identities: [String: [String]] = [:]
        if let phone = user.phoneNumber { identities["phone"] = [phone] }
        if let sub = user.appleSub { identities["apple.com"] = [sub] }
        if let email = user.email { identities["email"] = [email] }
        let claims = FirebaseIDTokenClaims(projectID: projectID, uid: user.localId, issuedAt: Int(now.timeIntervalSince1970),
                                           phoneNumber: user.phoneNumber, email: user.email,
                                           emailVerified: user.email == nil ? nil : (user.emailVerified ?? true), name: user.displayName,
                                           firebase: .init(identities: identities, signInProvider: provider,
                                                           signInSecondFactor: secondFactor == nil ? nil : "phone",
                                                           secondFactorIdentifier: secondFactor))
        func segment(_ value: some Encodable) -> String {
            // Strings, integers and dictionaries of them always encode.
            Base64URL.encode((try? IdentityToolkitJSON.encode(value)) ?? [])
        }
        let input = headerSegment + "." + segment(claims)
        let signature = try! key.signature(for: Array(input.utf8))
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    /// The user ID in one of this signer's tokens, if it is valid at `now`.
    public func verifiedUID(_ token: String, now: Date) -> String? { verifiedClaims(token, now: now)?.sub }

    /// The claims of one of this signer's tokens, if it is valid at `now`.
    public func verifiedClaims(_ token: String, now: Date) -> FirebaseIDTokenClaims? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let claimBytes = Base64URL.decode(parts[1]), let signatureBytes = Base64URL.decode(parts[2]),
              let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
              key.publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)),
              let claims = try? IdentityToolkitJSON.decode(FirebaseIDTokenClaims.self, from: claimBytes),
              claims.aud == projectID, Double(claims.exp) > now.timeIntervalSince1970
        else { return nil }
        return claims
    }

    /// The JWKS the backend publishes.
    public var jwks: JSONWebKeySet {
        let raw = Array(key.publicKey.rawRepresentation)
        return JSONWebKeySet(keys: [JSONWebKey(kty: "EC", kid: keyID, alg: "ES256", use: "sig", crv: "P-256",
                                               x: Base64URL.encode(raw[0..<32]), y: Base64URL.encode(raw[32..<64]))])
    }
}
