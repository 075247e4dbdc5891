import Utilities

/// A strict one-pass JSON reader (RFC 8259) for what a receiver needs to know about a payload:
/// that it is valid JSON, that it is an object, what kind of value `aps` is and what it holds,
/// and whether `"Simulator Target Bundle"` is there. It builds no values: on a receiver it runs
/// for every push, where `JSONSerialization` cost more than everything else APNs checks.
///
/// It accepts and refuses what `JSONSerialization` does (same nesting limit, surrogate pairs
/// checked, UTF-8 checked, no trailing garbage), except that it holds to RFC 8259 where
/// Foundation's parser is lax: a trailing comma (`{"k":1,}`) is not JSON. `PayloadScannerTests`
/// compares the two on edge cases and mutated payloads.
struct PayloadScanner {
    enum Kind: Equatable { case object, array, string, number, literal }

    /// What the top level holds.
    struct Shape {
        /// The top level is an object (a top-level array is valid JSON but not a payload).
        var isObject = false
        /// The kind of the last `aps` member (duplicate keys: the last wins, as in Foundation).
        var aps: Kind?
        /// Whether that last `aps` object holds `content-available`, and any other key.
        var apsHasContentAvailable = false
        var apsHasOtherKeys = false
        /// Whether `content-available` is 1 (or `true`).
        var contentAvailableIsOne = false
        /// `aps` holds `content-available: 1` (or `true`) and nothing else: a background push.
        var isBackground: Bool { aps == .object && apsHasContentAvailable && !apsHasOtherKeys && contentAvailableIsOne }
        var hasTargetBundle = false
    }

    struct Invalid: Error {}

    static let maximumDepth = 512
    private static let apsKey = Array("aps".utf8)
    private static let contentAvailableKey = Array("content-available".utf8)
    private static let targetBundleKey = Array("Simulator Target Bundle".utf8)

