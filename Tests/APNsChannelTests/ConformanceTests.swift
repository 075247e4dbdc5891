import APNsReceiver
import APNsSender
import APNsWire
import Foundation
import HTTP2Wire
import TestSupport
import Testing

/// push-receiver's HTTP/2 against clients we did not write and against abuse, over real sockets.
/// The rules themselves are tested frame by frame in HTTP2WireTests; these show the real server
/// keeps them on both transports.
@Suite("push-receiver's HTTP/2: conformance and abuse, over sockets")
struct ConformanceTests {
    enum Transport: String, CaseIterable, CustomTestStringConvertible {
        case cleartext, tls
        var testDescription: String { rawValue }
    }

    @Test("h2spec's generic, http2 and hpack cases, driven by PyPI h2's hyperframe and hpack, all pass", arguments: Transport.allCases)
    func conformance(transport: Transport) async throws {
        guard await toolAvailable(["python3", "-c", "import hyperframe, hpack"]) else { return }
        try await withFixture { fixture in
            let token = try fixture.device()
            let port = try #require(fixture.channel.receiver.port(for: .sandbox, transport: transport == .tls ? .tls : .cleartext))
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../Clients/h2_conformance.py").standardized.path
            // A GET to a device path is answered 405 with APNs's JSON: every case that needs an
            // answer body (flow control) has one.
            let run = try await runProgram(["python3", script, "127.0.0.1", String(port), "--path", "/3/device/\(token.hex)"]
                                           + (transport == .tls ? ["--tls"] : []))
            let failures = run.output.split(separator: "\n").filter { $0.hasPrefix("FAIL") }
            #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
            #expect(run.status == 0)
            let summary = run.output.split(separator: "\n").last.map(String.init) ?? ""
            #expect(summary.hasPrefix("passed "), "\(run.output.suffix(2000))")
            // Nothing the suite sent was a valid push.
            #expect(try fixture.deliveryLog().isEmpty)
        }
    }

    /// The abuse patterns, as a client sends them on a connection of its own.
    enum Pattern: String, CaseIterable, CustomTestStringConvertible {
        case rapidReset = "rapid reset", continuationFlood = "CONTINUATION flood", settingsFlood = "SETTINGS flood",
             pingFlood = "PING flood", emptyDataFlood = "empty DATA flood", glitches = "malformed requests"
        var testDescription: String { rawValue }

        /// How many frames a rate-limited flood sends: the limit's burst, and a minute of its rate
        /// more. A flood of burst + 100 (as before) ran under the limit on a busy machine that took
        /// over 3 s to read it (the bucket refilled meanwhile): no GOAWAY came, once in eight stress runs.
        static func flood(_ limit: HTTP2RateLimit) -> Int { limit.burst + 60 * limit.perSecond }

        func frames(_ fixture: Fixture, token: DeviceToken) -> [UInt8] {
            let request = RawHTTP2Tests.request(fixture, token: token)
            let limits = HTTP2AbuseLimits()
            switch self {
            case .rapidReset:
                return (0..<Self.flood(limits.resets)).flatMap { index -> [UInt8] in
                    let stream = UInt32(2 * index + 1)
                    return frame(type: 1, flags: 0x4, stream: stream, request) + frame(type: 3, flags: 0, stream: stream, [0, 0, 0, 8])
                }
            case .continuationFlood:
                return frame(type: 1, flags: 0, stream: 1, Array(request.prefix(10)))
                    + (0..<100).flatMap { _ in frame(type: 9, flags: 0, stream: 1, []) }
            case .settingsFlood:
                return (0..<Self.flood(limits.controlFrames)).flatMap { _ in frame(type: 4, flags: 0, stream: 0, [0, 3, 0, 0, 0, 100]) }
            case .pingFlood:
                return (0..<Self.flood(limits.controlFrames)).flatMap { _ in frame(type: 6, flags: 0, stream: 0, [1, 2, 3, 4, 5, 6, 7, 8]) }
            case .emptyDataFlood:
                return frame(type: 1, flags: 0x4, stream: 1, request) + (0..<200).flatMap { _ in frame(type: 0, flags: 0, stream: 1, []) }
            case .glitches:
                // HEADERS that depend on themselves: each a stream error, all at once.
                return (0..<Self.flood(limits.glitches)).flatMap { index -> [UInt8] in
                    let stream = UInt32(2 * index + 1)
                    return frame(type: 1, flags: 0x25, stream: stream, withUnsafeBytes(of: stream.bigEndian, Array.init) + [15] + request)
                }
            }
        }
    }

    @Test("each abuse pattern ends the abuser's connection with GOAWAY ENHANCE_YOUR_CALM while another client's pushes go on",
          arguments: Pattern.allCases)
    func abuse(pattern: Pattern) async throws {
        try await withFixture { fixture in
            let token = try fixture.device()
            let port = try #require(fixture.channel.receiver.port(for: .sandbox, transport: .cleartext))
            let client = try fixture.client()
            // A provider's connection, open and pushing before and while the abuse happens.
            let push = { try await client.send(PushRequest(deviceToken: token, headers: PushHeaders(pushType: .background, topic: Fixture.bundleID),
                                                           payload: Fixture.silent)) }
            #expect(try await push().status == 200)
            let flood = pattern.frames(fixture, token: token)
            async let verdict = onOwnThread { () -> (code: UInt32?, closed: Bool) in
                let abuser = try RawHTTP2Tests.RawClient(port: port)
                abuser.send(flood)
                let frames = abuser.read { $0.type == 7 }
                let goAway = frames.last.flatMap(RawHTTP2Tests.goAwayCode)
                return (goAway, abuser.next() == nil)
            }
            var answered = 0
            for _ in 0..<20 where try await push().status == 200 { answered += 1 }
            let (code, closed) = try await verdict
            #expect(code == 0xb, "GOAWAY code \(code.map(String.init) ?? "none")")
            #expect(closed)
            // The provider's connection was never touched: its pushes before, during and after.
            for _ in 0..<5 where try await push().status == 200 { answered += 1 }
            await client.shutdown()
            #expect(answered == 25)
            #expect(try fixture.deliveryLog().count == 26)
        }
    }
}
