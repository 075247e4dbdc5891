/// Makes random version-4 UUID strings (lowercase, canonical), fast.
///
/// Foundation's `UUID()` opens, reads and closes `/dev/urandom` for every UUID on Linux: three
/// system calls per push for `apns-id` alone. These IDs need to be unique, not secret, so a
/// xoshiro256** generator seeded once from the system's random source serves. Not thread-safe:
/// keep one per connection (or per event loop).
package struct RandomIDs: Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    package init() {
        var system = SystemRandomNumberGenerator()
        state = (system.next(), system.next(), system.next(), system.next())
        if state == (0, 0, 0, 0) { state.0 = 0x9E37_79B9_7F4A_7C15 }
    }

    private mutating func next() -> UInt64 {
        let result = rotate(state.1 &* 5, 7) &* 9
        let t = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= t
        state.3 = rotate(state.3, 45)
        return result
    }

    private func rotate(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    /// A new random UUID, `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`, lowercase.
    package mutating func uuid() -> String {
        var high = next()
        var low = next()
        high = (high & ~0xF000) | 0x4000                      // version 4
        low = (low & ~(0xC000_0000_0000_0000)) | 0x8000_0000_0000_0000  // variant 10
        return String(unsafeUninitializedCapacity: 36) { out in
            var index = 0
            func digits(of word: UInt64, first: Int) {
                for nibble in 0..<16 {
                    let position = first + nibble
                    if position == 8 || position == 12 || position == 16 || position == 20 {
                        out[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    let value = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * nibble)) & 0xF
                    out[index] = value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
                    index += 1
                }
            }
            digits(of: high, first: 0)
            digits(of: low, first: 16)
            return 36
        }
    }
}
