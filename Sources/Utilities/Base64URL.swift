import ExtrasBase64

/// Base64url without padding (RFC 7515 §2), as JWTs use it: swift-extras-base64's coder, with the
/// rules a JWT's parts are held to here (docs/dependencies.md).
package enum Base64URL {
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        Base64.encodeToString(bytes: bytes, options: [.base64UrlAlphabet, .omitPaddingCharacter])
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
        // Its decoder skips a `=` inside the last group: here one is an error, as any other
        // character outside the alphabet.
        if body.contains(UInt8(ascii: "=")) { return nil }
        return try? Base64.decode(bytes: body, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }
}
