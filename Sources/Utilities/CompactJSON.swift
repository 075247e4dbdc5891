import Foundation

/// Writes JSON from dictionaries, arrays, strings, numbers and Booleans, keys sorted, no spaces:
/// what `JSONSerialization.data(withJSONObject:options: .sortedKeys)` writes, several times faster
/// on Linux (where it was a quarter of the CPU of ten thousand concurrent sign-ins).
package enum CompactJSON {
    /// The JSON text of `value`; `nil` for a value JSON cannot hold (a date, a non-finite number…).
    package static func encode(_ value: Any) -> String? {
        bytes(value).map { String(decoding: $0, as: UTF8.self) }
    }

    /// ``encode(_:)`` as UTF-8 bytes (how it is built: appending to a `String` scalar by scalar cost
    /// more than the rest of a backend answer).
    package static func bytes(_ value: Any) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        return write(value, into: &out) ? out : nil
    }

    private static func append(_ text: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private static func write(_ value: Any, into out: inout [UInt8]) -> Bool {
        switch value {
        case let text as String:
            appendString(text, to: &out)
        case let flag as Bool:
            append(flag ? "true" : "false", to: &out)
        case let number as Int:
            out.append(contentsOf: String(number).utf8)
        case let number as Int64:
            out.append(contentsOf: String(number).utf8)
        case let number as Double:
            guard number.isFinite else { return false }
            out.append(contentsOf: (number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)).utf8)
        case let object as [String: Any]:
            out.append(UInt8(ascii: "{"))
            var first = true
            for key in object.keys.sorted() {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                appendString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                guard write(object[key]!, into: &out) else { return false }
            }
            out.append(UInt8(ascii: "}"))
        case let object as [String: any Sendable]:
            return write(object as [String: Any], into: &out)
        case let array as [Any]:
            out.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                guard write(element, into: &out) else { return false }
            }
            out.append(UInt8(ascii: "]"))
        case is NSNull:
            append("null", to: &out)
        default:
            return false
        }
        return true
    }

    /// `text` as a JSON string literal, quotes included.
    package static func string(_ text: String) -> String {
        var out: [UInt8] = []
        appendString(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// A JSON string literal appended as UTF-8 bytes: quotes, backslashes and control characters
    /// escaped (and `/` as is).
    package static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        let utf8 = text.utf8
        if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: utf8)
        } else {
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): append("\\\"", to: &out)
                case UInt8(ascii: "\\"): append("\\\\", to: &out)
                case 0x0A: append("\\n", to: &out)
                case 0x0D: append("\\r", to: &out)
                case 0x09: append("\\t", to: &out)
                case 0x00..<0x20:
                    append("\\u00", to: &out)
                    out.append(hexDigits[Int(byte >> 4)])
                    out.append(hexDigits[Int(byte & 0x0F)])
                default: out.append(byte)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
