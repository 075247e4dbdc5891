/// Base64url without padding (RFC 7515 §2), as JWTs use it. Written out by hand: going through
/// Foundation's base64 and `replacingOccurrences` cost a tenth of a whole sign-in's CPU.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// Each byte's 6-bit value, or 0xFF outside the url-safe alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
            out.append(alphabet[Int(chunk >> 6 & 63)])
            out.append(alphabet[Int(chunk & 63)])
            index += 3
        }
        switch input.count - index {
        case 1:
            let chunk = UInt32(input[index]) << 16
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
        case 2:
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
            out.append(alphabet[Int(chunk >> 6 & 63)])
        default:
            break
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes base64url. Characters outside the url-safe alphabet are an error; trailing `=` padding
    /// is tolerated only when it is the correct amount.
    public static func decode(_ string: Substring) -> [UInt8]? {
        var body = Array(string.utf8)
        var padding = 0
        while body.last == UInt8(ascii: "=") { body.removeLast(); padding += 1 }
        guard padding <= 2 else { return nil }
        let remainder = body.count % 4
        if remainder == 1 { return nil }
        if padding > 0 && (remainder + padding) % 4 != 0 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(body.count * 3 / 4)
        var chunk: UInt32 = 0
        var filled = 0
        for character in body {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            chunk = chunk << 6 | UInt32(value)
            filled += 1
            if filled == 4 {
                out.append(UInt8(chunk >> 16 & 0xFF))
                out.append(UInt8(chunk >> 8 & 0xFF))
                out.append(UInt8(chunk & 0xFF))
                chunk = 0
                filled = 0
            }
        }
        switch filled {
        case 2: out.append(UInt8(chunk >> 4 & 0xFF))
        case 3:
            out.append(UInt8(chunk >> 10 & 0xFF))
            out.append(UInt8(chunk >> 2 & 0xFF))
        default: break
        }
        return out
    }
}
