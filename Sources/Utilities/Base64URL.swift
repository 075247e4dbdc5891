import Foundation

/// Base64url without padding (RFC 7515 §2), as JWTs use it: Foundation's base64 with the url-safe
/// alphabet, and the rules a JWT's parts are held to here. No package of its own: the app side
/// builds this too, and a JWT's parts are a few hundred bytes (docs/dependencies.md).
package enum Base64URL {
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        var text = Array(Data(bytes).base64EncodedData())
        while text.last == UInt8(ascii: "=") { text.removeLast() }
        for index in text.indices {
            switch text[index] {
            case UInt8(ascii: "+"): text[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): text[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Decodes base64url. Characters outside the url-safe alphabet are an error; trailing `=` padding
    /// is tolerated only when it is the correct amount.
    package static func decode(_ string: Substring) -> [UInt8]? {
        var body = string.utf8
        var padding = 0
        while body.last == UInt8(ascii: "=") { body = body.dropLast(); padding += 1 }
        guard padding <= 2 else { return nil }
        let remainder = body.count % 4
        if remainder == 1 { return nil }
        if padding > 0 && (remainder + padding) % 4 != 0 { return nil }
        // Foundation's alphabet, padded, for its decoder; anything else (a `=` inside included) refused.
        var standard = [UInt8]()
        standard.reserveCapacity(body.count + 3)
        for byte in body {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                standard.append(byte)
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            default: return nil
            }
        }
        if remainder > 0 { standard += repeatElement(UInt8(ascii: "="), count: 4 - remainder) }
        return Data(base64Encoded: Data(standard)).map { Array($0) }
    }
}
