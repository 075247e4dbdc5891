import Foundation
import Testing
@testable import Utilities

/// `StrictJSONDecoder` against Foundation's `JSONDecoder`: wherever its fast path answers,
/// Foundation gives the same value; where it gives up, the answer is Foundation's; and the bodies
/// a sign-in reads do take the fast path.
@Suite("StrictJSONDecoder answers as Foundation's JSONDecoder")
struct StrictJSONDecoderTests {
    struct Inner: Codable, Equatable {
        var name: String
        var count: Int?
    }

    struct Sample: Codable, Equatable {
        var text: String
        var number: Int?
        var flag: Bool?
        var ratio: Double?
        var small: UInt8?
        var big: Int64?
        var list: [String]?
        var nested: [Inner]?
        var map: [String: Int]?
        var any: JSONValue?
    }

    static let seeds = [
        #"{"text":"a","number":-12,"flag":true,"ratio":0.25,"small":255,"big":-9223372036854775808,"list":["x","y"],"nested":[{"name":"n","count":1},{"name":"m"}],"map":{"k":1,"é":2},"any":{"a":[1,2.5,"s",null,true,{"b":{}}]}}"#,
        #"  {"text" : "esc \" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00 \u0000" , "number" : 0 , "ratio" : 1e-7 , "any" : -0.0 }  "#,
        #"{"text":"","any":"string","list":[],"nested":[],"map":{},"unknown":{"deep":[[[1]]]}}"#,
        #"{"text":"t","number":null,"flag":null,"any":null}"#,
        #"{"text":"t","ratio":12345678901234567890,"big":9223372036854775807,"any":[1E3,2e+2,3e-2]}"#,
    ]

