/// The three segments of a compact JWS or JWT (`header.payload.signature`), found by the two dots in
/// the token's UTF-8 bytes.
///
/// `String.split` walks Characters (grapheme breaking per character): for a 900-byte ID token that
/// was a third of the backend's whole signature check, and two thirds of the SDK's reading of the
/// token's subject. Every token here is ASCII base64url, so the bytes are enough.
package struct CompactJWS: Sendable {
    package let header: Substring
    package let payload: Substring
    package let signature: Substring
    /// `header.payload`: what the signature covers.
    package let signingInput: Substring

    /// `nil` unless the token has exactly two dots (empty segments are the caller's to refuse).
    package init?(_ token: String) {
        let bytes = token.utf8
        guard let first = bytes.firstIndex(of: UInt8(ascii: ".")) else { return nil }
        let afterFirst = bytes.index(after: first)
        guard let second = bytes[afterFirst...].firstIndex(of: UInt8(ascii: ".")) else { return nil }
        let afterSecond = bytes.index(after: second)
        guard !bytes[afterSecond...].contains(UInt8(ascii: ".")) else { return nil }
        header = token[..<first]
        payload = token[afterFirst..<second]
        signature = token[afterSecond...]
        signingInput = token[..<second]
    }
}
