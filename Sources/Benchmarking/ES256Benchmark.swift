import APNsWire
import Utilities
import Crypto
import Foundation

/// ES256 rates, measured as `openssl speed ecdsap256` measures them (sign and verify a 32-byte
/// digest with a P-256 key, one thread), and for whole provider tokens (sign a JWT; verify one
/// with the receiver's strict verifier).
package enum ES256Benchmark {
    package struct Report: Sendable {
        package var signsPerSecond: Double
        package var verifiesPerSecond: Double
        package var tokenSignsPerSecond: Double
        package var tokenVerifiesPerSecond: Double
    }

    package static func run(seconds: Double) throws -> Report {
        let key = P256.Signing.PrivateKey()
        let digest = SHA256.hash(data: Array("authsim".utf8))
        let signature = try key.signature(for: digest)
        let signs = try rate(seconds) { _ = try key.signature(for: digest) }
        let verifies = try rate(seconds) { precondition(key.publicKey.isValidSignature(signature, for: digest)) }

        let keyID = AppleIdentifier.random()
        let teamID = AppleIdentifier.random()
        let signer = try ProviderTokenSigner(key: key, keyID: keyID, teamID: teamID)
        let verifier = ProviderTokenVerifier(keys: [TrustedProviderKey(keyID: keyID, teamID: teamID, publicKey: key.publicKey)])
        let now = Date()
        let token = signer.token(issuedAt: now)
        let tokenSigns = try rate(seconds) { _ = signer.token(issuedAt: now) }
        let tokenVerifies = try rate(seconds) { _ = try verifier.verify(token) }
        return Report(signsPerSecond: signs, verifiesPerSecond: verifies, tokenSignsPerSecond: tokenSigns,
                      tokenVerifiesPerSecond: tokenVerifies)
    }

    /// The best of three runs of ``once(_:_:)`` after a warm-up: on a shared machine (a VM with
    /// CPU steal) single runs vary by a third.
    static func rate(_ seconds: Double, _ body: () throws -> Void) throws -> Double {
        _ = try once(min(0.2, seconds), body)
        return try (0..<3).map { _ in try once(seconds / 3, body) }.max() ?? 0
    }

    /// Calls `body` in batches for about `seconds`; calls per second.
    static func once(_ seconds: Double, _ body: () throws -> Void) throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var count = 0
        while true {
            for _ in 0..<100 { try body() }
            count += 100
            let elapsed = clock.now - start
            let secondsElapsed = elapsed.inSeconds
            if secondsElapsed >= seconds { return Double(count) / secondsElapsed }
        }
    }
}
