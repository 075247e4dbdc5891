import CLibCrypto

/// Cryptographically secure random bytes from OpenSSL's libcrypto (`RAND_bytes`): its DRBG runs
/// per thread in user space and reseeds from the kernel now and then, where the system generator
/// (`SystemRandomNumberGenerator`, and swift-crypto's `SymmetricKey(size:)` on Linux) makes a
/// `getrandom` system call for each request. The backend draws its secrets, receipts, session
/// infos and refresh tokens here, several per sign-in.
package enum SecureRandom {
    /// `count` random bytes.
    package static func bytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Fills `buffer`. Should libcrypto's generator ever fail (it reports an error only when it
    /// cannot be seeded), the bytes come from the system generator instead: slower, as secure.
    package static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        if RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) == 1 { return }
        var system = SystemRandomNumberGenerator()
        for index in buffer.indices { buffer[index] = UInt8.random(in: .min ... .max, using: &system) }
    }
}

/// ``SecureRandom`` as a `RandomNumberGenerator`, for the standard library's unbiased
/// `random(in:using:)`.
package struct SecureRandomGenerator: RandomNumberGenerator {
    package init() {}

    package mutating func next() -> UInt64 {
        var value: UInt64 = 0
        withUnsafeMutableBytes(of: &value) { SecureRandom.fill($0) }
        return value
    }
}
