import Foundation

// A run fact on a `--json` line is its case's name (the `kind`) and its associated values as an
// object of strings (the `facts`), written and read through RunFact's synthesized Codable: a new
// case needs no code here or in Timeline.swift's readers, only the case itself.
//
// Scalars are written as text (`200`, `true`, `0.92`); an enum (or any single-value Codable type)
// as its raw value; a nil optional is left out. On reading, an empty fact is a nil one (lines
// from before these readers wrote `""` for nothing).

enum FactCoding {
    /// A fact's case name and its values as strings.
    static func encode(_ fact: RunFact) -> (name: String, facts: [String: String]) {
        let box = FactBox()
        // Only the types RunFact's cases carry are written (the round-trip test covers each kind):
        // a case with a type this encoder cannot write shows as its name with no facts.
        try? fact.encode(to: FactEncoder(box: box))
        return (box.name ?? "", box.facts)
    }

    /// The fact named `name` from `facts`, or nil when no case has that name; `kind` names it in
    /// errors about its facts.
    static func decode(name: String, facts: [String: String], kind: String) throws(TimelineFormatError) -> RunFact? {
        do {
            return try RunFact(from: FactDecoder(name: name, facts: facts))
        } catch let error as TimelineFormatError {
            throw TimelineFormatError("\(kind): \(error.message)")
        } catch {
            // The synthesized decoder found no case of that name (every problem with a known
            // case's facts is a TimelineFormatError from FactDecoder).
            return nil
        }
    }

    /// How a fact of type `type` must look, for an error (`an integer`, `sandbox or production`).
    static func expected(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is Int.Type: return "an integer"
        case is Double.Type: return "a number"
        default:
            guard let cases = type as? any CaseIterable.Type else { return "\(type)" }
            let names = rawNames(cases)
            guard names.count > 1 else { return names.first ?? "\(type)" }
            return names.count == 2 ? "\(names[0]) or \(names[1])" : "one of " + names.joined(separator: ", ")
        }
    }

    private static func rawNames<T: CaseIterable>(_ type: T.Type) -> [String] {
        T.allCases.compactMap { ($0 as? any RawRepresentable)?.rawValue as? String }
    }
}

private final class FactBox {
    var name: String?
    var facts: [String: String] = [:]
}

private struct FactEncoder: Encoder {
    let box: FactBox
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(CaseContainer<Key>(box: box))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { Unsupported(codingPath: codingPath) }
    func singleValueContainer() -> any SingleValueEncodingContainer { Unsupported(codingPath: codingPath) }

    /// The outer container: one key, the case's name.
    struct CaseContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let box: FactBox
        var codingPath: [any CodingKey] = []
        func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            box.name = key.stringValue
            return KeyedEncodingContainer(ValuesContainer<NestedKey>(box: box))
        }
        mutating func encodeNil(forKey key: Key) throws { box.name = key.stringValue }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { throw Unsupported.error(codingPath) }
        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { Unsupported(codingPath: codingPath) }
        func superEncoder() -> any Encoder { FactEncoder(box: box) }
        func superEncoder(forKey key: Key) -> any Encoder { FactEncoder(box: box) }
    }

    /// The case's associated values, each as a string.
    struct ValuesContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let box: FactBox
        var codingPath: [any CodingKey] = []
        mutating func encodeNil(forKey key: Key) throws {}
        mutating func encode(_ value: String, forKey key: Key) throws { box.facts[key.stringValue] = value }
        mutating func encode(_ value: Bool, forKey key: Key) throws { box.facts[key.stringValue] = String(value) }
        mutating func encode(_ value: Int, forKey key: Key) throws { box.facts[key.stringValue] = String(value) }
        mutating func encode(_ value: Double, forKey key: Key) throws { box.facts[key.stringValue] = String(value) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            let text = TextCapture()
            try value.encode(to: text)
            guard let captured = text.box.value else { throw Unsupported.error(codingPath + [key]) }
            box.facts[key.stringValue] = captured
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Unsupported.Keyed<NestedKey>())
        }
        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { Unsupported(codingPath: codingPath) }
        func superEncoder() -> any Encoder { TextCapture() }
        func superEncoder(forKey key: Key) -> any Encoder { TextCapture() }
    }
}