    /// The shape of `bytes`, or nil when they are not valid JSON.
    static func scan(_ bytes: [UInt8]) -> Shape? {
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = Cursor(bytes: buffer)
            var shape = Shape()
            do {
                scanner.skipSpace()
                guard let first = scanner.peek() else { return nil }
                switch first {
                case UInt8(ascii: "{"):
                    shape.isObject = true
                    try scanner.object(depth: 1, shape: &shape)
                case UInt8(ascii: "["):
                    try scanner.array(depth: 1)
                default:
                    return nil  // A bare scalar is not a JSON text JSONSerialization accepts without fragments.
                }
                scanner.skipSpace()
                guard scanner.atEnd else { return nil }
                if scanner.sawNonASCII, String(validating: buffer, as: UTF8.self) == nil { return nil }
                return shape
            } catch {
                return nil
            }
        }
    }

    /// A key as read: none (not asked for), the bytes between its quotes, or its decoded bytes.
    enum Key {
        case none
        case raw(Slice<UnsafeBufferPointer<UInt8>>)
        case decoded([UInt8])

        func equals(_ other: [UInt8]) -> Bool {
            switch self {
            case .none: false
            case .raw(let bytes): bytes.elementsEqual(other)
            case .decoded(let bytes): bytes == other
            }
        }
    }

    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var sawNonASCII = false

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var atEnd: Bool { index >= bytes.count }
        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func expect(_ byte: UInt8) throws(Invalid) {
            guard index < bytes.count, bytes[index] == byte else { throw Invalid() }
            index += 1
        }

        /// An object; at depth 1 (the top level) and depth 2 inside `aps` it fills `shape`.
        mutating func object(depth: Int, shape: inout Shape, inAPS: Bool = false) throws(Invalid) {
            guard depth <= PayloadScanner.maximumDepth else { throw Invalid() }
            try expect(UInt8(ascii: "{"))
            skipSpace()
            if peek() == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                skipSpace()
                let key = try string(decode: depth == 1 || inAPS)
                skipSpace()
                try expect(UInt8(ascii: ":"))
                skipSpace()
                if depth == 1, key.equals(PayloadScanner.apsKey) {
                    shape.apsHasContentAvailable = false
                    shape.apsHasOtherKeys = false
                    shape.contentAvailableIsOne = false
                    if peek() == UInt8(ascii: "{") {
                        shape.aps = .object
                        try object(depth: depth + 1, shape: &shape, inAPS: true)
                    } else {
                        shape.aps = try value(depth: depth + 1)
                    }
                } else if inAPS {
                    let isContentAvailable = key.equals(PayloadScanner.contentAvailableKey)
                    if isContentAvailable { shape.apsHasContentAvailable = true } else { shape.apsHasOtherKeys = true }
                    let start = index
                    let kind = try value(depth: depth + 1)
                    if isContentAvailable {
                        // Foundation reads `true` as the number 1 too, and so does an app.
                        shape.contentAvailableIsOne = kind == .number ? Self.isOne(bytes[start..<index])
                            : kind == .literal && bytes[start] == UInt8(ascii: "t")
                    }
                } else {
                    let kind = try value(depth: depth + 1)
                    if depth == 1, key.equals(PayloadScanner.targetBundleKey) { shape.hasTargetBundle = true; _ = kind }
                }
                skipSpace()
                guard let next = peek() else { throw Invalid() }
                index += 1
                if next == UInt8(ascii: "}") { return }
                guard next == UInt8(ascii: ",") else { throw Invalid() }
            }
        }

        mutating func array(depth: Int) throws(Invalid) {
            guard depth <= PayloadScanner.maximumDepth else { throw Invalid() }
            try expect(UInt8(ascii: "["))
            skipSpace()
            if peek() == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                skipSpace()
                _ = try value(depth: depth + 1)
                skipSpace()
                guard let next = peek() else { throw Invalid() }
                index += 1
                if next == UInt8(ascii: "]") { return }
                guard next == UInt8(ascii: ",") else { throw Invalid() }
            }
        }

        mutating func value(depth: Int) throws(Invalid) -> Kind {
            guard let first = peek() else { throw Invalid() }
            switch first {
            case UInt8(ascii: "{"):
                var ignored = Shape()
                try object(depth: depth, shape: &ignored)
                return .object
            case UInt8(ascii: "["):
                try array(depth: depth)
                return .array
            case UInt8(ascii: "\""):
                _ = try string(decode: false)
                return .string
            case UInt8(ascii: "t"): try literal("true"); return .literal
            case UInt8(ascii: "f"): try literal("false"); return .literal
            case UInt8(ascii: "n"): try literal("null"); return .literal
            default:
                try number()
                return .number
            }
        }

        mutating func literal(_ word: StaticString) throws(Invalid) {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw Invalid() }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw Invalid() }
            index += count
        }

        mutating func number() throws(Invalid) {
            if peek() == UInt8(ascii: "-") { index += 1 }
            guard let first = peek(), Self.isDigit(first) else { throw Invalid() }
            index += 1
            if first != UInt8(ascii: "0") { skipDigits() }
            if peek() == UInt8(ascii: ".") {
                index += 1
                guard let digit = peek(), Self.isDigit(digit) else { throw Invalid() }
                skipDigits()
            }
            if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
                index += 1
                if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
                guard let digit = peek(), Self.isDigit(digit) else { throw Invalid() }
                skipDigits()
            }
        }

        mutating func skipDigits() {
            while let byte = peek(), Self.isDigit(byte) { index += 1 }
        }

        static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

        /// `1`, `1.0`, `1e0`…: a number whose value is exactly one.
        static func isOne(_ literal: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
            if literal.count == 1 { return literal.first == UInt8(ascii: "1") }
            guard let value = Double(String(decoding: literal, as: UTF8.self)) else { return false }
            return value == 1
        }

        /// A string: when `decode` (for keys that matter), its content, as the bytes between the
        /// quotes while it has no escape (no copy), or decoded once one comes.
        mutating func string(decode: Bool) throws(Invalid) -> Key {
            try expect(UInt8(ascii: "\""))
            let start = index
            var decoded: [UInt8]? = nil
            while true {
                guard index < bytes.count else { throw Invalid() }
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "\\"), decode, decoded == nil { decoded = Array(bytes[start..<index - 1]) }
                switch byte {
                case UInt8(ascii: "\""):
                    guard decode else { return .none }
                    return decoded.map(Key.decoded) ?? .raw(bytes[start..<index - 1])
                case UInt8(ascii: "\\"):
                    guard let escape = peek() else { throw Invalid() }
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded?.append(escape)
                    case UInt8(ascii: "b"): decoded?.append(0x08)
                    case UInt8(ascii: "f"): decoded?.append(0x0C)
                    case UInt8(ascii: "n"): decoded?.append(0x0A)
                    case UInt8(ascii: "r"): decoded?.append(0x0D)
                    case UInt8(ascii: "t"): decoded?.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if scalar >= 0xD800, scalar <= 0xDBFF {
                            // A high surrogate must be followed by an escaped low one.
                            try expect(UInt8(ascii: "\\"))
                            try expect(UInt8(ascii: "u"))
                            let low = try hex4()
                            guard low >= 0xDC00, low <= 0xDFFF else { throw Invalid() }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if scalar >= 0xDC00, scalar <= 0xDFFF {
                            throw Invalid()
                        }
                        if decoded != nil, let unicode = Unicode.Scalar(scalar) { decoded!.append(contentsOf: UTF8.encode(unicode)!) }
                    default:
                        throw Invalid()
                    }
                case 0x00..<0x20:
                    throw Invalid()
                default:
                    if byte >= 0x80 { sawNonASCII = true }
                    decoded?.append(byte)
                }
            }
        }

        mutating func hex4() throws(Invalid) -> UInt32 {
            guard index + 4 <= bytes.count else { throw Invalid() }
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = Hex.digitValue(bytes[index]) else { throw Invalid() }
                index += 1
                value = value << 4 | UInt32(digit)
            }
            return value
        }
    }
}
