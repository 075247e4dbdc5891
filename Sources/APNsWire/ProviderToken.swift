import Utilities
import Crypto
import Foundation

/// A 10-character Apple identifier (key ID or team ID): uppercase letters and digits.
package enum AppleIdentifier {
    package static func isValid(_ value: String) -> Bool {
        value.utf8.count == 10 && value.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) }
    }

    /// A random identifier in Apple's format.
    package static func random() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<10).map { _ in alphabet.randomElement()! })
    }
}

/// Signs APNs provider tokens: `{"alg":"ES256","kid":KEYID}` . `{"iss":TEAMID,"iat":SECONDS}`,
/// signed with the P-256 key of an `AuthKey_KEYID.p8`, signature raw r‖s, base64url.
///
/// ```swift
/// let signer = try ProviderTokenSigner(key: key, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
/// let jwt = signer.token(issuedAt: Date())
/// ```
package struct ProviderTokenSigner: Sendable {
    package let keyID: String
    package let teamID: String
    private let key: P256.Signing.PrivateKey

    /// - Throws: ``ProviderTokenError`` when the key ID or team ID is not 10 uppercase letters or digits.
    package init(key: P256.Signing.PrivateKey, keyID: String, teamID: String) throws(ProviderTokenError) {
        guard AppleIdentifier.isValid(keyID) else {
            throw ProviderTokenError(.malformed, "key ID \"\(keyID)\" is not 10 uppercase letters or digits")
        }
        guard AppleIdentifier.isValid(teamID) else {
            throw ProviderTokenError(.malformed, "team ID \"\(teamID)\" is not 10 uppercase letters or digits")
        }
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
    }

    /// A token issued at `issuedAt` (whole seconds, as a JSON number).
    package func token(issuedAt: Date) -> String {
        let header = "{\"alg\":\"ES256\",\"kid\":\"\(keyID)\"}"
        let claims = "{\"iss\":\"\(teamID)\",\"iat\":\(Int64(issuedAt.timeIntervalSince1970.rounded(.down)))}"
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        // P-256 signing only fails on a broken platform RNG; there is nothing a caller could do about it.
        let signature = try! key.signature(for: Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }
}

/// A provider token that parsed and whose signature checked out.
package struct VerifiedProviderToken: Sendable, Hashable {
    package let keyID: String
    package let teamID: String
    /// `iat`, seconds since the epoch.
    package let issuedAt: Int64
    /// The signature was DER rather than raw r‖s (APNs accepts both).
    package let signatureWasDER: Bool
}

/// Why a provider token was refused. ``reason`` is what APNs answers; ``message`` says exactly what
/// was wrong, for logs and for `authsim explain`.
package struct ProviderTokenError: CodedError {
    package enum Code: String, Sendable, Hashable, Codable {
        case malformed, unsupportedAlgorithm, missingKeyID, unknownKeyID, missingIssuer, issuerMismatch
        case missingIssuedAt, badSignature, tooLong
    }
    package let code: Code
    package let message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    /// Every token error is `InvalidProviderToken` on the wire.
    package var reason: APNsReason { .invalidProviderToken }
    package var description: String { "\(reason): \(message)" }
}

/// A key APNs trusts: the public half of an `AuthKey_KEYID.p8` and the team it belongs to.
package struct TrustedProviderKey: Sendable {
    package let keyID: String
    package let teamID: String
    package let publicKey: P256.Signing.PublicKey
    /// The environments the key may push to (Apple lets keys be limited since 2025); `nil`: both.
    package let environments: Set<APNsEnvironment>?
    /// Bundle IDs the key may push to; `nil`: any topic of its team.
    package let topics: Set<String>?

    package init(keyID: String, teamID: String, publicKey: P256.Signing.PublicKey,
                environments: Set<APNsEnvironment>? = nil, topics: Set<String>? = nil) {
        self.keyID = keyID
        self.teamID = teamID
        self.publicKey = publicKey
        self.environments = environments
        self.topics = topics
    }
}

/// Parses and verifies provider tokens strictly: ES256 only (no `none`, no HS*/RS*/other curves),
/// a known `kid`, `iss` equal to that key's team, a valid P-256 signature raw or DER, and a numeric
/// `iat` (a JSON number or a string of digits, as APNSwift sends). Age is checked by the caller,
/// who owns the clock.
package struct ProviderTokenVerifier: Sendable {
    /// Longer tokens are refused before any parsing (a real one is about 200 bytes).
    package static let maximumLength = 2048

    private let keys: [String: TrustedProviderKey]

    package init(keys: [TrustedProviderKey]) {
        var byID: [String: TrustedProviderKey] = [:]
        for key in keys { byID[key.keyID] = key }
        self.keys = byID
    }

    package func key(id: String) -> TrustedProviderKey? { keys[id] }
    package var trustedKeys: [TrustedProviderKey] { keys.values.sorted { $0.keyID < $1.keyID } }

    package func verify(_ token: String) throws(ProviderTokenError) -> (VerifiedProviderToken, TrustedProviderKey) {
        guard token.utf8.count <= Self.maximumLength else {
            throw ProviderTokenError(.tooLong, "token is \(token.utf8.count) bytes, more than \(Self.maximumLength)")
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw ProviderTokenError(.malformed, "a JWT has 3 dot-separated parts, this has \(parts.count)")
        }
        guard let headerBytes = Base64URL.decode(parts[0]),
              let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes))
        else { throw ProviderTokenError(.malformed, "the header is not base64url-encoded JSON with a string \"alg\"") }
        guard header.alg == "ES256" else {
            throw ProviderTokenError(.unsupportedAlgorithm, "alg is \"\(header.alg)\"; APNs accepts only ES256")
        }
        guard let keyID = header.kid, !keyID.isEmpty else {
            throw ProviderTokenError(.missingKeyID, "the header has no \"kid\"")
        }
        guard let key = keys[keyID] else {
            throw ProviderTokenError(.unknownKeyID, "kid \"\(Self.printable(keyID))\" is not a key this server trusts")
        }
        guard let claimBytes = Base64URL.decode(parts[1]),
              let claims = try? JSONDecoder().decode(Claims.self, from: Data(claimBytes))
        else { throw ProviderTokenError(.malformed, "the claims are not base64url-encoded JSON") }
        guard let issuer = claims.iss else { throw ProviderTokenError(.missingIssuer, "the claims have no \"iss\"") }
        guard issuer == key.teamID else {
            throw ProviderTokenError(
                .issuerMismatch,
                "iss \"\(Self.printable(issuer))\" is not team \(key.teamID), which key \(keyID) belongs to")
        }
        guard let issuedAt = claims.iat?.seconds else {
            throw ProviderTokenError(.missingIssuedAt, "the claims have no numeric \"iat\"")
        }
        guard let signatureBytes = Base64URL.decode(parts[2]) else {
            throw ProviderTokenError(.malformed, "the signature is not base64url")
        }
        let signature: P256.Signing.ECDSASignature
        let wasDER: Bool
        if signatureBytes.count == 64, let raw = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes) {
            signature = raw
            wasDER = false
        } else if let der = try? P256.Signing.ECDSASignature(derRepresentation: signatureBytes) {
            signature = der
            wasDER = true
        } else {
            throw ProviderTokenError(.badSignature, "the signature is neither 64 raw bytes nor DER")
        }
        let signingInput = token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)
        guard key.publicKey.isValidSignature(signature, for: Array(signingInput)) else {
            throw ProviderTokenError(.badSignature, "the ES256 signature does not verify with key \(keyID)")
        }
        return (VerifiedProviderToken(keyID: keyID, teamID: issuer, issuedAt: issuedAt, signatureWasDER: wasDER), key)
    }

    private struct Header: Decodable {
        let alg: String
        let kid: String?
    }

    private struct Claims: Decodable {
        let iss: String?
        let iat: IssuedAt?
    }

    /// `iat` as a JSON integer or a string of digits.
    private struct IssuedAt: Decodable {
        let seconds: Int64?
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int64.self) {
                seconds = number
            } else if let string = try? container.decode(String.self), !string.isEmpty,
                      string.utf8.count <= 18, string.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                seconds = Int64(string)
            } else if let double = try? container.decode(Double.self), double.rounded() == double,
                      abs(double) < 1e15 {
                seconds = Int64(double)
            } else {
                seconds = nil
            }
        }
    }

    /// A value from a token quoted in a message: at most 40 printable ASCII characters.
    private static func printable(_ value: String) -> String {
        let cleaned = String(value.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }.prefix(40))
        return value.unicodeScalars.count > 40 ? cleaned + "…" : cleaned
    }
}
