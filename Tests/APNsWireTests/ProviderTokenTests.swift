import APNsWire
import Utilities
import Crypto
import Foundation
import Testing

/// Builds a JWT by hand, so tests can make tokens our signer never would.
func handMadeToken(header: String, claims: String, key: P256.Signing.PrivateKey?, der: Bool = false) -> String {
    let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
    guard let key else { return input + "." }
    let signature = try! key.signature(for: Array(input.utf8))
    return input + "." + Base64URL.encode(Array(der ? signature.derRepresentation : signature.rawRepresentation))
}

@Suite("Provider tokens (ES256 JWT)")
struct ProviderTokenTests {
    let key = P256.Signing.PrivateKey()
    let keyID = "ABC123DEFG"
    let teamID = "DEF123GHIJ"
    var verifier: ProviderTokenVerifier {
        ProviderTokenVerifier(keys: [TrustedProviderKey(keyID: keyID, teamID: teamID, publicKey: key.publicKey)])
    }

    @Test("a token our signer makes verifies, with the claims it was given")
    func roundTrip() throws {
        let signer = try ProviderTokenSigner(key: key, keyID: keyID, teamID: teamID)
        let token = signer.token(issuedAt: Date(timeIntervalSince1970: 1_700_000_000))
        let (verified, trusted) = try verifier.verify(token)
        #expect(verified.keyID == keyID)
        #expect(verified.teamID == teamID)
        #expect(verified.issuedAt == 1_700_000_000)
        #expect(!verified.signatureWasDER)
        #expect(trusted.teamID == teamID)
        // The header and claims are exactly Apple's shape.
        let parts = token.split(separator: ".")
        #expect(String(decoding: Base64URL.decode(parts[0])!, as: UTF8.self) == #"{"alg":"ES256","kid":"ABC123DEFG"}"#)
        #expect(String(decoding: Base64URL.decode(parts[1])!, as: UTF8.self) == #"{"iss":"DEF123GHIJ","iat":1700000000}"#)
        #expect(Base64URL.decode(parts[2])!.count == 64)
    }

