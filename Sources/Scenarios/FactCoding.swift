import AuthBackend
import Foundation

// A run fact on a `--json` line is its case's name (the `kind`) and its associated values as an
// object of strings (the `facts`), written and read through RunFact's synthesized Codable: a new
// case needs no code here or in Timeline.swift's readers, only the case itself.
//
// Scalars are written as text (`200`, `true`, `0.92`); an enum (or any single-value Codable type)
// as its raw value; a nil optional is left out; a value with values of its own (a backend event's
// push answer) as one fact per value, named by the path to it (`push.status`), an unlabelled
// associated value adding nothing to the path; a time in ISO 8601 (`2026-11-29T10:15:30.125Z`); a
// list of words (sign-in methods) as one fact, its items joined by commas (`password,emailLink`).
// On reading, an empty fact is a nil one (lines from before these readers wrote `""` for nothing).
//
// A backend event (`RunFact.backend`) is kind `backend`, its case's name as the fact `event`, and
// its values beside it: the event as the backend made it, no translation.

enum FactCoding {
    /// A fact's case name and its values as strings.
    static func encode(_ fact: RunFact) -> (name: String, facts: [String: String]) {
        if case .backend(let event) = fact {
            var (name, facts) = encodeCase(event)
            facts[backendEventFact] = name
            return (EventKind.backend.caseName, facts)
        }
        return encodeCase(fact)
    }

    /// A time: ISO 8601 in UTC with milliseconds (`2026-11-29T10:15:30.125Z`).
    static let dateFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// The fact that names a backend event's case.
    static let backendEventFact = "event"

    /// An enum value's case name and its associated values as strings.
    private static func encodeCase(_ value: some Encodable) -> (name: String, facts: [String: String]) {
        let box = FactBox()
        // Only the types RunFact's cases carry are written (the round-trip test covers each kind):
        // a case with a type this encoder cannot write shows as its name with no facts.
        try? value.encode(to: FactEncoder(box: box))
        return (box.name ?? "", box.facts)
    }

    /// The fact named `name` from `facts`, or nil when no case has that name; `kind` names it in
    /// errors about its facts.
    static func decode(name: String, facts: [String: String], kind: String) throws(TimelineFormatError) -> RunFact? {
        if name == EventKind.backend.caseName {
            guard let eventName = facts[backendEventFact] else {
                throw TimelineFormatError("\(kind): fact \(backendEventFact) is missing, expected the backend event's name (smsSent, rejected, …)")
            }
            var values = facts
            values[backendEventFact] = nil
            guard let event = try decode(BackendEvent.self, name: eventName, facts: values, kind: kind) else {
                throw TimelineFormatError("\(kind): fact \(backendEventFact) is \"\(eventName)\", expected the name of a backend event this authsim knows")
            }
            return .backend(event)
        }
        return try decode(RunFact.self, name: name, facts: facts, kind: kind)
    }

