@testable import APNsReceiver
import APNsWire
import DeviceLink
import Foundation
import Synchronization
import Testing
import TestSupport
import Utilities

/// While nothing on the device side can take a push (no device connected through the gateway, no
/// app, no observer), the receiver hands background pushes over as their delivery-log lines, and
/// the hub reads them back from the log file only for a device that connected before their
/// latency passed.
@Suite("Pushes handed to the device side as their delivery-log lines")
struct LogLineHandOffTests {
    /// A push with every optional field, strings that need escaping, a VoIP topic (whose bundle ID
    /// drops `.voip`) and a payload with a line break.
    static func push(_ index: Int) -> AcceptedPush {
        AcceptedPush(receivedAt: Date(timeIntervalSince1970: 1_800_000_000.123 + Double(index)), environment: .sandbox,
                     apnsID: "0e4b7ed3-1d5b-4a32-9b49-a4b7f4d0f3\(String(format: "%02x", index % 256))",
                     apnsUniqueID: "7f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f", deviceToken: DeviceToken(hex: "ab12cd34")!,
                     topic: "com.example.authsim.voip", bundleID: "com.example.authsim", pushType: .voip, priority: .immediate,
                     expiration: 1_800_000_600, collapseID: "a \"quoted\" id\\", teamID: "TEAM", keyID: "KEY",
                     payload: Array("{\"aps\":{\"content-available\":1},\n\"n\":\(index)}".utf8), isBackground: true, dropped: false)
    }

    /// `pushes` in a fresh delivery log in `folder`, as one read's lines: the log and where they are.
    static func logged(_ pushes: [AcceptedPush], in folder: URL) throws -> (DeliveryLog, HandedLines) {
        let (log, reads) = try logged(reads: [pushes[...]], in: folder)
        return (log, reads[0])
    }

    /// `reads` in a fresh delivery log in `folder`, each appended as one read's lines.
    static func logged(reads: [ArraySlice<AcceptedPush>], in folder: URL) throws -> (DeliveryLog, [HandedLines]) {
        let log = try DeliveryLog(file: folder.appendingPathComponent("deliveries.jsonl"))
        var encoder = DeliveryLog.LineEncoder()
        let handed = try reads.map { pushes in
            var lines = BatchLines()
            for push in pushes { lines.append(push, with: &encoder) }
            let at = try log.append(lines: lines.bytes)
            return HandedLines(.file(log, at: at), ranges: (0..<lines.count).map(lines.range))
        }
        return (log, handed)
    }

    /// What a push read back from its line keeps: the time to its millisecond, and the payload's
    /// line breaks as spaces (as the device gateway sends it); everything else as accepted.
    static func asReadBack(_ push: AcceptedPush) -> AcceptedPush {
        var expected = push
        expected.receivedAt = Date(timeIntervalSince1970: (push.receivedAt.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        expected.payload = push.payload.map { $0 == 0x0A ? 0x20 : $0 }
        return expected
    }

    @Test("a delivery-log line reads back into the push it was written from")
    func lineReadsBack() throws {
        var encoder = DeliveryLog.LineEncoder()
        for push in [Self.push(1), DeviceGatewayTests.push] {
            var line: [UInt8] = []
            encoder.encode(push, into: &line)
            let read = try #require(AcceptedPush(deliveryLogLine: line[...]))
            #expect(read == Self.asReadBack(push))
        }
        // Not a line the encoder wrote: no push, whatever else it holds.
        #expect(AcceptedPush(deliveryLogLine: Array(#"{"time":"2026-01-01T00:00:00.000Z"}"#.utf8)[...]) == nil)
        var cut: [UInt8] = []
        encoder.encode(Self.push(2), into: &cut)
        #expect(AcceptedPush(deliveryLogLine: cut.dropLast(3)) == nil)
    }

    @Test("the log says where each append began, reads it back from the file, and nothing once the file is emptied")
    func appendsAreLocated() throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (log, first) = try Self.logged([Self.push(1), Self.push(2)], in: folder)
        var encoder = DeliveryLog.LineEncoder()
        var lines = BatchLines()
        lines.append(Self.push(3), with: &encoder)
        let at = try log.append(lines: lines.bytes)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: log.file.path)[.size] as? Int)
        #expect(at.offset == Int64(size - lines.bytes.count) && at.generation == 0)
        #expect(log.read(at: at, count: lines.bytes.count) == lines.bytes)
        #expect(first.pushes() == [1, 2].map { Self.asReadBack(Self.push($0)) })
        // Past the file's end: nothing.
        #expect(log.read(at: at, count: lines.bytes.count + 1) == nil)

