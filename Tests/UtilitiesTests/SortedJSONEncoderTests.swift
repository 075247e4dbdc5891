import Foundation
import Testing
import Utilities

/// `SortedJSONEncoder` against Foundation's `JSONEncoder` with `.sortedKeys`: the same bytes for
/// every shape Codable can give (nested and repeated containers, `superEncoder`, the types
/// Foundation writes its own way, every escape), and the same refusals.
@Suite("SortedJSONEncoder writes Foundation's bytes")
struct SortedJSONEncoderTests {
    static func foundation(slashes: Bool, dates: SortedJSONEncoder.Dates) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = slashes ? [.sortedKeys] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = switch dates {
        case .deferredToDate: .deferredToDate
        case .secondsSince1970: .secondsSince1970
        }
        return encoder
    }

    /// Both encoders' bytes for `value`, in every option this encoder has.
    static func expectSame<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for slashes in [true, false] {
            for dates in [SortedJSONEncoder.Dates.deferredToDate, .secondsSince1970] {
                let ours = try SortedJSONEncoder(escapesSlashes: slashes, dates: dates).encode(value)
                let theirs = Array(try foundation(slashes: slashes, dates: dates).encode(value))
                #expect(String(decoding: ours, as: UTF8.self) == String(decoding: theirs, as: UTF8.self), sourceLocation: sourceLocation)
            }
        }
    }

    struct Everything: Codable {
        var text = "a/b \"q\" \\ \u{08}\u{0C}\n\r\t\u{01}\u{1F}\u{7F} é 𝄞 </script>"
        var flag = true
        var int = Int.min
        var int8 = Int8.min, int16 = Int16.max, int32 = Int32.min, int64 = Int64.max
        var uint = UInt.max, uint8 = UInt8.max, uint16 = UInt16(7), uint32 = UInt32.max, uint64 = UInt64.max
        var double = 0.1, whole = 3.0, tiny = 1e-7, huge = 1e300, negativeZero = -0.0, big = 1e21
        var float: Float = 1.5, floatWhole: Float = 2
        var missing: String? = nil
        var present: Int? = 0
        var date = Date(timeIntervalSince1970: 1_795_514_400.25)
        var data = Data([0, 1, 2, 250, 255])
        var url = URL(string: "https://example.com/a path?q=1")!
        var decimal = Decimal(string: "12.340")!
        var strings = ["b", "a", ""]
        var ints = [3, -1, 0]
        var doubles = [1.0, 0.5]
        var nested = [Inner(name: "x"), Inner(name: "y", values: ["k": 1, "K": 2, "ka": 3, "é": 4, "Z": 5, "": 6])]
        var dates = [Date(timeIntervalSinceReferenceDate: 0)]
        var optionals: [String?] = ["a", nil]
        var empty = Empty()
        var emptyArray: [Int] = []
        var emptyMap: [String: Int] = [:]
        var intKeys = [2: "two", 10: "ten"]
        var matrix = [[1, 2], [], [3]]
    }

    struct Inner: Codable {
        var name: String
        var values: [String: Int] = [:]
    }

    /// Encodes nothing at all: Foundation writes `{}`.
    struct Empty: Codable {
        init() {}
        init(from decoder: any Decoder) throws {}
        func encode(to encoder: any Encoder) throws {}
    }

    @Test("every kind of value, escape and number, in both slash and date options")
    func everything() throws {
        try Self.expectSame(Everything())
        try Self.expectSame(["z": Everything(), "a": Everything()])
    }

    /// Containers asked for twice, nested containers, `superEncoder`, a key given twice.
    struct Handwritten: Encodable {
        enum Key: String, CodingKey { case b, a, nested, list, again, super_ = "super", custom }
        func encode(to encoder: any Encoder) throws {
            var first = encoder.container(keyedBy: Key.self)
            try first.encode("first", forKey: .b)
            var second = encoder.container(keyedBy: Key.self)
            try second.encode(1, forKey: .a)
            try second.encode(2, forKey: .a)
            var nested = first.nestedContainer(keyedBy: Key.self, forKey: .nested)
            try nested.encode(true, forKey: .b)
            var again = first.nestedContainer(keyedBy: Key.self, forKey: .nested)
            try again.encode(false, forKey: .a)
            var list = first.nestedUnkeyedContainer(forKey: .list)
            try list.encode("one")
            var inner = list.nestedContainer(keyedBy: Key.self)
            try inner.encodeNil(forKey: .a)
            var innerList = list.nestedUnkeyedContainer()
            try innerList.encode(1.25)
            try list.encode(Inner(name: "in a list"))
            let superEncoder = first.superEncoder()
            var superContainer = superEncoder.container(keyedBy: Key.self)
            try superContainer.encode("from super", forKey: .a)
            let custom = first.superEncoder(forKey: .custom)
            var single = custom.singleValueContainer()
            try single.encode([1, 2])
            let listSuper = list.superEncoder()
            var listSuperSingle = listSuper.singleValueContainer()
            try listSuperSingle.encode("last")
        }
    }

    @Test("containers asked for twice, nested containers, superEncoder, a key given twice")
    func handwritten() throws {
        try Self.expectSame(Handwritten())
    }

    @Test("top-level fragments: a string, a number, an array, nil; a top-level value that encodes nothing is refused")
    func fragments() throws {
        try Self.expectSame("just / text")
        try Self.expectSame(42)
        try Self.expectSame(-2.5)
        try Self.expectSame([Inner(name: "a")])
        try Self.expectSame(Optional<Int>.none)
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(Empty()) }
        #expect(throws: EncodingError.self) { try SortedJSONEncoder().encode(Empty()) }
    }

    /// Random trees: keys and strings from bytes that sort differently as UTF-8 than as Swift
    /// strings or case-insensitively, numbers at their edges.
    enum Tree: Encodable {
        case object([(String, Tree)])
        case array([Tree])
        case string(String)
        case int(Int)
        case double(Double)
        case bool(Bool)
        case null

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .object(let entries):
                var container = encoder.container(keyedBy: Key.self)
                for (key, value) in entries { try container.encode(value, forKey: Key(stringValue: key)) }
            case .array(let items):
                var container = encoder.unkeyedContainer()
                for item in items { try container.encode(item) }
            case .string(let text):
                var container = encoder.singleValueContainer()
                try container.encode(text)
            case .int(let number):
                var container = encoder.singleValueContainer()
                try container.encode(number)
            case .double(let number):
                var container = encoder.singleValueContainer()
                try container.encode(number)
            case .bool(let flag):
                var container = encoder.singleValueContainer()
                try container.encode(flag)
            case .null:
                var container = encoder.singleValueContainer()
                try container.encodeNil()
            }
        }

        static let pieces = ["a", "A", "b", "_", "é", "e\u{301}", "Z", "1", "10", "2", "/", "\"", "\\", "\n", "\u{0}", "𝄞", " ", "ab", "aB"]
        static func text<G: RandomNumberGenerator>(_ random: inout G) -> String {
            (0..<Int.random(in: 0...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
        }

        static func random<G: RandomNumberGenerator>(_ random: inout G, depth: Int = 0) -> Tree {
            switch Int.random(in: depth > 3 ? 2...6 : 0...6, using: &random) {
            case 0: return .object((0..<Int.random(in: 0...6, using: &random)).map { _ in (text(&random), Tree.random(&random, depth: depth + 1)) })
            case 1: return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in Tree.random(&random, depth: depth + 1) })
            case 2: return .string(text(&random))
            case 3: return .int([Int.min, Int.max, 0, -1, 9, 10, Int.random(in: -100_000...100_000, using: &random)].randomElement(using: &random)!)
            case 4: return .double([0.1, 1.0, -0.0, 1e21, 1e-7, 5e-324, Double.greatestFiniteMagnitude, 123.456,
                                    Double.random(in: -1e6...1e6, using: &random)].randomElement(using: &random)!)
            case 5: return .bool(Bool.random(using: &random))
            default: return .null
            }
        }
    }

    @Test("large objects (the standard sort past 16 keys), with keys that collide once read as Swift strings")
    func largeObjects() throws {
        var random = SplitMix(seed: 16)
        for count in [16, 17, 40, 300] {
            var map: [String: Int] = [:]
            while map.count < count { map[Tree.text(&random) + String(random.next() % 1000)] = Int(random.next() % 100) }
            try Self.expectSame(map)
            try Self.expectSame(Tree.object(map.map { ($0.key, Tree.int($0.value)) } + [("é", .int(1)), ("e\u{301}", .int(2)), ("a", .int(3)), ("a", .int(4))]))
        }
    }

    @Test("2,000 random trees")
    func randomTrees() throws {
        var random = SplitMix(seed: 27)
        for _ in 0..<2_000 { try Self.expectSame(Tree.random(&random)) }
    }

    @Test("a number JSON cannot hold is refused at its path, as Foundation refuses it")
    func nonFinite() throws {
        struct Holder: Encodable {
            var list: [Double]
        }
        for value in [Double.nan, .infinity, -.infinity] {
            let ours = #expect(throws: EncodingError.self) { try SortedJSONEncoder().encode(Holder(list: [1, value])) }
            let theirs = #expect(throws: EncodingError.self) { try JSONEncoder().encode(Holder(list: [1, value])) }
            guard case .invalidValue(_, let ourContext)? = ours, case .invalidValue(_, let theirContext)? = theirs else {
                Issue.record("not invalidValue: \(String(describing: ours)) / \(String(describing: theirs))")
                continue
            }
            #expect(ourContext.codingPath.map(\.stringValue) == theirContext.codingPath.map(\.stringValue))
            #expect(ourContext.codingPath.map(\.intValue) == theirContext.codingPath.map(\.intValue))
            #expect(ourContext.debugDescription == theirContext.debugDescription)
        }
    }
}
