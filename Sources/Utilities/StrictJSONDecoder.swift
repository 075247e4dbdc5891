import Foundation

/// Foundation's `JSONDecoder` (default options) for the bodies a sign-in reads, with a fast path:
/// well-formed input is parsed once into a small tree and decoded from it; anything the fast
/// path is not sure of goes to Foundation's decoder, whose value or error is the answer.
///
/// The fast path takes strict RFC 8259 JSON and gives up (``decode(_:from:)`` then asks
/// Foundation) on: any syntax error or trailing text, invalid UTF-8, a control character in a
/// string, an escape that makes a lone surrogate, a key given twice in one object, nesting past
/// 512 levels (Foundation's own limit), an integer with a fraction or exponent or out of its
/// type's range, a float that is not finite, `Float`, `Date`, `Data`, `URL` and `Decimal` (Foundation has strategies for
/// them), a missing key or `null` where a value is required, a value of the wrong kind, and
/// `superDecoder`. So every error, with its `DecodingError` case, path and wording, is
/// Foundation's own, and the fast path only answers where Foundation gives the same value
/// (`StrictJSONDecoderTests` holds the two side by side).
///
/// Where the time goes in Foundation's decoder: it scans the text into a map, then each keyed
/// container looks keys up through it with dynamic casts for its special types; the tree here
/// keeps each object's entries in an array (a few keys each) and compares type metadata.
package struct StrictJSONDecoder: Sendable {
    private let foundation = JSONDecoder()

    package init() {}

    package func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws -> T {
        let array = bytes as? [UInt8] ?? Array(bytes)
        if let value = try? Self.fastDecode(type, from: array) { return value }
        return try foundation.decode(type, from: Data(array))
    }

    /// The fast path, also naming the top-level object's keys (from the same parse), or nil when it
    /// gives up (the caller then asks ``decode(_:from:)`` for the value or Foundation's error): what
    /// a body checked against a schema needs without parsing it twice.
    package func decodeReportingKeys<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) -> (value: T, keys: [String])? {
        var parser = StrictJSONParser(bytes: bytes)
        guard let root = try? parser.document(), case .object(let entries) = root,
              let value = try? StrictJSONNodeDecoder(node: root, parent: nil, key: nil).decodeValue(type) else { return nil }
        return (value, entries.map(\.key))
    }

    /// The fast path alone: throws (no useful error) whenever it gives up.
    static func fastDecode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        var parser = StrictJSONParser(bytes: bytes)
        let root = try parser.document()
        let decoder = StrictJSONNodeDecoder(node: root, parent: nil, key: nil)
        return try decoder.decodeValue(type)
    }
}

/// The fast path gave up: Foundation decides.
struct StrictJSONGiveUp: Error {}

indirect enum StrictJSONNode {
    case null
    case bool(Bool)
    /// A number's text, checked against JSON's grammar.
    case number(Substring)
    case string(String)
    case array([StrictJSONNode])
    case object([(key: String, value: StrictJSONNode)])
}

/// RFC 8259, strictly: anything else gives up.
struct StrictJSONParser {
    let bytes: [UInt8]
    var at = 0
    static let maximumDepth = 512
    /// A key given twice in an object keeps its first value, as Foundation's decoder does for a
    /// dictionary (``JSONValue/parse(strict:)``); otherwise the parser gives up on it.
    var keepsFirstOfRepeatedKeys = false

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func document() throws -> StrictJSONNode {
        let node = try value(depth: 0)
        skipSpace()
        guard at == bytes.count else { throw StrictJSONGiveUp() }
        return node
    }

    private mutating func skipSpace() {
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
    }

    private mutating func literal(_ text: StaticString) throws {
        let count = text.utf8CodeUnitCount
        guard at + count <= bytes.count else { throw StrictJSONGiveUp() }
        for offset in 0..<count where bytes[at + offset] != text.utf8Start[offset] { throw StrictJSONGiveUp() }
        at += count
    }

