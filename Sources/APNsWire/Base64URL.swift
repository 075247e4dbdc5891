import Foundation

/// Base64url without padding (RFC 7515 §2), as JWTs use it.
public enum Base64URL {
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var string = Data(bytes).base64EncodedString()
        string = string.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while string.hasSuffix("=") { string.removeLast() }
        return string
    }

    /// Decodes base64url. Characters outside the url-safe alphabet are an error; trailing `=` padding
    /// is tolerated only when it is the correct amount.
    public static func decode(_ string: Substring) -> [UInt8]? {
        var body = string
        var padding = 0
        while body.last == "=" { body.removeLast(); padding += 1 }
        guard padding <= 2, body.utf8.allSatisfy(isURLSafe) else { return nil }
        let remainder = body.utf8.count % 4
        if remainder == 1 { return nil }
        if padding > 0 && (remainder + padding) % 4 != 0 { return nil }
        var standard = body.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        if remainder > 0 { standard += String(repeating: "=", count: 4 - remainder) }
        guard let data = Data(base64Encoded: standard) else { return nil }
        return Array(data)
    }

    private static func isURLSafe(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x5F
    }
}
