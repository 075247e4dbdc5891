@testable import APNsReceiver
import APNsSender
import APNsWire
import Utilities
import Foundation
import Glibc
import TestSupport
import Testing

@Suite("Device registry and delivery log on disk")
struct RegistryAndLogTests {
    // The limit catches a stop that hangs, not a slow machine: with the suite on two busy cores
    // this test once took 109 s and failed a one-minute limit.
    @Test("a running registry's control socket: changes from another process, its user's alone, and a stop no idle client holds up",
          .timeLimit(.minutes(10)))
    func control() async throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("State/devices.json")
        let registry = try DeviceRegistry(file: file)
        let control = try #require(try await RegistryControl.start(registry: registry, runtime: RuntimeDirectory(url: folder.appendingPathComponent("run"))))
        let mode = try FileManager.default.attributesOfItem(atPath: control.socket.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // A client that connects and says nothing (accepted before the next one, which is answered):
        // the stop does not wait for it.
        let idle = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(idle) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in control.socket.path.utf8.enumerated() { path[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(idle, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(connected == 0)
        let device = RegisteredDevice(token: DeviceToken.random(), environment: .sandbox, bundleID: "com.example.authsim")
        #expect(try await RegistryControl.send(.register(device), registryFile: file) == true)
        #expect(registry.lookup(device.token, in: .sandbox) == device)
        #expect(try await RegistryControl.send(.remove(DeviceToken.random(), environment: .sandbox), registryFile: file) == false)
        // A second registry on the same file is refused while this one runs.
        await #expect(throws: ReceiverError.self) {
            _ = try await RegistryControl.start(registry: try DeviceRegistry(file: file), runtime: RuntimeDirectory(url: folder.appendingPathComponent("run")))
        }
        await control.shutdown()
        #expect(!FileManager.default.fileExists(atPath: control.socket.path) && !FileManager.default.fileExists(atPath: control.pointer.path))
        // Stopped: nothing answers, and the command changes the file itself.
        #expect(try await RegistryControl.send(.register(device), registryFile: file) == nil)
    }

    @Test("the registry persists, and a running registry sees another process's change at once")
    func registryPersistence() throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("devices.json")
        let running = try DeviceRegistry(file: file)
        let token = DeviceToken.random()
        #expect(running.lookup(token, in: .sandbox) == nil)

        // The CLI, another process, registers the token: the running registry finds it on the next lookup.
        let cli = try DeviceRegistry(file: file)
        try cli.register(RegisteredDevice(token: token, environment: .sandbox, bundleID: "com.a"))
        #expect(running.lookup(token, in: .sandbox)?.bundleID == "com.a")
        #expect(running.lookup(token, in: .production) == nil)

        #expect(try cli.invalidate(token, in: .sandbox, as: .unregistered, at: Date(timeIntervalSince1970: 1_700_000_000)))
        let reopened = try DeviceRegistry(file: file)
        #expect(reopened.lookup(token, in: .sandbox)?.state == .unregistered)
        #expect(reopened.lookup(token, in: .sandbox)?.invalidSince == 1_700_000_000_000)
        #expect(try reopened.remove(token, in: .sandbox))
        #expect(try !reopened.remove(token, in: .sandbox))
    }

    @Test("a file that is not a registry is a clear error, not an empty registry")
    func corruptRegistry() throws {
        let folder = temporaryDirectory(#function)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("devices.json")
        try Data("{ not json".utf8).write(to: file)
        #expect(throws: ReceiverError(.storage, "")) { try DeviceRegistry(file: file) }
    }

    @Test("the delivery log holds exactly the pushes answered 200, one JSON line each, payload included")
    func deliveryLogMatchesAnswers() async throws {
        try await withFixture { fixture in
            let good = try fixture.device()
            let client = try fixture.client()
            let headers = PushHeaders(pushType: .background, topic: Fixture.bundleID)
            var accepted: [String] = []
            for index in 0..<20 {
                let target = index % 3 == 0 ? DeviceToken.random() : good
                let response = try await client.send(PushRequest(deviceToken: target, headers: headers, payload: Fixture.silent))
                if response.isSuccess { accepted.append(try #require(response.apnsID)) }
            }
            await client.shutdown()
            // After the format stamp, a line per push.
            let all = try String(contentsOf: fixture.channel.deliveryLogFile, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(all.first.map { $0 + "\n" } == DeliveryLog.format.stamp.line)
            let lines = all.dropFirst().map { $0 }
            #expect(lines.count == accepted.count)
            #expect(try fixture.deliveryLog().map(\.apnsID) == accepted)
            let first = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
            let payload = try #require(first["payload"] as? [String: Any])
            #expect(payload["com.google.firebase.auth"] != nil)
        }
    }

    @Test("log lines keep the time's text from one second to the next and still say each push's own time; numbers and payloads as JSON")
    func lineEncoderAcrossSeconds() throws {
        let times: [Double] = [1_700_000_000.999, 1_700_000_001.000, 1_700_000_001.5, 1_600_000_000.007, 1_600_000_000.007]
        var encoder = DeliveryLog.LineEncoder()
        var lines: [UInt8] = []
        for (index, time) in times.enumerated() {
            let payload = Array((index == 2 ? "{\"aps\":\n{\"content-available\":1}}" : "{\"aps\":{\"content-available\":1}}").utf8)
            encoder.encode(AcceptedPush(receivedAt: Date(timeIntervalSince1970: time), environment: .sandbox, apnsID: "id\(index)",
                                        apnsUniqueID: nil, deviceToken: DeviceToken.random(), topic: Fixture.bundleID, bundleID: Fixture.bundleID,
                                        pushType: .background, priority: .consideringPower, expiration: index == 1 ? 1_234_567_890 : (index == 3 ? 0 : nil),
                                        collapseID: index == 4 ? "a\"b\\c\n\t\r\u{1}é" : nil, teamID: "TEAM123456", keyID: "KEY1234567", payload: payload, isBackground: true, dropped: false),
                           into: &lines)
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let decoded = try Data(lines).split(separator: UInt8(ascii: "\n")).map { try JSONDecoder().decode(DeliveryLog.Entry.self, from: Data($0)) }
        #expect(decoded.map(\.time) == times.map { formatter.string(from: Date(timeIntervalSince1970: $0)) })
        #expect(decoded.map(\.expiration) == [nil, 1_234_567_890, nil, 0, nil])
        #expect(decoded.map(\.priority) == [5, 5, 5, 5, 5])
        #expect(decoded.map(\.payloadBytes) == [31, 31, 32, 31, 31])
        #expect(decoded[4].collapseID == "a\"b\\c\n\t\r\u{1}é")  // escaped as JSON, and read back
        #expect(Data(lines).split(separator: UInt8(ascii: "\n")).count == 5)  // the payload's line break became a space
    }
}

@Suite("Provider-token cache on an injected clock")
struct TokenCacheTests {
    @Test("one token is reused until the refresh interval, then exactly one new one is minted")
    func reuse() async throws {
        let clock = ManualWallClock()
        let signer = APNsWireTestKey.signer
        let cache = try ProviderTokenCache(signer: signer, clock: clock)
        let first = cache.token()
        clock.advance(by: 20 * 60)
        #expect(cache.token() == first)
        clock.advance(by: 29 * 60 + 59)
        #expect(cache.token() == first)  // 49:59
        clock.advance(by: 1)
        let second = cache.token()          // 50:00
        #expect(second != first)
        #expect(cache.token() == second)
        #expect(cache.tokensMinted == 2)
    }

    /// Seen under load (`authsim bench flows`, a busy machine): two pushes read the clock, the later
    /// reading took the lock first and minted, and the earlier reading found the token "from its
    /// future" and minted a second one; the receiver answered the 299 pushes after it
    /// TooManyProviderTokenUpdates. Here the two readings come in that order, deterministically.
    @Test("a reading a moment older than the current token takes it (the race of two pushes); a clock set back further mints anew")
    func earlierReading() throws {
        let clock = ManualWallClock()
        let cache = try ProviderTokenCache(signer: APNsWireTestKey.signer, clock: clock)
        let first = cache.token()
        clock.advance(by: -0.5)
        #expect(cache.token() == first)
        clock.advance(by: -(ProviderTokenCache.earlierReadingTolerance - 1))
        #expect(cache.token() == first)
        #expect(cache.tokensMinted == 1)
        clock.advance(by: -2)
        #expect(cache.token() != first, "a clock set back past the tolerance: the token's iat is in its future")
        #expect(cache.tokensMinted == 2)
    }

    @Test("refresh intervals outside [20, 60) minutes are refused", arguments: [0, 19 * 60, 60 * 60, 3 * 3600] as [Double])
    func refreshBounds(seconds: Double) {
        #expect(throws: SenderError(.configuration, "")) {
            try ProviderTokenCache(signer: APNsWireTestKey.signer, refreshInterval: seconds)
        }
    }

    @Test("a sender and receiver sharing a clock: 30 minutes on one token, then a refresh the receiver accepts")
    func endToEnd() async throws {
        let clock = ManualWallClock()
        try await withFixture(clock: clock) { fixture in
            let token = try fixture.device()
            let client = try fixture.client()
            let headers = PushHeaders(pushType: .background, topic: Fixture.bundleID)
            func send() async throws -> APNsResponse {
                try await client.send(PushRequest(deviceToken: token, headers: headers, payload: Fixture.silent))
            }
            #expect(try await send().status == 200)
            clock.advance(by: 30 * 60)
            #expect(try await send().status == 200)
            clock.advance(by: 21 * 60)
            #expect(try await send().status == 200)
            #expect(await client.tokens.tokensMinted == 2)
            await client.shutdown()
        }
    }
}

enum APNsWireTestKey {
    static let signer = try! ProviderTokenSigner(key: .init(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
}
