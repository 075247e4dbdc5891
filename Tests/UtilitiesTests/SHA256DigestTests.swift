import Crypto
import Testing
import Utilities

/// The app side's SHA-256 (Sign in with Apple's nonce, a web flow's session ID) against FIPS
/// 180-4's examples and swift-crypto's on every length across the padding's block edges.
@Suite struct SHA256DigestTests {
    @Test("FIPS 180-4's examples: empty, abc, the two-block message, a million a's")
    func examples() {
        #expect(Hex.encode(SHA256Digest.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Hex.encode(SHA256Digest.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Hex.encode(SHA256Digest.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(Hex.encode(SHA256Digest.hash([UInt8](repeating: 0x61, count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("the same digest as swift-crypto for every length from 0 to 300 bytes")
    func againstSwiftCrypto() {
        var generator = SplitMix(seed: 7)
        for length in 0...300 {
            let message = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            #expect(SHA256Digest.hash(message) == Array(SHA256.hash(data: message)), "length \(length)")
        }
    }
}
