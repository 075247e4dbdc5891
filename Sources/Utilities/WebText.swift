/// Text for and from the web, done on UTF-8 bytes: HTML escaping, and `application/x-www-form-urlencoded`
/// fields (query strings, form bodies). Foundation's `replacingOccurrences` and
/// `removingPercentEncoding` cost about 4 % of a reCAPTCHA-path sign-in's CPU between them; these do
/// the same work in one pass.
public enum WebText {
    /// `&`, `<`, `>` and `"` as entities: safe as HTML text and as a double-quoted attribute's value.
    public static func escapeHTML(_ text: String) -> String {
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

    /// A form or query component decoded: `+` as a space, `%XX` as its byte. `nil`, as Foundation's
    /// `removingPercentEncoding`, when a `%` is not followed by two hex digits or the bytes are not UTF-8.
    public static func formDecode(_ component: some StringProtocol) -> String? {
        let utf8 = component.utf8
        guard utf8.contains(where: { $0 == 0x25 || $0 == 0x2B }) else { return String(component) }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            utf8.formIndex(after: &index)
            switch byte {
            case 0x2B: out.append(0x20)
            case 0x25:
                guard index != utf8.endIndex, let high = hexValue(utf8[index]) else { return nil }
                utf8.formIndex(after: &index)
                guard index != utf8.endIndex, let low = hexValue(utf8[index]) else { return nil }
                utf8.formIndex(after: &index)
                out.append(high << 4 | low)
            default: out.append(byte)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    /// `a=1&b=two+words&a=3` → `["a": "1", "b": "two words"]`: the first of a repeated name wins; a
    /// component that does not decode is empty; a field without `=` has an empty value.
    public static func formFields(_ text: some StringProtocol) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let equals = pair.utf8.firstIndex(of: UInt8(ascii: "="))
            let name = formDecode(equals.map { pair[..<$0] } ?? pair[...]) ?? ""
            guard fields[name] == nil else { continue }
            fields[name] = equals.map { formDecode(pair[pair.utf8.index(after: $0)...]) ?? "" } ?? ""
        }
        return fields
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
