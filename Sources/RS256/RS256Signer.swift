import CLibCrypto

/// RS256 (RSASSA-PKCS1-v1_5 with SHA-256) signatures by OpenSSL's libcrypto, for the backend's
/// ID tokens. The key is read once into an `EVP_PKEY`, which keeps its Montgomery and CRT values
/// from the first signature on; each signature is then one `EVP_DigestSign`. OpenSSL 3 signs
/// RSA-2048 with its AVX-512 IFMA code where the CPU has it, which BoringSSL (swift-crypto's
/// `_RSA`) does not: on this machine 4,000 signatures a second against 1,740 (Benchmarks/run.sh
/// rs256). Signing is thread-safe: OpenSSL 3 allows concurrent read-only use of an `EVP_PKEY`.
package final class RS256Signer: @unchecked Sendable {
    // @unchecked: `key` is set once in init and only read after (OpenSSL's concurrent read-only
    // use of a key); it is freed in deinit, when no one can sign with it any more.
    private let key: OpaquePointer
    /// The modulus's size in bytes: a signature's length.
    package let signatureLength: Int

    /// - Parameter der: the private key, DER: PKCS#1 `RSAPrivateKey` (swift-crypto's
    ///   `derRepresentation`) or PKCS#8.
    /// - Throws: ``RS256Error`` when libcrypto does not read it as an RSA key.
    package init(privateKeyDER der: [UInt8]) throws(RS256Error) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw RS256Error("libcrypto does not read the key: \(Self.lastError())") }
        guard EVP_PKEY_get_base_id(parsed) == EVP_PKEY_RSA else {
            EVP_PKEY_free(parsed)
            throw RS256Error("the key is not an RSA key")
        }
        key = parsed
        signatureLength = Int(EVP_PKEY_get_size(parsed))
    }

    deinit { EVP_PKEY_free(key) }

    /// The signature of `message` (SHA-256, PKCS#1 v1.5 padding).
    package func sign(_ message: [UInt8]) throws(RS256Error) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw RS256Error("libcrypto cannot make a digest context") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            throw RS256Error("EVP_DigestSignInit: \(Self.lastError())")
        }
        var signature = [UInt8](repeating: 0, count: signatureLength)
        var length = signature.count
        let status = message.withUnsafeBufferPointer { input in
            signature.withUnsafeMutableBufferPointer { output in
                EVP_DigestSign(context, output.baseAddress, &length, input.baseAddress, input.count)
            }
        }
        guard status == 1 else { throw RS256Error("EVP_DigestSign: \(Self.lastError())") }
        if length < signature.count { signature.removeLast(signature.count - length) }
        return signature
    }

    /// libcrypto's oldest queued error, as text (and the queue emptied).
    static func lastError() -> String {
        let code = ERR_get_error()
        defer { ERR_clear_error() }
        guard code != 0 else { return "no error queued" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Why libcrypto could not read a key or sign.
package struct RS256Error: Error, Sendable, CustomStringConvertible {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