    @Test("a DER signature and an iat given as a string are accepted, as APNs accepts them")
    func lenientLikeApple() throws {
        let token = handMadeToken(header: #"{"alg":"ES256","kid":"ABC123DEFG"}"#,
                                  claims: #"{"iss":"DEF123GHIJ","iat":"1700000000","extra":true}"#, key: key, der: true)
        let (verified, _) = try verifier.verify(token)
        #expect(verified.signatureWasDER)
        #expect(verified.issuedAt == 1_700_000_000)
    }

    static let hostile: [(String, String, String, ProviderTokenError.Code)] = [
        ("alg none", #"{"alg":"none","kid":"ABC123DEFG"}"#, #"{"iss":"DEF123GHIJ","iat":1}"#, .unsupportedAlgorithm),
        ("ES384", #"{"alg":"ES384","kid":"ABC123DEFG"}"#, #"{"iss":"DEF123GHIJ","iat":1}"#, .unsupportedAlgorithm),
        ("RS256", #"{"alg":"RS256","kid":"ABC123DEFG"}"#, #"{"iss":"DEF123GHIJ","iat":1}"#, .unsupportedAlgorithm),
        ("lowercase es256", #"{"alg":"es256","kid":"ABC123DEFG"}"#, #"{"iss":"DEF123GHIJ","iat":1}"#, .unsupportedAlgorithm),
        ("no kid", #"{"alg":"ES256"}"#, #"{"iss":"DEF123GHIJ","iat":1}"#, .missingKeyID),
        ("unknown kid", #"{"alg":"ES256","kid":"ZZZZZZZZZZ"}"#, #"{"iss":"DEF123GHIJ","iat":1}"#, .unknownKeyID),
        ("path-like kid", #"{"alg":"ES256","kid":"../../etc/passwd"}"#, #"{"iss":"DEF123GHIJ","iat":1}"#, .unknownKeyID),
        ("another team's iss", #"{"alg":"ES256","kid":"ABC123DEFG"}"#, #"{"iss":"OTHERTEAM1","iat":1}"#, .issuerMismatch),
        ("no iss", #"{"alg":"ES256","kid":"ABC123DEFG"}"#, #"{"iat":1}"#, .missingIssuer),
        ("no iat", #"{"alg":"ES256","kid":"ABC123DEFG"}"#, #"{"iss":"DEF123GHIJ"}"#, .missingIssuedAt),
        ("boolean iat", #"{"alg":"ES256","kid":"ABC123DEFG"}"#, #"{"iss":"DEF123GHIJ","iat":true}"#, .missingIssuedAt),
        ("word iat", #"{"alg":"ES256","kid":"ABC123DEFG"}"#, #"{"iss":"DEF123GHIJ","iat":"yesterday"}"#, .missingIssuedAt),
        ("header not JSON", "not json", #"{"iss":"DEF123GHIJ","iat":1}"#, .malformed),
    ]

    @Test("hostile tokens are refused with a specific code", arguments: hostile)
    func hostileTokens(name: String, header: String, claims: String, code: ProviderTokenError.Code) {
        let token = handMadeToken(header: header, claims: claims, key: key)
        #expect(throws: ProviderTokenError(code, "")) { try verifier.verify(token) }
    }

    @Test("HS256 signed with the public key as the HMAC secret is refused (no algorithm confusion)")
    func hmacConfusion() {
        let input = Base64URL.encode(Array(#"{"alg":"HS256","kid":"ABC123DEFG"}"#.utf8)) + "."
            + Base64URL.encode(Array(#"{"iss":"DEF123GHIJ","iat":1}"#.utf8))
        let secret = SymmetricKey(data: Array(key.publicKey.pemRepresentation.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: secret)
        let token = input + "." + Base64URL.encode(Array(mac))
        #expect(throws: ProviderTokenError(.unsupportedAlgorithm, "")) { try verifier.verify(token) }
    }

    @Test("a token signed by another key, or with altered claims, fails its signature check")
    func badSignatures() throws {
        let other = handMadeToken(header: #"{"alg":"ES256","kid":"ABC123DEFG"}"#,
                                  claims: #"{"iss":"DEF123GHIJ","iat":1}"#, key: P256.Signing.PrivateKey())
        #expect(throws: ProviderTokenError(.badSignature, "")) { try verifier.verify(other) }
        let good = try ProviderTokenSigner(key: key, keyID: keyID, teamID: teamID).token(issuedAt: Date())
        var parts = good.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Array(#"{"iss":"DEF123GHIJ","iat":9}"#.utf8))
        #expect(throws: ProviderTokenError(.badSignature, "")) { try verifier.verify(parts.joined(separator: ".")) }
        parts[2] = "AAAA"
        #expect(throws: ProviderTokenError(.badSignature, "")) { try verifier.verify(parts.joined(separator: ".")) }
    }

    @Test("structurally broken tokens are malformed, oversized ones refused before parsing")
    func structure() {
        #expect(throws: ProviderTokenError(.malformed, "")) { try verifier.verify("a.b") }
        #expect(throws: ProviderTokenError(.malformed, "")) { try verifier.verify("a.b.c.d") }
        #expect(throws: ProviderTokenError(.malformed, "")) { try verifier.verify("!!!.e30.e30") }
        #expect(throws: ProviderTokenError(.tooLong, "")) {
            try verifier.verify(String(repeating: "a", count: ProviderTokenVerifier.maximumLength + 1))
        }
    }

    @Test("the signer refuses identifiers that are not 10 uppercase letters or digits")
    func identifiers() {
        #expect(throws: ProviderTokenError(.malformed, "")) { try ProviderTokenSigner(key: key, keyID: "abc", teamID: teamID) }
        #expect(throws: ProviderTokenError(.malformed, "")) { try ProviderTokenSigner(key: key, keyID: keyID, teamID: "def123ghij") }
        #expect(AppleIdentifier.isValid(AppleIdentifier.random()))
    }
}