    /// The fast path's value, when it answers, is Foundation's.
    static func agree<T: Decodable & Equatable>(_ type: T.Type, _ bytes: [UInt8]) -> String? {
        guard let fast = try? StrictJSONDecoder.fastDecode(type, from: bytes) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).debugDescription
        do {
            let reference = try JSONDecoder().decode(type, from: Data(bytes))
            return fast == reference ? nil : "\(text): fast \(fast), Foundation \(reference)"
        } catch {
            return "\(text): fast \(fast), Foundation refuses: \(error)"
        }
    }

    @Test("the seeds take the fast path, to Foundation's values")
    func seeds() throws {
        for seed in Self.seeds {
            let bytes = Array(seed.utf8)
            let fast = try StrictJSONDecoder.fastDecode(Sample.self, from: bytes)
            #expect(fast == (try JSONDecoder().decode(Sample.self, from: Data(bytes))))
            #expect(try StrictJSONDecoder().decode(Sample.self, from: bytes) == fast)
        }
    }

    /// Foundation takes 512 levels of nesting and refuses 513; the fast path answers up to its
    /// limit (the same 512) and agrees. A deep value is read in one pass (`JSONValue.parse(strict:)`): through
    /// `Decodable`, Foundation's decoder fails an attempt per level naming the whole path, which
    /// made a 456-level body cost a debug backend 1.7 s (found by the toolkit-json fuzz target).
    /// Each body is given to Foundation once (its deep readings are the test's cost: 20 s of CPU
    /// when each was read three times, at eight depths).
    @Test("nesting at Foundation's limit: the same values and refusals; a deep value is read in one pass")
    func deepNesting() throws {
        for depth in [255, 256, 257, 511, 512, 513] {
            let arrays = Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
            let inSample = Array((#"{"text":"t","any":"# + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1) + "}").utf8)
            let foundation = try? JSONDecoder().decode(JSONValue.self, from: Data(arrays))
            let foundationSample = try? JSONDecoder().decode(Sample.self, from: Data(inSample))
            #expect((foundation != nil) == (depth <= 512), "\(depth): Foundation's limit moved")
            #expect((foundationSample != nil) == (depth <= 512), "\(depth): Foundation's limit moved")
            // The fast path, where it answers, answers Foundation's value.
            if let fast = try? StrictJSONDecoder.fastDecode(JSONValue.self, from: arrays) { #expect(fast == foundation, "\(depth)") }
            if let fast = try? StrictJSONDecoder.fastDecode(Sample.self, from: inSample) { #expect(fast == foundationSample, "\(depth)") }
            let parsed = JSONValue.parse(strict: arrays)
            #expect(parsed == foundation, "\(depth)")
            #expect((parsed != nil) == (depth <= 512), "\(depth): the one-pass reading gave up where Foundation answers")
        }
    }

    @Test("a key given twice: a value read whole keeps the first, as Foundation's decoder does")
    func repeatedKeys() throws {
        for text in [#"{"a":1,"a":2}"#, #"{"b":[1,{"c":3,"c":[4]}],"a":"x","a":null}"#, #"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k3":"again"}"#] {
            let foundation = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            #expect(JSONValue.parse(strict: Array(text.utf8)) == foundation, "\(text)")
            // The typed fast path still leaves the choice to Foundation.
            #expect((try? StrictJSONDecoder.fastDecode(JSONValue.self, from: Array(text.utf8))) == nil)
        }
    }

    @Test("10,000 mutated bodies: the fast path never answers other than Foundation")
    func mutations() {
        var random = SplitMix(seed: 0x0DEC0DE)
        let alphabet = Array(#"{}[]":,.-+eE0123456789 \/"u\abcdfnrtxlsDd"#.utf8) + [0x00, 0x09, 0x0A, 0xC3, 0xA9, 0xFF, 0xED, 0xA0]
        var disagreements: [String] = []
        var fast = 0
        for round in 0..<10_000 {
            var bytes = Array(Self.seeds[round % Self.seeds.count].utf8)
            for _ in 0..<(1 + Int(random.next() % 3)) {
                let position = Int(random.next() % UInt64(bytes.count + 1))
                switch random.next() % 3 {
                case 0: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: position)
                case 1: if position < bytes.count { bytes.remove(at: position) }
                default: if position < bytes.count { bytes[position] = alphabet[Int(random.next() % UInt64(alphabet.count))] }
                }
            }
            if (try? StrictJSONDecoder.fastDecode(Sample.self, from: bytes)) != nil { fast += 1 }
            var problems = [Self.agree(Sample.self, bytes), Self.agree(JSONValue.self, bytes)].compactMap { $0 }
            // The one-pass reading of a whole value, too.
            if let parsed = JSONValue.parse(strict: bytes), parsed != (try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))) {
                problems.append("\(String(decoding: bytes, as: UTF8.self).debugDescription): parse(strict:) \(parsed), Foundation differs")
            }
            for problem in problems where disagreements.count < 10 {
                disagreements.append(problem)
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.joined(separator: "\n"))")
        // Enough of the mutations stay valid for the comparison to mean something.
        #expect(fast > 500, "only \(fast) mutated bodies took the fast path")
    }

    @Test("large objects: keys looked up through an index past 16, a key given twice found there too")
    func largeObjects() throws {
        for count in [16, 17, 200] {
            let entries = (0..<count).map { "\"k\($0)\":\($0)" }
            let bytes = Array(("{\"text\":\"t\",\"map\":{" + entries.joined(separator: ",") + "}}").utf8)
            let fast = try StrictJSONDecoder.fastDecode(Sample.self, from: bytes)
            #expect(fast.map?.count == count && fast.map?["k\(count - 1)"] == count - 1)
            #expect(fast == (try JSONDecoder().decode(Sample.self, from: Data(bytes))))
            let twice = Array(("{\"text\":\"t\",\"map\":{" + entries.joined(separator: ",") + ",\"k0\":7}}").utf8)
            #expect((try? StrictJSONDecoder.fastDecode(Sample.self, from: twice)) == nil)
            let reference = Result { try JSONDecoder().decode(Sample.self, from: Data(twice)) }
            let ours = Result { try StrictJSONDecoder().decode(Sample.self, from: twice) }
            switch (ours, reference) {
            case (.success(let a), .success(let b)): #expect(a == b)
            case (.failure(let a), .failure(let b)): #expect("\(a)" == "\(b)")
            default: Issue.record("a key given twice: ours \(ours), Foundation \(reference)")
            }
        }
    }

    @Test("where the fast path gives up, the value or the error is Foundation's")
    func fallback() throws {
        // Foundation's own reading: a key given twice, an integer written with a fraction.
        for text in [#"{"text":"a","text":"b"}"#, #"{"text":"a","number":2.0}"#, #"{"text":"a","any":1e400}"#] {
            let bytes = Array(text.utf8)
            #expect((try? StrictJSONDecoder.fastDecode(Sample.self, from: bytes)) == nil)
            let reference = Result { try JSONDecoder().decode(Sample.self, from: Data(bytes)) }
            let ours = Result { try StrictJSONDecoder().decode(Sample.self, from: bytes) }
            switch (ours, reference) {
            case (.success(let a), .success(let b)): #expect(a == b)
            case (.failure(let a), .failure(let b)): #expect("\(a)" == "\(b)")
            default: Issue.record("\(text): ours \(ours), Foundation \(reference)")
            }
        }
        // Errors carry Foundation's case and path.
        let error = #expect(throws: DecodingError.self) { try StrictJSONDecoder().decode(Sample.self, from: Array(#"{"text":1}"#.utf8)) }
        guard case .typeMismatch(_, let context)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(context.codingPath.map(\.stringValue) == ["text"])
    }
}
