import IdentityToolkitAPI
import Utilities
import Crypto
import CryptoExtras
import Foundation
import Synchronization

/// The claims of an Apple identity token, as Apple writes them (`email_verified` and
/// `is_private_email` as the strings "true" and "false").
package struct AppleIdentityTokenClaims: Codable, Sendable, Hashable {
    package var iss: String?
    package var aud: String?
    package var sub: String?
    package var iat: Int?
    package var exp: Int?
    package var authTime: Int?
    /// What the app put in the request: the SHA-256 hex of its raw nonce.
    package var nonce: String?
    package var cHash: String?
    package var nonceSupported: Bool?
    package var email: String?
    package var emailVerified: String?
    package var isPrivateEmail: String?

    package init(iss: String?, aud: String?, sub: String?, iat: Int?, exp: Int?, authTime: Int?, nonce: String?,
                cHash: String? = nil, nonceSupported: Bool? = nil, email: String? = nil, emailVerified: String? = nil,
                isPrivateEmail: String? = nil) {
        self.iss = iss
        self.aud = aud
        self.sub = sub
        self.iat = iat
        self.exp = exp
        self.authTime = authTime
        self.nonce = nonce
        self.cHash = cHash
        self.nonceSupported = nonceSupported
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
    }

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub, iat, exp, nonce, email
        case authTime = "auth_time", cHash = "c_hash", nonceSupported = "nonce_supported", emailVerified = "email_verified"
        case isPrivateEmail = "is_private_email"
    }
}

/// What the device's Sign in with Apple sheet asks the simulated Apple ID provider
/// (`POST /appleid/auth/authorize`): a user (a name for a simulated Apple ID) consents to `client_id`.
package struct AppleAuthorizeRequest: Codable, Sendable, Hashable {
    package var clientID: String
    package var user: String
    /// Space-separated: `name email` by default.
    package var scope: String?
    /// The SHA-256 hex of the app's raw nonce.
    package var nonce: String?
    package var hideEmail: Bool?
    package var givenName: String?
    package var familyName: String?
    /// Seconds since 1970: backdates the token (an expired one, for tests).
    package var issuedAt: Double?

    package init(clientID: String, user: String, scope: String? = nil, nonce: String? = nil, hideEmail: Bool? = nil,
                givenName: String? = nil, familyName: String? = nil, issuedAt: Double? = nil) {
        self.clientID = clientID
        self.user = user
        self.scope = scope
        self.nonce = nonce
        self.hideEmail = hideEmail
        self.givenName = givenName
        self.familyName = familyName
        self.issuedAt = issuedAt
    }

    enum CodingKeys: String, CodingKey {
        case user, scope, nonce
        case clientID = "client_id", hideEmail = "hide_email", givenName = "given_name", familyName = "family_name"
        case issuedAt = "issued_at"
    }
}

/// What the sheet hands the app (`ASAuthorizationAppleIDCredential`), as the provider answers it.
package struct AppleAuthorizeResponse: Codable, Sendable, Hashable {
    package var identityToken: String
    package var authorizationCode: String
    /// The stable user identifier (`sub`).
    package var user: String
    /// Only on the first authorization for this app, and only if asked for.
    package var email: String?
    package var givenName: String?
    package var familyName: String?

    package init(identityToken: String, authorizationCode: String, user: String, email: String?, givenName: String?,
                familyName: String?) {
        self.identityToken = identityToken
        self.authorizationCode = authorizationCode
        self.user = user
        self.email = email
        self.givenName = givenName
        self.familyName = familyName
    }

    enum CodingKeys: String, CodingKey {
        case user, email
        case identityToken = "identity_token", authorizationCode = "authorization_code", givenName = "given_name"
        case familyName = "family_name"
    }
}

