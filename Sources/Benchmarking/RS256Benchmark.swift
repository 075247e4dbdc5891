import AuthBackend
import Crypto
import CryptoExtras
import Foundation
import RS256

/// RS256 rates (2048-bit keys), measured as `openssl speed rsa2048` measures them (sign and verify
/// with PKCS#1 v1.5, one thread), and for whole Firebase ID tokens (claims, base64url, the
/// signature), the backend's cost per sign-in since ID tokens are RS256 (issue 17).
package enum RS256Benchmark {
    package struct Report: Sendable {
        /// libcrypto's signatures (``RS256Signer``), as the backend signs ID tokens.
        package var signsPerSecond: Double
        /// swift-crypto's (BoringSSL's), as it signed them before issue 27.
        package var boringSSLSignsPerSecond: Double
        package var verifiesPerSecond: Double
        package var idTokensPerSecond: Double
    }

    package static func run(seconds: Double) throws -> Report {
        let key = IDTokenSigner.makeKey()
        let digest = SHA256.hash(data: Array("authsim".utf8))
        let signature = try key.signature(for: digest, padding: .insecurePKCS1v1_5)
        let libcrypto = try RS256Signer(privateKeyDER: Array(key.derRepresentation))
        let message = Array(digest)
        let signs = try ES256Benchmark.rate(seconds) { _ = try libcrypto.sign(message) }
        let boringSSLSigns = try ES256Benchmark.rate(seconds) { _ = try key.signature(for: digest, padding: .insecurePKCS1v1_5) }
        let verifies = try ES256Benchmark.rate(seconds) {
            precondition(key.publicKey.isValidSignature(signature, for: digest, padding: .insecurePKCS1v1_5))
        }
        let signer = try IDTokenSigner(projectID: "authsim-demo", key: key)
        let user = BackendUser(localId: "bench-user-0000000000000000", phoneNumber: "+16505550100", createdAt: Date())
        let now = Date()
        let tokens = try ES256Benchmark.rate(seconds) { _ = signer.token(for: user, provider: .phone, now: now) }
        return Report(signsPerSecond: signs, boringSSLSignsPerSecond: boringSSLSigns, verifiesPerSecond: verifies, idTokensPerSecond: tokens)
    }
}
