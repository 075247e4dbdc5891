import Utilities
/// A device token as it travels in the request path: an even number of hex digits.
///
/// Apple says not to assume a length: 32-byte tokens are common, 80-byte simulator tokens and
/// others exist. The canonical form is lowercase hex.
package struct DeviceToken: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Lowercase hex.
    package let hex: String

    /// Parses a hex token (either case). Returns `nil` for an empty string, an odd length, a
    /// non-hex character, or more than ``maximumHexLength`` digits.
    package init?(hex: String) {
        let utf8 = hex.utf8
        guard !utf8.isEmpty, utf8.count % 2 == 0, utf8.count <= Self.maximumHexLength else { return nil }
        // One pass over the bytes; a token already in lowercase (as providers send it) is kept
        // as it is, without a copy (this runs for every push the receiver checks).
        var hasUppercase = false
        for c in utf8 {
            switch c {
            case 0x30...0x39, 0x61...0x66: continue
            case 0x41...0x46: hasUppercase = true
            default: return nil
            }
        }
        self.hex = hasUppercase ? hex.lowercased() : hex
    }

    /// Makes a token from raw bytes, as an app receives it in
    /// `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`.
    package init(bytes: some Sequence<UInt8>) {
        self.hex = Hex.encode(bytes)
    }

    /// The token's bytes.
    package var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(hex.utf8.count / 2)
        var high: UInt8 = 0
        for (index, char) in hex.utf8.enumerated() {
            let value = Self.nibble(char)
            if index % 2 == 0 { high = value } else { out.append(high << 4 | value) }
        }
        return out
    }

    /// The first 8 hex digits followed by an ellipsis, for logs and timelines.
    package var short: String { String(hex.prefix(8)).uppercased() + "…" }

    package var description: String { hex }

    /// Tokens longer than this are refused outright (Apple's longest seen are 160 hex digits).
    package static let maximumHexLength = 400

    /// A random 32-byte token, as a real device would be issued: eight bytes per draw from the
    /// system generator (a byte per draw made 32 getrandom calls per simulated device).
    package static func random(byteCount: Int = 32) -> DeviceToken {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount)
        while bytes.count < byteCount {
            withUnsafeBytes(of: generator.next()) { bytes.append(contentsOf: $0.prefix(byteCount - bytes.count)) }
        }
        return DeviceToken(bytes: bytes)
    }

    private static func nibble(_ c: UInt8) -> UInt8 {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        default: return c - 0x61 + 10
        }
    }
}

extension DeviceToken {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let token = DeviceToken(hex: string) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not an even-length hex device token: \(string)")
        }
        self = token
    }
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}
