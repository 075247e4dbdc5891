import IdentityToolkitAPI
import Utilities
import Crypto
import CryptoExtras
import Foundation
import RS256
import X509

/// Mints Firebase ID tokens as the service does: RS256 with a 2048-bit key named by `kid`, the
/// claim set Firebase writes (``FirebaseIDTokenClaims``), and the public key published where
/// Google publishes its own: as X.509 certificates (`…/robot/v1/metadata/x509/securetoken@…`, what
/// the Admin SDKs fetch) and as a JWKS (`…/service_accounts/v1/jwk/securetoken@…`). A JWT library
/// pointed at those verifies our tokens as it verifies Google's.
package struct IDTokenSigner: Sendable {
    package let projectID: String
    package let keyID: String
    private let key: _RSA.Signing.PrivateKey
    /// The same key in OpenSSL's libcrypto, which signs it at 2.3× BoringSSL's rate here.
    private let signer: RS256Signer
    /// The token header's segment: the same for every token this signer makes.
    private let headerSegment: String
    /// A self-signed certificate of the public key, PEM, as Google's x509 endpoint serves them.
    package let certificatePEM: String
    /// Refresh tokens' seal, derived from the same key (``RefreshTokenSeal``).
    let refreshTokens: RefreshTokenSeal

    /// - Parameter key: the signing key; by default one shared by every memory-only backend of
    ///   this process (a 2048-bit RSA key takes a while to make).
    package init(projectID: String, key: _RSA.Signing.PrivateKey = IDTokenSigner.processKey) throws {
        self.projectID = projectID
        self.key = key
        refreshTokens = RefreshTokenSeal(signingKeyDER: Array(key.derRepresentation))
        do { signer = try RS256Signer(privateKeyDER: Array(key.derRepresentation)) } catch {
            throw IDTokenSignerError(message: "libcrypto does not take the ID-token key: \(error)")
        }
        let keyID = Hex.encode(SHA256.hash(data: Array(key.publicKey.derRepresentation))).prefix(40).lowercased()
        self.keyID = String(keyID)
        headerSegment = Base64URL.encode((try? IdentityToolkitJSON.encode(JWTHeader(alg: "RS256", kid: self.keyID))) ?? [])
        certificatePEM = try Self.certificate(for: key)
    }

    /// The key memory-only backends of this process sign with.
    package static let processKey: _RSA.Signing.PrivateKey = makeKey()

    package static func makeKey() -> _RSA.Signing.PrivateKey {
        // 2048 bits is a size BoringSSL always makes.
        try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    }

    package var publicKey: _RSA.Signing.PublicKey { key.publicKey }

    /// An ID token for `user`, signed in with `provider` (`phone`, `apple.com`, `custom`) at
    /// `authTime` (the sign-in; a refresh keeps it), with the second factor `secondFactor` (an
    /// enrollment ID) when one completed the sign-in, and the user's custom claims plus
    /// `extraClaims` (a custom token's).
    package func token(for user: BackendUser, provider: ProviderID, secondFactor: String? = nil, authTime: Date? = nil,
                      extraClaims: [String: JSONValue] = [:], now: Date) -> String {
        var identities: [String: [String]] = [:]
        if let phone = user.phoneNumber { identities[ProviderID.phone.rawValue] = [phone] }
        if let sub = user.appleSub { identities[ProviderID.apple.rawValue] = [sub] }
        if let email = user.email { identities["email"] = [email] }
        for other in user.otherProviders ?? [] {
            if let rawId = other.rawId { identities[other.providerId.rawValue, default: []].append(rawId) }
        }
        var custom = user.customClaims
        custom.merge(extraClaims) { _, extra in extra }
        let claims = FirebaseIDTokenClaims(projectID: projectID, uid: user.localId, issuedAt: Int(now.timeIntervalSince1970),
                                           authTime: authTime.map { Int($0.timeIntervalSince1970) },
                                           phoneNumber: user.phoneNumber, email: user.email,
                                           emailVerified: user.email == nil ? nil : (user.emailVerified ?? true), name: user.displayName,
                                           picture: user.photoUrl, customClaims: custom,
                                           firebase: .init(identities: identities, signInProvider: provider,
                                                           signInSecondFactor: secondFactor.map { id in
                                                               user.mfaEnrollments?.first { $0.id == id }?.isTOTP == true ? .totp : .phone
                                                           },
                                                           secondFactorIdentifier: secondFactor, tenant: user.tenantId))
        // Strings, numbers and dictionaries of them always encode.
        let input = headerSegment + "." + Base64URL.encode((try? IdentityToolkitJSON.encode(claims)) ?? [])
        return input + "." + Base64URL.encode(signature(Array(input.utf8)))
    }

    /// RS256 over `message`. PKCS#1 v1.5 signatures are deterministic: libcrypto's and
    /// swift-crypto's are the same bytes (IDTokenSignerTests), so should libcrypto ever fail on a
    /// key it took, swift-crypto signs instead and the token is the same.
    func signature(_ message: [UInt8]) -> [UInt8] {
        if let bytes = try? signer.sign(message) { return bytes }
        // The key is an RSA key swift-crypto made or read, which it signs with PKCS#1 v1.5; were
        // both to fail, the token's signature would be empty and every verifier would refuse it.
        return (try? Array(key.signature(for: message, padding: .insecurePKCS1v1_5).rawRepresentation)) ?? []
    }

    /// The user ID in one of this signer's tokens, if it is valid at `now`.
    package func verifiedUID(_ token: String, now: Date) -> String? { verifiedClaims(token, now: now)?.sub }

    /// The claims of one of this signer's tokens, if it is valid at `now`: RS256 under our `kid`
    /// only (no `none`, no other algorithm), our project, not expired.
    package func verifiedClaims(_ token: String, now: Date) -> FirebaseIDTokenClaims? {
        guard let jws = CompactJWS(token), jws.header == headerSegment[...] || headerMatches(jws.header),
              let claimBytes = Base64URL.decode(jws.payload), let signatureBytes = Base64URL.decode(jws.signature),
              key.publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signatureBytes),
                                             for: Array(jws.signingInput.utf8), padding: .insecurePKCS1v1_5),
              let claims = try? IdentityToolkitJSON.decode(FirebaseIDTokenClaims.self, from: claimBytes),
              claims.aud == projectID, Double(claims.exp) > now.timeIntervalSince1970
        else { return nil }
        return claims
    }

    /// A header written by another encoder (keys in another order) with the same algorithm and key.
    private func headerMatches(_ segment: Substring) -> Bool {
        guard let bytes = Base64URL.decode(segment), let header = try? IdentityToolkitJSON.decode(JWTHeader.self, from: bytes) else { return false }
        return header.alg == "RS256" && header.kid == keyID
    }

    /// The JWKS (`…/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com`).
    package var jwks: JSONWebKeySet { JSONWebKeySet(keys: [JSONWebKey(rs256: key.publicKey, kid: keyID)]) }

    /// `{kid: certificate PEM}` (`…/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com`).
    package var x509Certificates: [String: String] { [keyID: certificatePEM] }

    /// A self-signed certificate of `key` (as Google's are: `CN=securetoken.system.gserviceaccount.com`),
    /// valid from a day before now for a year.
    static func certificate(for key: _RSA.Signing.PrivateKey) throws -> String {
        let name = try DistinguishedName { CommonName("securetoken.system.gserviceaccount.com") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-86_400), notValidAfter: now.addingTimeInterval(365 * 86_400),
            issuer: name, subject: name, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.clientAuth])
            },
            issuerPrivateKey: .init(key))
        return try certificate.serializeAsPEM().pemString
    }
}

extension JSONWebKey {
    /// An RS256 public key as a JWK (`kty` RSA, `n` and `e` base64url), as Google and Apple publish theirs.
    init(rs256 key: _RSA.Signing.PublicKey, kid: String) {
        let primitives = try? key.getKeyPrimitives()
        self.init(kty: "RSA", kid: kid, alg: "RS256", use: "sig", n: Base64URL.encode(Array(primitives?.modulus ?? Data())),
                  e: Base64URL.encode(Array(primitives?.publicExponent ?? Data())))
    }
}

extension JSONWebKeySet {
    /// Where Google publishes the ID-token keys as a JWKS today, emulator-style:
    /// `https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com`.
    package static let firebaseIDTokenJWKPath = "/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"
    /// …and as X.509 certificates by key ID (what the Admin SDKs fetch):
    /// `https://www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com`.
    package static let firebaseIDTokenX509Path = "/www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"
}

/// Why an ID-token signer could not be made.
package struct IDTokenSignerError: Error, Sendable, CustomStringConvertible {
    package let message: String
    package var description: String { message }
}
