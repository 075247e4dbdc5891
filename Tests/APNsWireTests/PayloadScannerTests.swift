import APNsWire
import Foundation
import Testing
import Utilities

/// The payload reader is hand-written for speed; these tests hold it to what `JSONSerialization`
/// accepts and refuses, on edge cases and on tens of thousands of mutated payloads.
@Suite("Payload reading agrees with JSONSerialization")
struct PayloadScannerTests {
    /// What the receiver concluded before the scanner: JSONSerialization's verdict.
    enum Verdict: Equatable { case invalidJSON, notAnObject, apsNotAnObject, invalidTargetBundle, accepted(background: Bool) }

    static func reference(_ bytes: [UInt8]) -> Verdict {
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(bytes)) else { return .invalidJSON }
        guard let object = parsed as? [String: Any] else { return .notAnObject }
        if let aps = object["aps"], !(aps is [String: Any]) { return .apsNotAnObject }
        if let target = object["Simulator Target Bundle"], !(target is String) { return .invalidTargetBundle }
        guard let aps = object["aps"] as? [String: Any], aps.count == 1, let value = aps["content-available"] as? Int else {
            return .accepted(background: false)
        }
        return .accepted(background: value == 1)
    }

    static func scanned(_ bytes: [UInt8]) -> Verdict {
        do {
            return .accepted(background: try NotificationPayload(json: bytes).isBackground)
        } catch {
            switch error.code {
            case .invalidJSON: return .invalidJSON
            case .notAnObject: return .notAnObject
            case .apsNotAnObject: return .apsNotAnObject
            case .invalidTargetBundle: return .invalidTargetBundle
            default: return .invalidJSON
            }
        }
    }

    /// The same verdict, except where Foundation's parser is laxer than RFC 8259: it takes a
    /// trailing comma (`{"k":1,}`), which is not JSON; the receiver refuses it.
    static func agree(_ bytes: [UInt8]) -> Bool {
        let (ours, theirs) = (scanned(bytes), reference(bytes))
        if ours == theirs { return true }
        guard ours == .invalidJSON else { return false }
        let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        return text.contains(",}") || text.contains(",]")
    }

    static let seeds: [String] = [
        #"{"aps":{"content-available":1}}"#,
        #"{"aps":{"content-available":1},"firebaseAuthNotification":{"receipt":"r-1","secret":"s-2"}}"#,
        #"{"aps":{"alert":{"title":"Hi","body":"\u00e9t\u00e9 \ud83d\ude00"},"sound":"default","badge":3}}"#,
        #"{"aps":{"content-available":1.0},"x":[1,2.5e3,-0.0,true,false,null,"\/"]}"#,
        #"{"aps":{"content-available":1,"sound":""}}"#,
        #"{"aps":{"content-available":0}}"#,
        #"{"aps":{"content-available":"1"}}"#,
        #"{"aps":{"content-available":true}}"#,
        #"{"aps":{"content-available":1e0}}"#,
        #"{"aps":{"content-available":10E-1}}"#,
        #"{"aps":{"content-available":1,"content-available":1}}"#,
        #"{"aps":[],"aps":{"content-available":1}}"#,
        #"{"aps":{"content-available":1},"aps":{}}"#,
        #"{"a\u0070s":{"content\u002davailable":1}}"#,
        #"{"aps":"x"}"#,
        #"{"Simulator Target Bundle":"com.example.app","aps":{"content-available":1}}"#,
        #"{"Simulator Target Bundle":7}"#,
        #"[{"aps":{}}]"#,
        #"  {"aps" : { "content-available" : 1 } }  "#,
        "{\"k\":\"tab\tinside\"}",
        #"{"k":"\ud800"}"#,
        #"{"k":"\udc00\ud800"}"#,
        #"{"k":01}"#,
        #"{"k":1.}"#,
        #"{"k":.5}"#,
        #"{"k":-}"#,
        #"{"k":+1}"#,
        #"{"k":1e}"#,
        #"{"k":tru}"#,
        #"{"k":nul}"#,
        #"{"k":1,}"#,
        #"{,}"#,
        #"{}"#,
        #"{} x"#,
        "1",
        #""string""#,
        "null",
        "",
        " ",
        #"{"k":"\x"}"#,
        #"{"k":"\u12"}"#,
        #"{"k":"\uZZZZ"}"#,
    ]

    @Test("hand-picked edge cases")
    func edgeCases() {
        for seed in Self.seeds {
            let bytes = Array(seed.utf8)
            guard !bytes.isEmpty else { continue }
            #expect(Self.agree(bytes), "\(seed): ours \(Self.scanned(bytes)), JSONSerialization \(Self.reference(bytes))")
        }
        // Invalid UTF-8 inside a string, an overlong encoding, and a lone continuation byte.
        for bytes: [UInt8] in [[0x7B, 0x22, 0x6B, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D],
                               [0x7B, 0x22, 0x6B, 0x22, 0x3A, 0x22, 0xC0, 0xAF, 0x22, 0x7D],
                               [0x7B, 0x22, 0x6B, 0x22, 0x3A, 0x22, 0x80, 0x22, 0x7D]] {
            #expect(Self.scanned(bytes) == Self.reference(bytes), "\(bytes)")
        }
        // Nesting: JSONSerialization's limit is 512 levels.
        for depth in [500, 511, 512, 513, 600] {
            let bytes = Array(("{\"aps\":" + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1) + "}").utf8)
            #expect(Self.scanned(bytes) == Self.reference(bytes), "depth \(depth)")
        }
    }

    @Test("30,000 mutated payloads: the same verdict as JSONSerialization")
    func mutations() {
        var random = SplitMix(seed: 0x5EED)
        let alphabet = Array(#"{}[]":,.-+eE0123456789 \/"u\abcdfnrtx"#.utf8) + [0x00, 0x09, 0x0A, 0xC3, 0xA9, 0xFF, 0xED, 0xA0]
        var disagreements: [String] = []
        for round in 0..<30_000 {
            var bytes = Array(Self.seeds[round % Self.seeds.count].utf8)
            for _ in 0..<(1 + Int(random.next() % 3)) {
                let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count + 1))
                switch random.next() % 3 {
                case 0: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: position)
                case 1: if position < bytes.count { bytes.remove(at: position) }
                default: if position < bytes.count { bytes[position] = alphabet[Int(random.next() % UInt64(alphabet.count))] }
                }
            }
            guard !bytes.isEmpty else { continue }
            if !Self.agree(bytes), disagreements.count < 10 {
                let (ours, theirs) = (Self.scanned(bytes), Self.reference(bytes))
                disagreements.append("\(String(decoding: bytes, as: UTF8.self).debugDescription): ours \(ours), JSONSerialization \(theirs)")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.joined(separator: "\n"))")
    }
}
