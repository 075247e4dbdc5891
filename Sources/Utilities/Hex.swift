/// Hex digits for bytes: device tokens, digests, nonces.
package enum Hex {
    /// The value of one hex digit (`0`–`9`, `a`–`f`, `A`–`F`); nil for any other byte.
    @inlinable
    package static func digitValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    /// The bytes of an even number of hex digits; nil for anything else.
    package static func decode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = digitValue(digits[index]), let low = digitValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// Two digits per byte, lowercase unless `uppercase`: one allocation (the string's), whatever
    /// the sequence (a digest's iterator allocated per byte when read one byte at a time).
    package static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        if let text = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0, uppercase: uppercase) }) { return text }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0, uppercase: uppercase) }
    }

    private static func encode(buffer: UnsafeBufferPointer<UInt8>, uppercase: Bool) -> String {
        let letters = uppercase ? UInt8(ascii: "A") - 10 : UInt8(ascii: "a") - 10
        return String(unsafeUninitializedCapacity: buffer.count * 2) { out in
            for (index, byte) in buffer.enumerated() {
                let high = byte >> 4, low = byte & 0x0F
                out[2 * index] = high < 10 ? UInt8(ascii: "0") + high : letters + high
                out[2 * index + 1] = low < 10 ? UInt8(ascii: "0") + low : letters + low
            }
            return buffer.count * 2
        }
    }
}

extension Duration {
    /// The duration in seconds, fractions included.
    package var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
