import Utilities
import Crypto
import Foundation

/// Verifies an ES256 JWT against a JWKS, independently of the backend's signer.
enum P256Check {
    /// - Parameter jwks: the key set as published (JSON), read here with Foundation's parser.
    static func verify(token: String, jwks: Data) throws -> Bool {
        let parts = token.split(separator: ".")
        guard parts.count == 3, let header = try JSONSerialization.jsonObject(with: Data(Base64URL.decode(parts[0])!)) as? [String: Any],
              let keys = (try JSONSerialization.jsonObject(with: jwks) as? [String: Any])?["keys"] as? [[String: Any]],
              let jwk = keys.first(where: { $0["kid"] as? String == header["kid"] as? String }),
              let x = (jwk["x"] as? String).flatMap({ Base64URL.decode(Substring($0)) }),
              let y = (jwk["y"] as? String).flatMap({ Base64URL.decode(Substring($0)) })
        else { return false }
        let key = try P256.Signing.PublicKey(rawRepresentation: x + y)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: Base64URL.decode(parts[2])!)
        return key.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8))
    }
}
