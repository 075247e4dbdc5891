import Utilities
import Crypto
import CryptoExtras
import Foundation
import Synchronization

/// Apple's side of Sign in with Apple, simulated: the authorization sheet (a user consents; Apple
/// returns an identity token and an authorization code), RS256 identity tokens
/// (`iss https://appleid.apple.com`, `aud` the bundle or services ID, `sub`, `email`,
/// `email_verified`, `is_private_email`, `nonce` as given, `iat`, `exp`), the JWKS they verify
/// against, and revocation of authorization codes.
public final class AppleIDProvider: Sendable {
    public static let issuer = "https://appleid.apple.com"
    /// Identity tokens live ten minutes.
    public static let tokenLifetime: TimeInterval = 600

    private let clock: any WallClock
    /// Made on first use: a 2048-bit RSA key takes a while, and most backends never sign in with Apple.
    private let keyPair = Mutex<(key: _RSA.Signing.PrivateKey, id: String)?>(nil)
    private struct Account {
        let sub: String
        let realEmail: String
        let relayEmail: String
        var consented: Set<String> = []
    }
    private struct Code {
        let sub: String
        let clientID: String
        var revoked: Bool
    }
    private struct State {
        var accounts: [String: Account] = [:]
        var codes: [String: Code] = [:]
    }
    private let state = Mutex(State())

    public init(clock: any WallClock = SystemWallClock()) throws {
        self.clock = clock
    }

    private var signingKey: (key: _RSA.Signing.PrivateKey, id: String) {
        keyPair.withLock { pair in
            if let pair { return pair }
            let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
            let made = (key, String(Base64URL.encode(Array(SHA256.hash(data: key.publicKey.derRepresentation))).prefix(10)))
            pair = made
            return made
        }
    }

    /// The `kid` of Apple's signing key (in the JWKS and every token's header).
    public var keyID: String { signingKey.id }
    private var key: _RSA.Signing.PrivateKey { signingKey.key }

    /// What the sheet hands the app (`ASAuthorizationAppleIDCredential`).
    public struct Authorization: Sendable {
        public let identityToken: String
        public let authorizationCode: String
        /// The stable user identifier (`sub`).
        public let user: String
        /// Only on the first authorization for this app, and only if asked for.
        public let email: String?
        public let givenName: String?
        public let familyName: String?
    }

    /// A user (named by `appleUser`, e.g. "alice") signs in to `clientID`. `nonce` is what the app
    /// put in the request (the SHA-256 hex of its raw nonce); Apple copies it into the token.
    /// Name and email come back only the first time the user consents to this app, as with Apple.
    public func authorize(clientID: String, appleUser: String, nonce: String?, wantsEmail: Bool = true, wantsName: Bool = true,
                          hideEmail: Bool = false, givenName: String? = nil, familyName: String? = nil,
                          issuedAt: Date? = nil) throws -> Authorization {
        let now = issuedAt ?? clock.now
        let (account, first) = state.withLock { state -> (Account, Bool) in
            var account = state.accounts[appleUser] ?? Account(
                sub: "00\(Int.random(in: 1000...9999)).\(Self.hex(16)).\(Int.random(in: 1000...9999))",
                realEmail: "\(appleUser)@icloud.example", relayEmail: "\(Self.hex(5).lowercased())@privaterelay.appleid.com")
            let first = !account.consented.contains(clientID)
            account.consented.insert(clientID)
            state.accounts[appleUser] = account
            return (account, first)
        }
        let email = hideEmail ? account.relayEmail : account.realEmail
        var claims: [String: Any] = [
            "iss": Self.issuer, "aud": clientID, "sub": account.sub, "iat": Int(now.timeIntervalSince1970),
            "exp": Int(now.timeIntervalSince1970 + Self.tokenLifetime), "auth_time": Int(now.timeIntervalSince1970),
            "c_hash": Self.hex(11), "nonce_supported": true,
        ]
        if wantsEmail {
            claims["email"] = email
            claims["email_verified"] = "true"
            claims["is_private_email"] = hideEmail ? "true" : "false"
        }
        if let nonce { claims["nonce"] = nonce }
        let token = try sign(claims)
        let code = "c" + Self.hex(16).lowercased() + ".0.r" + Self.hex(6).lowercased()
        state.withLock { $0.codes[code] = Code(sub: account.sub, clientID: clientID, revoked: false) }
        return Authorization(identityToken: token, authorizationCode: code, user: account.sub,
                             email: first && wantsEmail ? email : nil,
                             givenName: first && wantsName ? givenName : nil, familyName: first && wantsName ? familyName : nil)
    }