/// Captures a single-value type's text (an enum's raw value, a fault's spec).
private struct TextCapture: Encoder, SingleValueEncodingContainer {
    final class Box { var value: String? }
    let box = Box()
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> { KeyedEncodingContainer(Unsupported.Keyed<Key>()) }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { Unsupported(codingPath: codingPath) }
    func singleValueContainer() -> any SingleValueEncodingContainer { self }
    mutating func encodeNil() throws {}
    mutating func encode(_ value: String) throws { box.value = value }
    mutating func encode(_ value: Bool) throws { box.value = String(value) }
    mutating func encode(_ value: Int) throws { box.value = String(value) }
    mutating func encode(_ value: Double) throws { box.value = String(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try value.encode(to: self) }
}

/// What a fact's values cannot be: nested lists and objects.
private struct Unsupported: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    var codingPath: [any CodingKey]
    var count: Int { 0 }
    static func error(_ path: [any CodingKey]) -> EncodingError {
        EncodingError.invalidValue((), .init(codingPath: path, debugDescription: "a run fact's values are strings, numbers, Booleans and enums"))
    }
    mutating func encodeNil() throws { throw Self.error(codingPath) }
    mutating func encode<T: Encodable>(_ value: T) throws { throw Self.error(codingPath) }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(Keyed<NestedKey>())
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { TextCapture() }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        var codingPath: [any CodingKey] = []
        mutating func encodeNil(forKey key: Key) throws { throw Unsupported.error(codingPath) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { throw Unsupported.error(codingPath) }
        func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>())
        }
        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { Unsupported(codingPath: codingPath) }
        func superEncoder() -> any Encoder { TextCapture() }
        func superEncoder(forKey key: Key) -> any Encoder { TextCapture() }
    }
}

/// Reads a fact for RunFact's synthesized `init(from:)`: the case named `name`, its values from
/// `facts`. A missing or malformed value is a ``TimelineFormatError`` naming the fact.
private struct FactDecoder: Decoder {
    let name: String
    let facts: [String: String]
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(CaseContainer<Key>(name: name, facts: facts))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw TimelineFormatError("a fact is a kind and an object of strings") }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw TimelineFormatError("a fact is a kind and an object of strings") }

    struct CaseContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let name: String
        let facts: [String: String]
        var codingPath: [any CodingKey] = []
        var allKeys: [Key] { Key(stringValue: name).map { [$0] } ?? [] }
        func contains(_ key: Key) -> Bool { key.stringValue == name }
        func decodeNil(forKey key: Key) throws -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { throw TimelineFormatError("\(name) carries values") }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(ValuesContainer<NestedKey>(facts: facts))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw TimelineFormatError("\(name) carries no list") }
        func superDecoder() throws -> any Decoder { self.decoder }
        func superDecoder(forKey key: Key) throws -> any Decoder { self.decoder }
        private var decoder: FactDecoder { FactDecoder(name: name, facts: facts) }
    }

    struct ValuesContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let facts: [String: String]
        var codingPath: [any CodingKey] = []
        var allKeys: [Key] { facts.keys.compactMap(Key.init(stringValue:)) }
        func contains(_ key: Key) -> Bool { facts[key.stringValue] != nil }
        /// An absent or empty fact is nil.
        func decodeNil(forKey key: Key) throws -> Bool { (facts[key.stringValue] ?? "").isEmpty }

        func malformed(_ key: Key, _ type: Any.Type, _ reason: String? = nil) -> TimelineFormatError {
            let name = key.stringValue
            return TimelineFormatError("fact \(name) is \(facts[name].map { "\"\($0)\"" } ?? "missing"), expected \(FactCoding.expected(type))\(reason.map { ": \($0)" } ?? "")")
        }
        func text(_ key: Key, _ type: Any.Type) throws -> String {
            guard let text = facts[key.stringValue] else { throw malformed(key, type) }
            return text
        }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try text(key, type) }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            switch try text(key, type) {
            case "true": return true
            case "false": return false
            default: throw malformed(key, type)
            }
        }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            guard let value = Int(try text(key, type)) else { throw malformed(key, type) }
            return value
        }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            guard let value = Double(try text(key, type)) else { throw malformed(key, type) }
            return value
        }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let text = try text(key, type)
            do { return try T(from: TextDecoder(text: text)) } catch DecodingError.dataCorrupted(let context) where !(type is any CaseIterable.Type) {
                // A type that reads its own text (a fault's spec) says what it expected.
                throw TimelineFormatError("fact \(key.stringValue) is \"\(text)\", expected \(context.debugDescription)")
            } catch {
                throw malformed(key, type)
            }
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            throw malformed(key, type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw malformed(key, [String].self) }
        func superDecoder() throws -> any Decoder { TextDecoder(text: "") }
        func superDecoder(forKey key: Key) throws -> any Decoder { TextDecoder(text: facts[key.stringValue] ?? "") }
    }
}

/// One fact's text as a single value (an enum's raw value, a fault's spec).
private struct TextDecoder: Decoder, SingleValueDecodingContainer {
    let text: String
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> { throw TimelineFormatError("not an object") }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw TimelineFormatError("not a list") }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }
    func decodeNil() -> Bool { text.isEmpty }
    func decode(_ type: String.Type) throws -> String { text }
    func decode(_ type: Bool.Type) throws -> Bool {
        guard let value = Bool(text) else { throw TimelineFormatError("not true or false") }
        return value
    }
    func decode(_ type: Int.Type) throws -> Int {
        guard let value = Int(text) else { throw TimelineFormatError("not an integer") }
        return value
    }
    func decode(_ type: Double.Type) throws -> Double {
        guard let value = Double(text) else { throw TimelineFormatError("not a number") }
        return value
    }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: self) }
}
