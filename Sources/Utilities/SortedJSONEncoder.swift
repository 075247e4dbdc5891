import Foundation

/// Foundation's `JSONEncoder` with `.sortedKeys`, byte for byte, at a fraction of its cost: the
/// Identity Toolkit bodies both ends of a sign-in write, the backend's journal records and the
/// app's keychain items.
///
/// The output rules are swift-foundation's (`FoundationEssentials/JSON/JSONWriter.swift` and
/// `JSONEncoder.swift`, as this toolchain's Foundation on Linux has them):
/// - an object's keys sorted by their UTF-8 bytes; a key encoded twice keeps its last value;
/// - `"`, `\`, and control characters escaped (`\b \f \n \r \t`, others as `\u00xx`), `/` as `\/`
///   unless `escapesSlashes` is false (`.withoutEscapingSlashes`); everything else as it is;
/// - integers in decimal; a `Float` or `Double` as its `description` without a trailing `.0`; a
///   non-finite one is an `EncodingError.invalidValue` (the `.throw` strategy);
/// - `Data` as base64, `URL` as its absolute string, `Decimal` as its description, `Date` by
///   ``Dates``; a nested value that encodes nothing is `{}`, a top-level one an error.
///
/// Where its cost goes: Foundation builds a tree of enum values with a dictionary per object and
/// asks every nested value whether it is a `Date`, `Data`, `URL`, `Decimal` or a special array
/// with dynamic casts; this keeps an object's entries in an array, compares metadata for the
/// special types, and writes numbers without making strings. `SortedJSONEncoderTests` holds it
/// to Foundation's bytes.
package struct SortedJSONEncoder: Sendable {
    /// How a `Date` is written (Foundation's `dateEncodingStrategy`, the two cases used here).
    package enum Dates: Sendable {
        /// Seconds since 2001-01-01 (`.deferredToDate`, Foundation's default).
        case deferredToDate
        /// Seconds since 1970-01-01 (`.secondsSince1970`).
        case secondsSince1970
    }

    /// `\/` for `/` (Foundation's default); false is `.withoutEscapingSlashes`.
    package var escapesSlashes: Bool
    package var dates: Dates

    package init(escapesSlashes: Bool = true, dates: Dates = .deferredToDate) {
        self.escapesSlashes = escapesSlashes
        self.dates = dates
    }

    /// `value` as JSON text, in UTF-8.
    package func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = SortedJSONValueEncoder(dates: dates, parent: nil, path: [], key: nil)
        guard let node = try encoder.node(for: value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        var writer = SortedJSONWriter(escapesSlashes: escapesSlashes)
        try writer.write(node, depth: 0)
        return writer.bytes
    }
}

/// One value of the tree an encoding builds: containers are boxes, so that a container handed out
/// can be filled after its entry was made, as Codable allows.
enum SortedJSONNode {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    /// A number's text as it is written (a float's, a `Decimal`'s).
    case number(String)
    case string(String)
    case object(SortedJSONObject)
    case array(SortedJSONArray)
    /// What a `superEncoder()` holds: read when the tree is written (`{}` if it encoded nothing).
    case pending(SortedJSONValueEncoder)
}

final class SortedJSONObject {
    var entries: [(key: String, value: SortedJSONNode)] = []

    /// The value last given for `name`: a nested container asked for again is the same one.
    func last(_ name: String) -> SortedJSONNode? { entries.last { $0.key == name }?.value }
}

final class SortedJSONArray {
    var items: [SortedJSONNode] = []
}

/// The `Encoder` of one value: it holds what the value encoded (`node`), and its place (for
/// `codingPath`, which only an error reads).
final class SortedJSONValueEncoder: Encoder {
    let dates: SortedJSONEncoder.Dates
    let parent: SortedJSONValueEncoder?
    /// The keys of the nested containers between the parent encoder and this value's container
    /// (usually none), and this value's key in it.
    let path: [any CodingKey]
    let key: (any CodingKey)?
    var node: SortedJSONNode?

    init(dates: SortedJSONEncoder.Dates, parent: SortedJSONValueEncoder?, path: [any CodingKey], key: (any CodingKey)?) {
        self.dates = dates
        self.parent = parent
        self.path = path
        self.key = key
    }

