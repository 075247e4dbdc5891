/// Text for and from the web, done on UTF-8 bytes: HTML escaping, and `application/x-www-form-urlencoded`
/// fields (query strings, form bodies). Foundation's `replacingOccurrences` and
/// `removingPercentEncoding` cost about 4 % of a reCAPTCHA-path sign-in's CPU between them; these do
/// the same work in one pass.
package enum WebText {
    /// `&`, `<`, `>` and `"` as entities: safe as HTML text and as a double-quoted attribute's value.
    package static func escapeHTML(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 }) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + 16)
        for byte in utf8 {
            switch byte {
            case 0x26: out.append(contentsOf: "&amp;".utf8)
            case 0x3C: out.append(contentsOf: "&lt;".utf8)
            case 0x3E: out.append(contentsOf: "&gt;".utf8)
            case 0x22: out.append(contentsOf: "&quot;".utf8)
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A form or query component decoded: `+` as a space, `%XX` as its byte. `nil`, as Apple's
    /// `removingPercentEncoding`, when a `%` is not followed by two hex digits or the bytes are not UTF-8.
    package static func formDecode(_ component: Substring) -> String? {
        var copy = component
        return copy.withUTF8 { bytes -> String? in
            guard let first = bytes.firstIndex(where: { $0 == 0x25 || $0 == 0x2B }) else { return String(decoding: bytes, as: UTF8.self) }
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count)
            out.append(contentsOf: bytes[..<first])
            var index = first
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case 0x2B: out.append(0x20)
                case 0x25:
                    guard index + 2 <= bytes.count, let high = hexValue(bytes[index]), let low = hexValue(bytes[index + 1]) else { return nil }
                    index += 2
                    out.append(high << 4 | low)
                default: out.append(byte)
                }
            }
            return String(validating: out, as: UTF8.self)
        }
    }

    package static func formDecode(_ component: String) -> String? { formDecode(component[...]) }

    /// `a=1&b=two+words&a=3` → `["a": "1", "b": "two words"]`: the first of a repeated name wins; a
    /// component that does not decode is empty; a field without `=` has an empty value.
    package static func formFields(_ text: String) -> [String: String] { formFields(text[...]) }

    package static func formFields(_ text: Substring) -> [String: String] {
        var fields: [String: String] = [:]
        let utf8 = text.utf8
        var start = utf8.startIndex
        while true {
            let end = utf8[start...].firstIndex(of: UInt8(ascii: "&")) ?? utf8.endIndex
            if start != end {
                let pair = text[start..<end]
                let equals = pair.utf8.firstIndex(of: UInt8(ascii: "="))
                let name = formDecode(equals.map { pair[..<$0] } ?? pair) ?? ""
                if fields[name] == nil {
                    fields[name] = equals.map { formDecode(pair[pair.utf8.index(after: $0)...]) ?? "" } ?? ""
                }
            }
            guard end != utf8.endIndex else { return fields }
            start = utf8.index(after: end)
        }
    }

    /// Percent-encodes everything but letters, digits and `-._~` (RFC 3986's unreserved characters):
    /// a safe query value or path segment.
    package static func percentEncode(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.contains(where: { !isUnreserved($0) }) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count * 3)
        for byte in utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(upperHex[Int(byte >> 4)])
                out.append(upperHex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let upperHex = Array("0123456789ABCDEF".utf8)

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E: true
        default: false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? { Hex.digitValue(byte) }
}