    private mutating func value(depth: Int) throws -> StrictJSONNode {
        guard depth < Self.maximumDepth else { throw StrictJSONGiveUp() }
        skipSpace()
        guard at < bytes.count else { throw StrictJSONGiveUp() }
        switch bytes[at] {
        case UInt8(ascii: "{"):
            at += 1
            var entries: [(key: String, value: StrictJSONNode)] = []
            // Past a few keys, the keys seen so far in a set: a body is hostile input, and a
            // linear check per key would make a large object quadratic.
            var seen: Set<String>?
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "}") {
                at += 1
                return .object(entries)
            }
            while true {
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw StrictJSONGiveUp() }
                let key = try string()
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { throw StrictJSONGiveUp() }
                at += 1
                let item = try value(depth: depth + 1)
                // A key given twice: Foundation's choice, not a guess (for a value read whole,
                // its choice is known: the first).
                if seen == nil, entries.count >= StrictJSONKeyIndex.linearLimit { seen = Set(entries.map(\.key)) }
                let repeated = seen != nil ? !seen!.insert(key).inserted : entries.contains { $0.key == key }
                if repeated {
                    guard keepsFirstOfRepeatedKeys else { throw StrictJSONGiveUp() }
                } else {
                    entries.append((key, item))
                }
                skipSpace()
                guard at < bytes.count else { throw StrictJSONGiveUp() }
                if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                guard bytes[at] == UInt8(ascii: "}") else { throw StrictJSONGiveUp() }
                at += 1
                return .object(entries)
            }
        case UInt8(ascii: "["):
            at += 1
            var items: [StrictJSONNode] = []
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "]") {
                at += 1
                return .array(items)
            }
            while true {
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard at < bytes.count else { throw StrictJSONGiveUp() }
                if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                guard bytes[at] == UInt8(ascii: "]") else { throw StrictJSONGiveUp() }
                at += 1
                return .array(items)
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return try number()
        }
    }

    private func isDigit(_ index: Int) -> Bool { index < bytes.count && bytes[index] >= 0x30 && bytes[index] <= 0x39 }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() throws -> StrictJSONNode {
        let start = at
        if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
        guard isDigit(at) else { throw StrictJSONGiveUp() }
        if bytes[at] == UInt8(ascii: "0") { at += 1 } else { while isDigit(at) { at += 1 } }
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            at += 1
            guard isDigit(at) else { throw StrictJSONGiveUp() }
            while isDigit(at) { at += 1 }
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            at += 1
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard isDigit(at) else { throw StrictJSONGiveUp() }
            while isDigit(at) { at += 1 }
        }
        // A digit right after a leading zero ("01") is not JSON.
        if isDigit(at) { throw StrictJSONGiveUp() }
        return .number(Substring(decoding: bytes[start..<at], as: UTF8.self))
    }

    /// A string from its opening quote: UTF-8 checked, escapes read, control characters refused.
    private mutating func string() throws -> String {
        at += 1
        let start = at
        while at < bytes.count {
            let byte = bytes[at]
            if byte == UInt8(ascii: "\"") {
                guard let text = String(validating: bytes[start..<at], as: UTF8.self) else { throw StrictJSONGiveUp() }
                at += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
            guard byte >= 0x20 else { throw StrictJSONGiveUp() }
            at += 1
        }
        throw StrictJSONGiveUp()
    }

    private mutating func escapedString(from start: Int) throws -> String {
        var out = Array(bytes[start..<at])
        while at < bytes.count {
            let byte = bytes[at]
            switch byte {
            case UInt8(ascii: "\""):
                at += 1
                guard let text = String(validating: out, as: UTF8.self) else { throw StrictJSONGiveUp() }
                return text
            case UInt8(ascii: "\\"):
                at += 1
                guard at < bytes.count else { throw StrictJSONGiveUp() }
                let escape = bytes[at]
                at += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if scalar >= 0xD800, scalar < 0xDC00 {
                        guard try literalEscapeU(), case let low = try hex4(), low >= 0xDC00, low < 0xE000 else { throw StrictJSONGiveUp() }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00, scalar < 0xE000 {
                        throw StrictJSONGiveUp()
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw StrictJSONGiveUp() }
                    out.append(contentsOf: UTF8.encode(unicode)!)
                default: throw StrictJSONGiveUp()
                }
            default:
                guard byte >= 0x20 else { throw StrictJSONGiveUp() }
                out.append(byte)
                at += 1
            }
        }
        throw StrictJSONGiveUp()
    }

    /// `\u` next (the low half of a surrogate pair).
    private mutating func literalEscapeU() throws -> Bool {
        guard at + 1 < bytes.count, bytes[at] == UInt8(ascii: "\\"), bytes[at + 1] == UInt8(ascii: "u") else { return false }
        at += 2
        return true
    }

    private mutating func hex4() throws -> UInt32 {
        guard at + 4 <= bytes.count else { throw StrictJSONGiveUp() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Hex.digitValue(bytes[at]) else { throw StrictJSONGiveUp() }
            value = value << 4 | UInt32(digit)
            at += 1
        }
        return value
    }
}