    var codingPath: [any CodingKey] { (parent?.codingPath ?? []) + path + (key.map { [$0] } ?? []) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: SortedJSONObject
        if case .object(let existing)? = node { object = existing } else {
            object = SortedJSONObject()
            node = .object(object)
        }
        return KeyedEncodingContainer(SortedJSONKeyedContainer<Key>(encoder: self, object: object, path: []))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: SortedJSONArray
        if case .array(let existing)? = node { array = existing } else {
            array = SortedJSONArray()
            node = .array(array)
        }
        return SortedJSONUnkeyedContainer(encoder: self, array: array, path: [])
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SortedJSONSingleValueContainer(encoder: self) }

    /// The node of `value`, encoded below this encoder in the container at `path`, under `key`
    /// (nil: it encoded nothing).
    /// Strings, integers and booleans (the elements of arrays, which reach containers through
    /// their generic `encode`) and the types Foundation writes its own way are told apart by their
    /// metadata, not by casts.
    func node<T: Encodable>(for value: T, path: [any CodingKey] = [], key: (any CodingKey)? = nil) throws -> SortedJSONNode? {
        if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int.self { return .int(Int64(unsafeBitCast(value, to: Int.self))) }
        if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Double.self { return try number(unsafeBitCast(value, to: Double.self), path, key) }
        if T.self == Int64.self { return .int(unsafeBitCast(value, to: Int64.self)) }
        if T.self == Date.self {
            let date = unsafeBitCast(value, to: Date.self)
            switch dates {
            case .deferredToDate: return try number(date.timeIntervalSinceReferenceDate, path, key)
            case .secondsSince1970: return try number(date.timeIntervalSince1970, path, key)
            }
        }
        if T.self == Data.self { return .string((value as! Data).base64EncodedString()) }
        if T.self == URL.self { return .string((value as! URL).absoluteString) }
        if T.self == Decimal.self { return .number((value as! Decimal).description) }
        let child = SortedJSONValueEncoder(dates: dates, parent: self, path: path, key: key)
        try value.encode(to: child)
        return child.node
    }

    func number<F: BinaryFloatingPoint & CustomStringConvertible>(_ value: F, _ path: [any CodingKey] = [], _ key: (any CodingKey)? = nil) throws -> SortedJSONNode {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath + path + (key.map { [$0] } ?? []),
                                                          debugDescription: "Unable to encode \(F.self).\(value) directly in JSON."))
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return .number(text)
    }
}

