import AuthBackend
import Foundation
import FuzzTargets
import Testing

let fuzzRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fuzz")

@Suite("Fuzz targets: the seed corpus and every past crash run through them without crashing")
struct FuzzRegressionTests {
    @Test("each target has seeds, and seeds and regressions replay cleanly", arguments: FuzzTargets.all.keys.sorted())
    func replay(_ name: String) async throws {
        let target = try #require(FuzzTargets.all[name])
        let seeds = await FuzzTargets.replay(target, paths: [fuzzRoot.appendingPathComponent("corpus/\(name)")])
        #expect(seeds > 0, "Fuzz/corpus/\(name) has no seed")
        _ = await FuzzTargets.replay(target, paths: [fuzzRoot.appendingPathComponent("regressions/\(name)")])
    }

    @Test("hostile shapes: huge, deeply nested, truncated and binary inputs", arguments: FuzzTargets.all.keys.sorted())
    func hostile(_ name: String) async throws {
        let target = try #require(FuzzTargets.all[name])
        let nested = Array(String(repeating: "[", count: 10_000).utf8)
        for input in [[], [UInt8](repeating: 0xff, count: 100_000), nested, Array("{\"a\":".utf8), (0..<256).map { UInt8($0) },
                      Array(String(repeating: "a.", count: 50_000).utf8)] {
            await target(input)
        }
    }

    /// The seeds are what clients really send, so the fuzzer starts past the front door: each
    /// Identity Toolkit seed is read by its call's route without an error (the calls are the
    /// backend's table, in its order: the first byte).
    @Test("toolkit-body's seeds are bodies the backend's routes accept")
    func toolkitSeedsAreAccepted() throws {
        let folder = fuzzRoot.appendingPathComponent("corpus/toolkit-body")
        let seeds = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(seeds.count >= 15)
        for name in seeds {
            let bytes = Array(try Data(contentsOf: folder.appendingPathComponent(name)))
            let call = ToolkitCalls.all[Int(bytes[0]) % ToolkitCalls.all.count]
            #expect(name.hasPrefix(call.operation.rawValue), "\(name) picks \(call.operation)")
            let body = Array(bytes.dropFirst(2))
            #expect(throws: Never.self, "\(name)") {
                try call.read(body: body, query: String(decoding: body, as: UTF8.self),
                              contentType: bytes[1] & 1 == 0 ? "application/json" : "application/x-www-form-urlencoded")
            }
        }
    }

    /// inspector-query's seeds are the requests the page and the API's clients send, answered as
    /// `authsim serve` answers them: a wrong request is the client's error, never a 500.
    @Test("inspector-query's seeds are answered as the inspector answers its clients")
    func inspectorSeedsAreAnswered() async throws {
        let folder = fuzzRoot.appendingPathComponent("corpus/inspector-query")
        let refused: [String: Int] = ["pushes-unknown-filter": 400, "faults-bad": 400, "no-such-path": 404, "user-get": 404,
                                      "user-patch": 404, "user-delete": 404, "flow-diagram": 404]
        let seeds = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(seeds.count >= 30)
        // An inspector of this test's own: the target's is shared with the replays running beside it.
        let inspector = try #require(InspectorQueries.makeResponder())
        for name in seeds {
            let answer = try #require(await InspectorQueries.answer(Array(try Data(contentsOf: folder.appendingPathComponent(name))), by: inspector), "\(name)")
            if let status = refused[name] {
                #expect(answer.status.code == status, "\(name)")
            } else {
                #expect((200..<300).contains(answer.status.code), "\(name): \(answer.status)")
                #expect(answer.bytes > 0 || answer.status.code == 204, "\(name)")
            }
        }
    }
}