/// The `Decoder` of one node.
final class StrictJSONNodeDecoder: Decoder {
    let node: StrictJSONNode
    let parent: StrictJSONNodeDecoder?
    let key: (any CodingKey)?

    init(node: StrictJSONNode, parent: StrictJSONNodeDecoder?, key: (any CodingKey)?) {
        self.node = node
        self.parent = parent
        self.key = key
    }

    var codingPath: [any CodingKey] { (parent?.codingPath ?? []) + (key.map { [$0] } ?? []) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let entries) = node else { throw StrictJSONGiveUp() }
        return KeyedDecodingContainer(StrictJSONKeyedContainer<Key>(decoder: self, entries: entries))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = node else { throw StrictJSONGiveUp() }
        return StrictJSONUnkeyedContainer(decoder: self, items: items)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { StrictJSONSingleValueContainer(decoder: self) }

    /// This node as `T`: the types with their own reading, else `T(from:)`.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if let value = try Self.primitive(node, type) { return value }
        if T.self == Date.self || T.self == Data.self || T.self == URL.self || T.self == Decimal.self || T.self == Float.self {
            throw StrictJSONGiveUp()
        }
        return try T(from: self)
    }

    /// `node` as `T`, decoded below this decoder under `key` (a string, a number or a flag with no
    /// decoder of its own: arrays' elements reach their containers through the generic `decode`).
    func decode<T: Decodable>(_ node: StrictJSONNode, _ type: T.Type, key: any CodingKey) throws -> T {
        if let value = try Self.primitive(node, type) { return value }
        return try StrictJSONNodeDecoder(node: node, parent: self, key: key).decodeValue(type)
    }

    /// `node` as `T` when `T` is a string, a flag, an `Int`, `Int64` or `Double` (told apart by
    /// their metadata, not by casts); nil for any other type.
    static func primitive<T: Decodable>(_ node: StrictJSONNode, _ type: T.Type) throws -> T? {
        if T.self == String.self { return unsafeBitCast(try string(node), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try integer(node, Int.self), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try bool(node), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try double(node), to: T.self) }
        if T.self == Int64.self { return unsafeBitCast(try integer(node, Int64.self), to: T.self) }
        return nil
    }

    static func string(_ node: StrictJSONNode) throws -> String {
        guard case .string(let text) = node else { throw StrictJSONGiveUp() }
        return text
    }

    static func bool(_ node: StrictJSONNode) throws -> Bool {
        guard case .bool(let flag) = node else { throw StrictJSONGiveUp() }
        return flag
    }

    /// Digits only (a fraction or an exponent, or `-` for an unsigned type, is Foundation's call).
    static func integer<I: FixedWidthInteger>(_ node: StrictJSONNode, _ type: I.Type) throws -> I {
        guard case .number(let text) = node, I.isSigned || text.first != "-", let value = I(text, radix: 10) else { throw StrictJSONGiveUp() }
        return value
    }

    static func double(_ node: StrictJSONNode) throws -> Double {
        guard case .number(let text) = node, let value = Double(text), value.isFinite else { throw StrictJSONGiveUp() }
        return value
    }

    static func isNull(_ node: StrictJSONNode) -> Bool {
        if case .null = node { return true }
        return false
    }
}