/// Apple's side of Sign in with Apple, simulated: the authorization sheet (a user consents; Apple
/// returns an identity token and an authorization code), RS256 identity tokens
/// (`iss https://appleid.apple.com`, `aud` the bundle or services ID, `sub`, `email`,
/// `email_verified`, `is_private_email`, `nonce` as given, `iat`, `exp`), the JWKS they verify
/// against, and revocation of authorization codes.
package final class AppleIDProvider: Sendable {
    package static let issuer = "https://appleid.apple.com"
    /// Identity tokens live ten minutes.
    package static let tokenLifetime: TimeInterval = 600

    private let clock: any WallClock
    private struct Account {
        let sub: String
        let realEmail: String
        let relayEmail: String
    }

    /// The key this provider signs with: a fleet's (``init(clock:key:)``), else the process's.
    private let ownKey: (key: _RSA.Signing.PrivateKey, id: String)?

    package init(clock: any WallClock = SystemWallClock()) throws {
        self.clock = clock
        ownKey = nil
    }

    /// A provider that signs with `key`: a fleet's, so that an identity token one node's Apple
    /// sheet signed verifies on every node, as Apple's keys are the same for every server.
    package init(clock: any WallClock = SystemWallClock(), key: _RSA.Signing.PrivateKey) {
        self.clock = clock
        ownKey = (key, Self.keyID(of: key))
    }

    private var signingKey: (key: _RSA.Signing.PrivateKey, id: String) { ownKey ?? Self.processKey }

    /// The key Apple's sheet signs with when a node of a fleet offers one (made on first use).
    package static var processKeyPEM: String { processKey.key.pemRepresentation }

    static func keyID(of key: _RSA.Signing.PrivateKey) -> String {
        String(Base64URL.encode(Array(SHA256.hash(data: key.publicKey.derRepresentation))).prefix(10))
    }

    /// Apple's signing key, one per process, made on first use (a 2048-bit RSA key takes a
    /// while, and most backends never sign in with Apple): Apple signs every app's identity
    /// tokens with the keys of one JWKS (`https://appleid.apple.com/auth/keys`), so the
    /// providers of one process share it, and a suite that starts many backends makes one key,
    /// not one per backend.
    private static let processKey: (key: _RSA.Signing.PrivateKey, id: String) = {
        let key = IDTokenSigner.makeKey()
        return (key, keyID(of: key))
    }()

    /// The `kid` of Apple's signing key (in the JWKS and every token's header).
    package var keyID: String { signingKey.id }
    private var key: _RSA.Signing.PrivateKey { signingKey.key }

    /// What the sheet hands the app (`ASAuthorizationAppleIDCredential`).
    package struct Authorization: Sendable {
        package let identityToken: String
        package let authorizationCode: String
        /// The stable user identifier (`sub`).
        package let user: String
        /// Only on the first authorization for this app, and only if asked for.
        package let email: String?
        package let givenName: String?
        package let familyName: String?
    }

    /// The `sub` Apple gives `appleUser` (a name for a simulated Apple ID, e.g. "alice").
    package func subject(of appleUser: String) -> String { Self.account(appleUser, keyID: keyID).sub }

    /// A user (named by `appleUser`, e.g. "alice") signs in to `clientID`. `nonce` is what the app
    /// put in the request (the SHA-256 hex of its raw nonce); Apple copies it into the token.
    /// Name and email come back only on the user's first consent to this app (`firstConsent`), as
    /// with Apple: whether it is the first is the backend's record
    /// (``IdentityToolkit/appleAuthorize(_:)``), so that a fleet remembers it as Apple does.
    package func authorize(clientID: String, appleUser: String, nonce: String?, wantsEmail: Bool = true, wantsName: Bool = true,
                          hideEmail: Bool = false, givenName: String? = nil, familyName: String? = nil,
                          issuedAt: Date? = nil, firstConsent first: Bool) throws -> Authorization {
        let now = issuedAt ?? clock.now
        let account = Self.account(appleUser, keyID: keyID)
        let email = hideEmail ? account.relayEmail : account.realEmail
        let issued = Int(now.timeIntervalSince1970)
        var claims = AppleIdentityTokenClaims(iss: Self.issuer, aud: clientID, sub: account.sub, iat: issued,
                                              exp: issued + Int(Self.tokenLifetime), authTime: issued, nonce: nonce,
                                              cHash: Self.hex(11), nonceSupported: true)
        if wantsEmail {
            claims.email = email
            claims.emailVerified = "true"
            claims.isPrivateEmail = hideEmail ? "true" : "false"
        }
        let token = try sign(claims)
        let code = authorizationCode(sub: account.sub, clientID: clientID)
        return Authorization(identityToken: token, authorizationCode: code, user: account.sub,
                             email: first && wantsEmail ? email : nil,
                             givenName: first && wantsName ? givenName : nil, familyName: first && wantsName ? familyName : nil)
    }

    /// A new account for `appleUser`: its `sub` and relay address drawn from the user's name and
    /// the signing key's ID, so that every node of a fleet (one key) gives one Apple user the same
    /// `sub`, as Apple gives one per developer team, and another key (another team) another.
    private static func account(_ appleUser: String, keyID: String) -> Account {
        let digest = Array(SHA256.hash(data: Data("\(keyID)/\(appleUser)".utf8)))
        let hex = digest.map { String(format: "%02X", $0) }.joined()
        let number = { (offset: Int) in 1000 + (Int(digest[offset]) << 8 | Int(digest[offset + 1])) % 9000 }
        return Account(sub: "00\(number(20)).\(hex.prefix(32)).\(number(22))", realEmail: "\(appleUser)@icloud.example",
                       relayEmail: "\(hex.suffix(10).lowercased())@privaterelay.appleid.com")
    }

    /// `https://appleid.apple.com/auth/keys`.
    package var jwks: JSONWebKeySet { JSONWebKeySet(keys: [JSONWebKey(rs256: key.publicKey, kid: keyID)]) }

    /// Verifies an identity token's RS256 signature as Firebase does with Apple's: the key is the one
    /// the JWKS (`jwks`, as fetched from `https://appleid.apple.com/auth/keys`) lists under the
    /// token's `kid`, rebuilt from its `n` and `e`. Returns the claims, which the caller checks, and
    /// the payload as the token carries it (the answer's `rawUserInfo`).
    package static func verifySignature(_ token: String, jwks: JSONWebKeySet) throws(IdentityToolkitError)
        -> (claims: AppleIdentityTokenClaims, payload: [UInt8]) {
        guard let jws = CompactJWS(token), let headerBytes = Base64URL.decode(jws.header), let claimBytes = Base64URL.decode(jws.payload),
              let signature = Base64URL.decode(jws.signature),
              let header = try? IdentityToolkitJSON.decode(JWTHeader.self, from: headerBytes),
              let claims = try? IdentityToolkitJSON.decode(AppleIdentityTokenClaims.self, from: claimBytes)
        else { throw IdentityToolkitError(.invalidIDPResponse, "The supplied auth credential is malformed or has expired.") }
        guard header.alg == "RS256" else {
            throw IdentityToolkitError(.invalidIDPResponse, "Invalid ID token: alg must be RS256, not \(header.alg)")
        }
        guard let kid = header.kid, let jwk = jwks.key(id: kid), jwk.kty == "RSA",
              let n = jwk.n.flatMap({ Base64URL.decode(Substring($0)) }), let e = jwk.e.flatMap({ Base64URL.decode(Substring($0)) }),
              let publicKey = try? _RSA.Signing.PublicKey(n: n, e: e)
        else {
            throw IdentityToolkitError(.invalidIDPResponse, "Invalid ID token: no RSA key \(header.kid ?? "none") in https://appleid.apple.com/auth/keys")
        }
        let input = Array(jws.signingInput.utf8)
        guard publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5) else {
            throw IdentityToolkitError(.invalidIDPResponse, "Invalid ID token: the signature does not verify")
        }
        return (claims, claimBytes)
    }

    /// An authorization code that says, under a MAC made with a secret drawn from the signing key,
    /// which user granted which app: any node of a fleet (one key) can read it, so `revokeToken`
    /// works on every node, and no node keeps the codes it issued. Whether it was used is the
    /// backend's to record (``IdentityToolkit/revokeToken(_:)``).
    private func authorizationCode(sub: String, clientID: String) -> String {
        let payload = Base64URL.encode(Array("\(sub)|\(clientID)|\(Self.hex(8))".utf8))
        return "c" + mac(payload) + ".0." + payload
    }

    private func mac(_ payload: String) -> String {
        let secret = SymmetricKey(data: SHA256.hash(data: key.derRepresentation))
        return HMAC<SHA256>.authenticationCode(for: Data(payload.utf8), using: secret).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// The user who granted `clientID` the authorization code `code`: what
    /// `https://appleid.apple.com/auth/revoke` checks before the grant ends.
    package func subject(ofCode code: String, clientID: String) throws(IdentityToolkitError) -> String {
        let refused = Self.invalidGrant
        let parts = code.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].hasPrefix("c"), parts[1] == "0", ConstantTime.equals(String(parts[0].dropFirst()), mac(String(parts[2]))),
              let bytes = Base64URL.decode(parts[2])
        else { throw refused }
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: "|", omittingEmptySubsequences: false)
        guard fields.count == 3, fields[1] == clientID else { throw refused }
        return String(fields[0])
    }

    /// What `https://appleid.apple.com/auth/revoke` answers for a code it will not take.
    package static let invalidGrant = IdentityToolkitError(.invalidIDPResponse, "invalid_grant: the authorization code is unknown, revoked, or for another client")

    private func sign(_ claims: AppleIdentityTokenClaims) throws -> String {
        func segment(_ value: some Encodable) throws -> String { Base64URL.encode(try IdentityToolkitJSON.encode(value)) }
        let input = try segment(JWTHeader(alg: "RS256", kid: keyID, typ: nil)) + "." + segment(claims)
        let signature = try key.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    static func hex(_ bytes: Int) -> String {
        (0..<bytes).map { _ in String(format: "%02X", UInt8.random(in: 0...255)) }.joined()
    }
}
