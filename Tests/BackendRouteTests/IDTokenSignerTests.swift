@testable import AuthBackend
import Crypto
import CryptoExtras
import Foundation
import RS256
import Testing

/// The ID token's RS256 signature by OpenSSL's libcrypto (the `RS256` module): the same bytes as
/// swift-crypto's (PKCS#1 v1.5 is deterministic), verified by swift-crypto's public key, and a key
/// libcrypto cannot read refused with its reason. Firebase's own Admin SDK verifying our tokens is
/// AdminSDKTests'.
@Suite("RS256 ID-token signatures by libcrypto")
struct IDTokenSignerTests {
    @Test("libcrypto's signature is swift-crypto's, byte for byte, and verifies with the published key")
    func sameSignature() throws {
        let key = IDTokenSigner.processKey
        let signer = try IDTokenSigner(projectID: "demo-authsim")
        for length in [0, 1, 55, 64, 700, 5_000] {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let ours = signer.signature(message)
            let theirs = Array(try key.signature(for: message, padding: .insecurePKCS1v1_5).rawRepresentation)
            #expect(ours == theirs, "length \(length)")
            #expect(key.publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: ours), for: message, padding: .insecurePKCS1v1_5))
        }
    }

    @Test("a whole ID token verifies under the signer's kid, and a changed byte does not")
    func token() throws {
        let signer = try IDTokenSigner(projectID: "demo-authsim")
        let now = Date()
        let user = BackendUser(localId: "uid-1", phoneNumber: "+16505550101", createdAt: now)
        let token = signer.token(for: user, provider: .phone, now: now)
        #expect(signer.verifiedUID(token, now: now) == "uid-1")
        var tampered = Array(token.utf8)
        tampered[tampered.count - 5] = tampered[tampered.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(signer.verifiedUID(String(decoding: tampered, as: UTF8.self), now: now) == nil)
    }

    @Test("libcrypto refuses what is not an RSA private key, saying why")
    func refused() throws {
        #expect(throws: RS256Error.self) { try RS256Signer(privateKeyDER: [0x30, 0x03, 0x02, 0x01, 0x00]) }
        let p256 = P256.Signing.PrivateKey()
        let error = #expect(throws: RS256Error.self) { try RS256Signer(privateKeyDER: Array(p256.derRepresentation)) }
        #expect(error?.message == "the key is not an RSA key")
    }

    @Test("user IDs are 28 letters and digits, as the emulator's randomId, each of the 62 drawn about as often")
    func randomIDs() throws {
        var core = try BackendCore(configuration: BackendConfiguration())
        var counts: [Character: Int] = [:]
        for _ in 0..<2_000 {
            let id = try core.handle(now: Date()) { core in core.randomID(length: 28) }.answer.get()
            #expect(id.count == 28 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
            for character in id { counts[character, default: 0] += 1 }
        }
        // 56,000 draws: about 903 each; a biased modulo (256 % 62) would give the first 8 about 1,053.
        #expect(counts.count == 62)
        #expect(counts.values.allSatisfy { (750...1_060).contains($0) }, "\(counts.sorted { $0.key < $1.key })")
    }
}