/// Where each key of a large object is: a lookup per key in a linear scan would make decoding a
/// large object (a dictionary) quadratic.
struct StrictJSONKeyIndex {
    /// Objects with more keys than this are looked up through a dictionary.
    static let linearLimit = 16
    let positions: [String: Int]?

    init(_ entries: [(key: String, value: StrictJSONNode)]) {
        guard entries.count > Self.linearLimit else {
            positions = nil
            return
        }
        var positions: [String: Int] = [:]
        positions.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() { positions[entry.key] = index }
        self.positions = positions
    }
}

struct StrictJSONKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: StrictJSONNodeDecoder
    let entries: [(key: String, value: StrictJSONNode)]
    let index: StrictJSONKeyIndex

    init(decoder: StrictJSONNodeDecoder, entries: [(key: String, value: StrictJSONNode)]) {
        self.decoder = decoder
        self.entries = entries
        index = StrictJSONKeyIndex(entries)
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { entries.compactMap { Key(stringValue: $0.key) } }

    private func position(_ name: String) -> Int? {
        if let positions = index.positions { return positions[name] }
        return entries.firstIndex { $0.key == name }
    }

    private func node(_ key: Key) throws -> StrictJSONNode {
        guard let position = position(key.stringValue) else { throw StrictJSONGiveUp() }
        return entries[position].value
    }

    func contains(_ key: Key) -> Bool { position(key.stringValue) != nil }

    func decodeNil(forKey key: Key) throws -> Bool { StrictJSONNodeDecoder.isNull(try node(key)) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try StrictJSONNodeDecoder.bool(try node(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try StrictJSONNodeDecoder.string(try node(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try StrictJSONNodeDecoder.double(try node(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { throw StrictJSONGiveUp() }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try StrictJSONNodeDecoder.integer(try node(key), type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try StrictJSONNodeDecoder.integer(try node(key), type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try StrictJSONNodeDecoder.integer(try node(key), type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try StrictJSONNodeDecoder.integer(try node(key), type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try StrictJSONNodeDecoder.integer(try node(key), type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try StrictJSONNodeDecoder.integer(try node(key), type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try StrictJSONNodeDecoder.integer(try node(key), type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try StrictJSONNodeDecoder.integer(try node(key), type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try StrictJSONNodeDecoder.integer(try node(key), type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try StrictJSONNodeDecoder.integer(try node(key), type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder.decode(try node(key), type, key: key) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try StrictJSONNodeDecoder(node: try node(key), parent: decoder, key: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try StrictJSONNodeDecoder(node: try node(key), parent: decoder, key: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { throw StrictJSONGiveUp() }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw StrictJSONGiveUp() }
}

struct StrictJSONUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: StrictJSONNodeDecoder
    let items: [StrictJSONNode]
    var currentIndex = 0

    init(decoder: StrictJSONNodeDecoder, items: [StrictJSONNode]) {
        self.decoder = decoder
        self.items = items
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private mutating func next() throws -> StrictJSONNode {
        guard currentIndex < items.count else { throw StrictJSONGiveUp() }
        defer { currentIndex += 1 }
        return items[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard currentIndex < items.count else { throw StrictJSONGiveUp() }
        guard StrictJSONNodeDecoder.isNull(items[currentIndex]) else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try StrictJSONNodeDecoder.bool(try next()) }
    mutating func decode(_ type: String.Type) throws -> String { try StrictJSONNodeDecoder.string(try next()) }
    mutating func decode(_ type: Double.Type) throws -> Double { try StrictJSONNodeDecoder.double(try next()) }
    mutating func decode(_ type: Float.Type) throws -> Float { throw StrictJSONGiveUp() }
    mutating func decode(_ type: Int.Type) throws -> Int { try StrictJSONNodeDecoder.integer(try next(), type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try StrictJSONNodeDecoder.integer(try next(), type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try StrictJSONNodeDecoder.integer(try next(), type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try StrictJSONNodeDecoder.integer(try next(), type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try StrictJSONNodeDecoder.integer(try next(), type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try StrictJSONNodeDecoder.integer(try next(), type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try StrictJSONNodeDecoder.integer(try next(), type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try StrictJSONNodeDecoder.integer(try next(), type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try StrictJSONNodeDecoder.integer(try next(), type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try StrictJSONNodeDecoder.integer(try next(), type) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let index = currentIndex
        return try decoder.decode(try next(), type, key: JSONPositionKey(intValue: index))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let index = currentIndex
        return try StrictJSONNodeDecoder(node: try next(), parent: decoder, key: JSONPositionKey(intValue: index)).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let index = currentIndex
        return try StrictJSONNodeDecoder(node: try next(), parent: decoder, key: JSONPositionKey(intValue: index)).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { throw StrictJSONGiveUp() }
}

struct StrictJSONSingleValueContainer: SingleValueDecodingContainer {
    let decoder: StrictJSONNodeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    private var node: StrictJSONNode { decoder.node }

    func decodeNil() -> Bool { StrictJSONNodeDecoder.isNull(node) }
    func decode(_ type: Bool.Type) throws -> Bool { try StrictJSONNodeDecoder.bool(node) }
    func decode(_ type: String.Type) throws -> String { try StrictJSONNodeDecoder.string(node) }
    func decode(_ type: Double.Type) throws -> Double { try StrictJSONNodeDecoder.double(node) }
    func decode(_ type: Float.Type) throws -> Float { throw StrictJSONGiveUp() }
    func decode(_ type: Int.Type) throws -> Int { try StrictJSONNodeDecoder.integer(node, type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try StrictJSONNodeDecoder.integer(node, type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try StrictJSONNodeDecoder.integer(node, type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try StrictJSONNodeDecoder.integer(node, type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try StrictJSONNodeDecoder.integer(node, type) }
    func decode(_ type: UInt.Type) throws -> UInt { try StrictJSONNodeDecoder.integer(node, type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try StrictJSONNodeDecoder.integer(node, type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try StrictJSONNodeDecoder.integer(node, type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try StrictJSONNodeDecoder.integer(node, type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try StrictJSONNodeDecoder.integer(node, type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(type) }
}

extension JSONValue {
    /// `node` as the value Foundation's decoder makes of it (numbers as `Double`); gives up where
    /// Foundation would not read a number as one.
    init(strict node: StrictJSONNode) throws {
        switch node {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .number: self = .number(try StrictJSONNodeDecoder.double(node))
        case .string(let value): self = .string(value)
        case .array(let items): self = .array(try items.map(JSONValue.init(strict:)))
        case .object(let entries):
            var object: [String: JSONValue] = [:]
            object.reserveCapacity(entries.count)
            for entry in entries { object[entry.key] = try JSONValue(strict: entry.value) }
            self = .object(object)
        }
    }

    /// A JSON document as a value, in one pass over it; nil where the strict parser gives up (then
    /// Foundation's decoder decides, with its own error). Decoding one through `Decodable` costs
    /// Foundation's decoder a failed attempt per level, each naming its whole coding path: deep
    /// nesting made that quadratic (456 levels: 1.7 s of a debug backend's CPU for one body).
    package static func parse(strict bytes: [UInt8]) -> JSONValue? {
        var parser = StrictJSONParser(bytes: bytes)
        parser.keepsFirstOfRepeatedKeys = true
        guard let root = try? parser.document() else { return nil }
        return try? JSONValue(strict: root)
    }
}
