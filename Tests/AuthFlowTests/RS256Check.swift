import Utilities
import Crypto
import CryptoExtras
import Foundation

/// Verifies an RS256 JWT against a JWKS, independently of the backend's signer.
enum RS256Check {
    /// Verifies an ID token as a JWT library does with Google's published keys: the header's
    /// `alg` must be RS256 and its `kid` a key of `jwks` (RSA `n` and `e`).
    /// - Parameter jwks: the key set as published (JSON), read here with Foundation's parser.
    static func verify(token: String, jwks: Data) throws -> Bool {
        let parts = token.split(separator: ".")
        guard parts.count == 3, let header = try JSONSerialization.jsonObject(with: Data(Base64URL.decode(parts[0])!)) as? [String: Any],
              header["alg"] as? String == "RS256",
              let keys = (try JSONSerialization.jsonObject(with: jwks) as? [String: Any])?["keys"] as? [[String: Any]],
              let jwk = keys.first(where: { $0["kid"] as? String == header["kid"] as? String }), jwk["kty"] as? String == "RSA",
              let n = (jwk["n"] as? String).flatMap({ Base64URL.decode(Substring($0)) }),
              let e = (jwk["e"] as? String).flatMap({ Base64URL.decode(Substring($0)) })
        else { return false }
        let key = try _RSA.Signing.PublicKey(n: n, e: e)
        let signature = _RSA.Signing.RSASignature(rawRepresentation: Base64URL.decode(parts[2])!)
        return key.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8), padding: .insecurePKCS1v1_5)
    }
}