        // `push-receiver reset` empties the file under the running writer: what was appended before
        // is gone, even once lines of the same length fill the file again where it was.
        try DeliveryLog.empty(log.file)
        #expect(first.pushes().isEmpty)
        let refilled = try log.append(lines: lines.bytes)
        #expect(refilled.generation == 1)
        _ = try log.append(lines: lines.bytes)
        #expect(first.pushes().isEmpty && log.read(at: at, count: lines.bytes.count) == nil)
        #expect(log.read(at: refilled, count: lines.bytes.count) == lines.bytes)
    }

    @Test("the hub takes lines only while nothing there can take a push")
    func takesLinesWhileNothingTakesPushes() async {
        let hub = DeviceHub()
        #expect(hub.takesLogLines)
        let token = DeviceToken(hex: "ab12cd34")!
        let id = await hub.connect(token: token, environment: .sandbox) { _ in }
        #expect(!hub.takesLogLines)
        await hub.disconnect(id)
        #expect(hub.takesLogLines)
        let app = RecordingApp(bundleID: "com.example.authsim")
        await hub.install(app, token: token, environment: .sandbox)
        #expect(!hub.takesLogLines)
        await hub.remove(token: token, environment: .sandbox)
        #expect(hub.takesLogLines)
        await hub.setLosesPushes(true)
        #expect(!hub.takesLogLines)
        await hub.setLosesPushes(false)
        #expect(hub.takesLogLines)
        #expect(!DeviceHub(observer: { _, _ in }).takesLogLines)
    }

    @Test("lines handed over while nothing could take them reach a device that connected before their latency passed")
    func lateDeviceGetsLines() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pushes = (0..<3).map(Self.push)
        let (_, lines) = try Self.logged(pushes, in: folder)
        let clock = ManualClock()
        let hub = DeviceHub(latency: .seconds(1), clock: clock)
        let delivery = Task { await hub.deliver(handed: [.lines(lines)]) }
        await clock.waitForSleepers(1)
        let got = Mutex<[AcceptedPush]>([])
        _ = await hub.connect(token: pushes[0].deviceToken, environment: .sandbox) { push in got.withLock { $0.append(push) } }
        clock.advance(by: .seconds(1))
        await delivery.value
        #expect(got.withLock { $0 } == pushes.map(Self.asReadBack))
    }

    @Test("lines nothing could take by the end of their latency are let go: a device that connects after gets none of them")
    func linesLetGo() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pushes = (0..<3).map(Self.push)
        let (_, lines) = try Self.logged(pushes, in: folder)
        let clock = ManualClock()
        let hub = DeviceHub(latency: .seconds(1), clock: clock)
        let delivery = Task { await hub.deliver(handed: [.lines(lines)]) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await delivery.value
        let got = Mutex<[AcceptedPush]>([])
        _ = await hub.connect(token: pushes[0].deviceToken, environment: .sandbox) { push in got.withLock { $0.append(push) } }
        // A push after them still reaches the device, after its own latency: only the lines were let go.
        let later = Task { await hub.deliver(Self.push(3)) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await later.value
        #expect(got.withLock { $0 } == [Self.push(3)])
    }
}