    /// `https://appleid.apple.com/auth/keys`.
    public var jwks: [String: Any] {
        let primitives = try? key.publicKey.getKeyPrimitives()
        return ["keys": [[
            "kty": "RSA", "kid": keyID, "use": "sig", "alg": "RS256",
            "n": Base64URL.encode(Array(primitives?.modulus ?? Data())), "e": Base64URL.encode(Array(primitives?.publicExponent ?? Data())),
        ]]]
    }

    /// Verifies an identity token's RS256 signature as Firebase does with Apple's: the key is the one
    /// the JWKS (`jwks`, as fetched from `https://appleid.apple.com/auth/keys`) lists under the
    /// token's `kid`, rebuilt from its `n` and `e`. Returns the claims; the caller checks them.
    public static func verifySignature(_ token: String, jwks: [String: Any]) throws(BackendError) -> [String: Any] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let claimBytes = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2]),
              let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
              let claims = (try? JSONSerialization.jsonObject(with: Data(claimBytes))) as? [String: Any]
        else { throw BackendError("INVALID_IDP_RESPONSE", "The supplied auth credential is malformed or has expired.") }
        guard header["alg"] as? String == "RS256" else {
            throw BackendError("INVALID_IDP_RESPONSE", "Invalid ID token: alg must be RS256, not \(header["alg"] ?? "none")")
        }
        let keys = jwks["keys"] as? [[String: Any]] ?? []
        guard let kid = header["kid"] as? String, let jwk = keys.first(where: { $0["kid"] as? String == kid }),
              jwk["kty"] as? String == "RSA", let n = (jwk["n"] as? String).flatMap({ Base64URL.decode(Substring($0)) }),
              let e = (jwk["e"] as? String).flatMap({ Base64URL.decode(Substring($0)) }),
              let publicKey = try? _RSA.Signing.PublicKey(n: n, e: e)
        else {
            throw BackendError("INVALID_IDP_RESPONSE", "Invalid ID token: no RSA key \(header["kid"] ?? "none") in https://appleid.apple.com/auth/keys")
        }
        let input = Array((parts[0] + "." + parts[1]).utf8)
        guard publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5) else {
            throw BackendError("INVALID_IDP_RESPONSE", "Invalid ID token: the signature does not verify")
        }
        return claims
    }

    /// `https://appleid.apple.com/auth/revoke` for an authorization code: the user's grant to the app ends.
    public func revoke(code: String, clientID: String) throws(BackendError) -> String {
        let sub = state.withLock { state -> String? in
            guard var entry = state.codes[code], entry.clientID == clientID, !entry.revoked else { return nil }
            entry.revoked = true
            state.codes[code] = entry
            for (name, account) in state.accounts where account.sub == entry.sub {
                state.accounts[name]?.consented.remove(clientID)
            }
            return entry.sub
        }
        guard let sub else { throw BackendError("INVALID_IDP_RESPONSE", "invalid_grant: the authorization code is unknown, revoked, or for another client") }
        return sub
    }

    private func sign(_ claims: [String: Any]) throws -> String {
        func segment(_ object: [String: Any]) throws -> String {
            Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])))
        }
        let input = try segment(["alg": "RS256", "kid": keyID]) + "." + segment(claims)
        let signature = try key.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    static func hex(_ bytes: Int) -> String {
        (0..<bytes).map { _ in String(format: "%02X", UInt8.random(in: 0...255)) }.joined()
    }
}
