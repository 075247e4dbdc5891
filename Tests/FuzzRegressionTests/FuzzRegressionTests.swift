import Foundation
import FuzzTargets
import Testing

let fuzzRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fuzz")

@Suite("Fuzz targets: the seed corpus and every past crash run through them without crashing")
struct FuzzRegressionTests {
    @Test("each target has seeds, and seeds and regressions replay cleanly", arguments: FuzzTargets.all.keys.sorted())
    func replay(_ name: String) throws {
        let target = try #require(FuzzTargets.all[name])
        let seeds = FuzzTargets.replay(target, paths: [fuzzRoot.appendingPathComponent("corpus/\(name)")])
        #expect(seeds > 0, "Fuzz/corpus/\(name) has no seed")
        _ = FuzzTargets.replay(target, paths: [fuzzRoot.appendingPathComponent("regressions/\(name)")])
    }

    @Test("hostile shapes: huge, deeply nested, truncated and binary inputs", arguments: FuzzTargets.all.keys.sorted())
    func hostile(_ name: String) throws {
        let target = try #require(FuzzTargets.all[name])
        let nested = Array(String(repeating: "[", count: 10_000).utf8)
        for input in [[], [UInt8](repeating: 0xff, count: 100_000), nested, Array("{\"a\":".utf8), (0..<256).map { UInt8($0) },
                      Array(String(repeating: "a.", count: 50_000).utf8)] {
            target(input)
        }
    }
}