struct SortedJSONKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: SortedJSONValueEncoder
    let object: SortedJSONObject
    /// Keys of the nested containers between the encoder and this one (empty for its own).
    let path: [any CodingKey]

    var codingPath: [any CodingKey] { encoder.codingPath + path }

    private func set(_ node: SortedJSONNode, _ key: Key) { object.entries.append((key.stringValue, node)) }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(try encoder.number(value, path, key), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(try encoder.number(value, path, key), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.uint(value), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(try encoder.node(for: value, path: path, key: key) ?? .object(SortedJSONObject()), key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested: SortedJSONObject
        if case .object(let existing)? = object.last(key.stringValue) {
            nested = existing
        } else {
            nested = SortedJSONObject()
            set(.object(nested), key)
        }
        return KeyedEncodingContainer(SortedJSONKeyedContainer<NestedKey>(encoder: encoder, object: nested, path: path + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested: SortedJSONArray
        if case .array(let existing)? = object.last(key.stringValue) {
            nested = existing
        } else {
            nested = SortedJSONArray()
            set(.array(nested), key)
        }
        return SortedJSONUnkeyedContainer(encoder: encoder, array: nested, path: path + [key])
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: "super", key: JSONPositionKey(stringValue: "super")) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key.stringValue, key: key) }

    private func superEncoder(named name: String, key: any CodingKey) -> any Encoder {
        let child = SortedJSONValueEncoder(dates: encoder.dates, parent: encoder, path: path, key: key)
        object.entries.append((name, .pending(child)))
        return child
    }
}

struct SortedJSONUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: SortedJSONValueEncoder
    let array: SortedJSONArray
    let path: [any CodingKey]

    var codingPath: [any CodingKey] { encoder.codingPath + path }
    var count: Int { array.items.count }
    private var nextKey: JSONPositionKey { JSONPositionKey(intValue: array.items.count) }

    mutating func encodeNil() throws { array.items.append(.null) }
    mutating func encode(_ value: Bool) throws { array.items.append(.bool(value)) }
    mutating func encode(_ value: String) throws { array.items.append(.string(value)) }
    mutating func encode(_ value: Double) throws { array.items.append(try encoder.number(value, path, nextKey)) }
    mutating func encode(_ value: Float) throws { array.items.append(try encoder.number(value, path, nextKey)) }
    mutating func encode(_ value: Int) throws { array.items.append(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { array.items.append(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { array.items.append(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { array.items.append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { array.items.append(.int(value)) }
    mutating func encode(_ value: UInt) throws { array.items.append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { array.items.append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { array.items.append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { array.items.append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { array.items.append(.uint(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        array.items.append(try encoder.node(for: value, path: path, key: nextKey) ?? .object(SortedJSONObject()))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let key = path + [nextKey]
        let nested = SortedJSONObject()
        array.items.append(.object(nested))
        return KeyedEncodingContainer(SortedJSONKeyedContainer<NestedKey>(encoder: encoder, object: nested, path: key))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = path + [nextKey]
        let nested = SortedJSONArray()
        array.items.append(.array(nested))
        return SortedJSONUnkeyedContainer(encoder: encoder, array: nested, path: key)
    }

    mutating func superEncoder() -> any Encoder {
        let child = SortedJSONValueEncoder(dates: encoder.dates, parent: encoder, path: path, key: nextKey)
        array.items.append(.pending(child))
        return child
    }
}

struct SortedJSONSingleValueContainer: SingleValueEncodingContainer {
    let encoder: SortedJSONValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ node: SortedJSONNode) {
        precondition(encoder.node == nil, "Attempt to encode value through single value container when previously value already encoded.")
        encoder.node = node
    }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ value: Bool) throws { set(.bool(value)) }
    mutating func encode(_ value: String) throws { set(.string(value)) }
    mutating func encode(_ value: Double) throws { set(try encoder.number(value)) }
    mutating func encode(_ value: Float) throws { set(try encoder.number(value)) }
    mutating func encode(_ value: Int) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { set(.int(value)) }
    mutating func encode(_ value: UInt) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { set(.uint(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        set(try encoder.node(for: value) ?? .object(SortedJSONObject()))
    }
}

/// Writes the tree: objects' keys sorted by their UTF-8 bytes, strings escaped as Foundation does.
struct SortedJSONWriter {
    let escapesSlashes: Bool
    var bytes: [UInt8] = []

    init(escapesSlashes: Bool) {
        self.escapesSlashes = escapesSlashes
        bytes.reserveCapacity(512)
    }

    /// Foundation's limit of nested containers.
    static let maximumDepth = 512

    mutating func write(_ node: SortedJSONNode, depth: Int) throws {
        switch node {
        case .null: append("null")
        case .bool(let value): append(value ? "true" : "false")
        case .int(let value): writeInteger(value.magnitude, negative: value < 0)
        case .uint(let value): writeInteger(value, negative: false)
        case .number(let text): bytes.append(contentsOf: text.utf8)
        case .string(let text): writeString(text)
        case .pending(let encoder): try write(encoder.node ?? .object(SortedJSONObject()), depth: depth)
        case .array(let array):
            guard depth < Self.maximumDepth else { throw tooDeep() }
            bytes.append(UInt8(ascii: "["))
            for (index, item) in array.items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                try write(item, depth: depth + 1)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            guard depth < Self.maximumDepth else { throw tooDeep() }
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for entry in Self.sorted(object.entries) {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                writeString(entry.key)
                bytes.append(UInt8(ascii: ":"))
                try write(entry.value, depth: depth + 1)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// `entries` by their keys' UTF-8 bytes (a stable insertion sort for a few keys). A
    /// key given twice is written once, as Foundation's dictionary of them keeps it: its first
    /// text, its last value. Keys are one when Swift's `==` says so: two texts of one character
    /// (`é` precomposed and decomposed) are one key, so that check runs on the texts as given when
    /// a key is not ASCII; for ASCII keys, equal means equal bytes, which end up side by side.
    static func sorted(_ entries: [(key: String, value: SortedJSONNode)]) -> [(key: String, value: SortedJSONNode)] {
        var sorted = entries
        guard sorted.count > 1 else { return sorted }
        if sorted.contains(where: { !$0.key.utf8.allSatisfy { $0 < 0x80 } }) { sorted = merged(sorted) }
        if sorted.count > 16 {
            // A large object (a dictionary): the standard sort, made stable by position.
            sorted = sorted.enumerated().sorted { a, b in
                a.element.key.utf8.lexicographicallyPrecedes(b.element.key.utf8)
                    || (a.element.key.utf8.elementsEqual(b.element.key.utf8) && a.offset < b.offset)
            }.map(\.element)
        } else {
            sortSmall(&sorted)
        }
        var kept = 0
        for index in sorted.indices {
            if kept > 0, sorted[kept - 1].key == sorted[index].key {
                sorted[kept - 1] = sorted[index]
            } else {
                sorted[kept] = sorted[index]
                kept += 1
            }
        }
        sorted.removeLast(sorted.count - kept)
        return sorted
    }

    /// A stable insertion sort by the keys' UTF-8 bytes.
    private static func sortSmall(_ sorted: inout [(key: String, value: SortedJSONNode)]) {
        for index in 1..<sorted.count {
            let entry = sorted[index]
            var slot = index
            while slot > 0, entry.key.utf8.lexicographicallyPrecedes(sorted[slot - 1].key.utf8) {
                sorted[slot] = sorted[slot - 1]
                slot -= 1
            }
            sorted[slot] = entry
        }
    }

    /// Each key once, where it was first given, with its last value.
    private static func merged(_ entries: [(key: String, value: SortedJSONNode)]) -> [(key: String, value: SortedJSONNode)] {
        var merged: [(key: String, value: SortedJSONNode)] = []
        var slots: [String: Int] = [:]
        for entry in entries {
            if let slot = slots[entry.key] {
                merged[slot].value = entry.value
            } else {
                slots[entry.key] = merged.count
                merged.append(entry)
            }
        }
        return merged
    }

    private func tooDeep() -> EncodingError {
        EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "Too many nested arrays or dictionaries (more than \(Self.maximumDepth))."))
    }

    private mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func writeInteger(_ magnitude: UInt64, negative: Bool) {
        if negative { bytes.append(UInt8(ascii: "-")) }
        guard magnitude >= 10 else {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 20 digits
        let count = withUnsafeMutableBytes(of: &digits) { room -> Int in
            var value = magnitude
            var at = room.count
            while value > 0 {
                at -= 1
                room[at] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
            return room.count - at
        }
        withUnsafeBytes(of: &digits) { bytes.append(contentsOf: $0.suffix(count)) }
    }

    private mutating func writeString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var mark = 0
            for index in utf8.indices {
                let byte = utf8[index]
                let escape: StaticString
                switch byte {
                case UInt8(ascii: "\""): escape = "\\\""
                case UInt8(ascii: "\\"): escape = "\\\\"
                case UInt8(ascii: "/") where escapesSlashes: escape = "\\/"
                case 0x08: escape = "\\b"
                case 0x0C: escape = "\\f"
                case 0x0A: escape = "\\n"
                case 0x0D: escape = "\\r"
                case 0x09: escape = "\\t"
                case 0x00..<0x20: escape = ""
                default: continue
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<index]))
                if escape.utf8CodeUnitCount > 0 {
                    append(escape)
                } else {
                    append("\\u00")
                    bytes.append(Self.hex(byte >> 4))
                    bytes.append(Self.hex(byte & 0x0F))
                }
                mark = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func hex(_ nibble: UInt8) -> UInt8 { nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10 }
}