    /// The case `name` of enum `type` from `facts`, or nil when it has no such case.
    static func decode<Value: Decodable>(_ type: Value.Type, name: String, facts: [String: String], kind: String) throws(TimelineFormatError) -> Value? {
        do {
            return try Value(from: FactDecoder(name: name, facts: facts))
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
        case is Date.Type: return "a time such as 2026-11-29T10:15:30.125Z"
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

    /// Where a value named `key` under `prefix` is kept: its own fact (`scalar`), and the prefix
    /// of the values it has if it has some (`nested`; an unlabelled value, `_0`, adds nothing).
    static func paths(_ prefix: String, _ key: String) -> (scalar: String, nested: String) {
        let scalar = prefix.isEmpty ? key : prefix + "." + key
        let positional = key.first == "_" && key.dropFirst().allSatisfy(\.isNumber)
        return (scalar, positional ? prefix : scalar)
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

    /// The case's associated values, each as a string; a value with values of its own, each of
    /// those under its path (``FactCoding/paths(_:_:)``).
    struct ValuesContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let box: FactBox
        var prefix = ""
        var codingPath: [any CodingKey] = []
        func set(_ text: String, _ key: Key) throws {
            let name = FactCoding.paths(prefix, key.stringValue).scalar
            // Two values under one name would lose one: a case that does that is a bug the
            // round-trip test shows.
            guard box.facts[name] == nil else { throw Unsupported.error(codingPath + [key]) }
            box.facts[name] = text
        }
        mutating func encodeNil(forKey key: Key) throws {}
        mutating func encode(_ value: String, forKey key: Key) throws { try set(value, key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { try set(String(value), key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { try set(String(value), key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { try set(String(value), key) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            if let date = value as? Date { return try set(date.formatted(FactCoding.dateFormat), key) }
            let paths = FactCoding.paths(prefix, key.stringValue)
            let capture = ValueEncoder(box: box, nested: paths.nested)
            try value.encode(to: capture)
            if let text = capture.text.value { try set(text, key) }
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(ValuesContainer<NestedKey>(box: box, prefix: FactCoding.paths(prefix, key.stringValue).nested))
        }
        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { Unsupported(codingPath: codingPath) }
        func superEncoder() -> any Encoder { TextCapture() }
        func superEncoder(forKey key: Key) -> any Encoder { TextCapture() }
    }

    /// One associated value: a single value's text, or its own values under `nested`.
    struct ValueEncoder: Encoder {
        let box: FactBox
        let nested: String
        let text = TextCapture()
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(ValuesContainer<Key>(box: box, prefix: nested))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            text.box.value = ""
            return ListCapture(text: text, codingPath: codingPath)
        }
        func singleValueContainer() -> any SingleValueEncodingContainer { text }
    }

    /// A list of words: each item's text, joined by commas into the one fact.
    struct ListCapture: UnkeyedEncodingContainer {
        let text: TextCapture
        var codingPath: [any CodingKey]
        var count = 0
        mutating func encodeNil() throws { throw Unsupported.error(codingPath) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            let item = TextCapture()
            try value.encode(to: item)
            // An item with a comma (or none at all) would not read back as itself.
            guard let word = item.value, !word.isEmpty, !word.contains(",") else { throw Unsupported.error(codingPath) }
            text.box.value = count == 0 ? word : (text.box.value ?? "") + "," + word
            count += 1
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Unsupported.Keyed<NestedKey>())
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Unsupported(codingPath: codingPath) }
        mutating func superEncoder() -> any Encoder { TextCapture() }
    }
}

/// Captures a single-value type's text (an enum's raw value, a fault's spec).
private struct TextCapture: Encoder, SingleValueEncodingContainer {
    final class Box { var value: String? }
    let box = Box()
    var value: String? { box.value }
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
            KeyedDecodingContainer(ValuesContainer<NestedKey>(facts: facts, prefix: ""))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw TimelineFormatError("\(name) carries no list") }
        func superDecoder() throws -> any Decoder { self.decoder }
        func superDecoder(forKey key: Key) throws -> any Decoder { self.decoder }
        private var decoder: FactDecoder { FactDecoder(name: name, facts: facts) }
    }

    /// The case's values; a value with values of its own reads them under its path.
    struct ValuesContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let facts: [String: String]
        let prefix: String
        var codingPath: [any CodingKey] = []
        var allKeys: [Key] {
            facts.keys.compactMap { name in
                if prefix.isEmpty { return Key(stringValue: name) }
                return name.hasPrefix(prefix + ".") ? Key(stringValue: String(name.dropFirst(prefix.count + 1))) : nil
            }
        }
        private func paths(_ key: Key) -> (scalar: String, nested: String) { FactCoding.paths(prefix, key.stringValue) }
        /// Whether `key` has a fact, or values of its own.
        private func present(_ key: Key) -> Bool {
            let paths = paths(key)
            if facts[paths.scalar] != nil { return true }
            return paths.nested != prefix && facts.keys.contains { $0.hasPrefix(paths.nested + ".") }
        }
        func contains(_ key: Key) -> Bool { present(key) }
        /// An absent or empty fact is nil.
        func decodeNil(forKey key: Key) throws -> Bool {
            if let text = facts[paths(key).scalar] { return text.isEmpty }
            return !present(key)
        }

        func malformed(_ key: Key, _ type: Any.Type, _ reason: String? = nil) -> TimelineFormatError {
            let name = paths(key).scalar
            return TimelineFormatError("fact \(name) is \(facts[name].map { "\"\($0)\"" } ?? "missing"), expected \(FactCoding.expected(type))\(reason.map { ": \($0)" } ?? "")")
        }
        func text(_ key: Key, _ type: Any.Type) throws -> String {
            guard let text = facts[paths(key).scalar] else { throw malformed(key, type) }
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
            if type == Date.self {
                guard let date = try? Date(text(key, type), strategy: FactCoding.dateFormat) as? T else { throw malformed(key, type) }
                return date
            }
            let paths = paths(key)
            let decoder = ValueDecoder(facts: facts, scalar: paths.scalar, nested: paths.nested)
            do { return try T(from: decoder) } catch let error as TimelineFormatError where decoder.readValues.value {
                // A value with values of its own: the error names the one at fault.
                throw error
            } catch DecodingError.dataCorrupted(let context) where !(type is any CaseIterable.Type) {
                // A type that reads its own text (a fault's spec) says what it expected.
                throw TimelineFormatError("fact \(paths.scalar) is \"\(facts[paths.scalar] ?? "")\", expected \(context.debugDescription)")
            } catch {
                throw malformed(key, type)
            }
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(ValuesContainer<NestedKey>(facts: facts, prefix: paths(key).nested))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw malformed(key, [String].self) }
        func superDecoder() throws -> any Decoder { TextDecoder(text: "") }
        func superDecoder(forKey key: Key) throws -> any Decoder { TextDecoder(text: facts[paths(key).scalar] ?? "") }
    }

    /// One associated value: its fact's text, or its own values under `nested`.
    struct ValueDecoder: Decoder {
        final class Flag { var value = false }
        let facts: [String: String]
        let scalar: String
        let nested: String
        /// Whether the value read values of its own (then its errors are theirs).
        let readValues = Flag()
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            readValues.value = true
            return KeyedDecodingContainer(ValuesContainer<Key>(facts: facts, prefix: nested))
        }
        /// A list of words: the fact's items between commas (spaces around them, as older lines
        /// wrote `password, apple.com`, ignored); a missing or empty fact is an empty list.
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let items = (facts[scalar] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            return ListDecoder(items: items)
        }
        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            guard let text = facts[scalar] else { throw TimelineFormatError("fact \(scalar) is missing") }
            return TextDecoder(text: text)
        }
    }

    /// A list fact's items, each read as its text.
    struct ListDecoder: UnkeyedDecodingContainer {
        let items: [String]
        var codingPath: [any CodingKey] = []
        var currentIndex = 0
        var count: Int? { items.count }
        var isAtEnd: Bool { currentIndex >= items.count }
        mutating func decodeNil() throws -> Bool { false }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            guard !isAtEnd else { throw TimelineFormatError("the list has \(items.count) items") }
            defer { currentIndex += 1 }
            return try T(from: TextDecoder(text: items[currentIndex]))
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            throw TimelineFormatError("a list's items are words")
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw TimelineFormatError("a list's items are words") }
        mutating func superDecoder() throws -> any Decoder { TextDecoder(text: "") }
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
