/// Makes random version-4 UUID strings (lowercase, canonical), fast.
///
/// Foundation's `UUID()` opens, reads and closes `/dev/urandom` for every UUID on Linux: three
/// system calls per push for `apns-id` alone. These IDs need to be unique, not secret, so a
/// xoshiro256** generator seeded once from the system's random source serves. Not thread-safe:
/// keep one per connection (or per event loop).
public struct RandomIDs: Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    public init() {
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
    public mutating func uuid() -> String {
        var high = next()
        var low = next()
        high = (high & ~0xF000) | 0x4000                      // version 4
        low = (low & ~(0xC000_0000_0000_0000)) | 0x8000_0000_0000_0000  // variant 10
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
        var index = 0
        for (word, positions) in [(high, 0..<16), (low, 16..<32)] {
            for nibble in positions {
                if index == 8 || index == 13 || index == 18 || index == 23 { index += 1 }
                let shift = UInt64(60 - 4 * (nibble - positions.lowerBound))
                out[index] = digits[Int((word >> shift) & 0xF)]
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
