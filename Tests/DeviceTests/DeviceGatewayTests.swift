@testable import APNsReceiver
import APNsWire
@testable import DeviceLink
import Foundation
import HTTPTransport
import NIOHTTPTransport
import Synchronization
import TestSupport
import Testing
import Utilities
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The device gateway (Hummingbird) and the remote device (the shared HTTP transport) together, and
/// the gateway's refusals as curl-style clients meet them.
@Suite("The device gateway and remote devices")
struct DeviceGatewayTests {
    static let push = AcceptedPush(receivedAt: Date(), environment: .sandbox, apnsID: "0e4b7ed3-1d5b-4a32-9b49-a4b7f4d0f3a1",
                                   deviceToken: DeviceToken(hex: "ab12")!, topic: "com.example.authsim", bundleID: "com.example.authsim",
                                   pushType: .background, priority: .consideringPower, teamID: "TEAM", keyID: "KEY",
                                   payload: Array(#"{"aps":{"content-available":1},"com.google.firebase.auth":{"receipt":"R","secret":"S/1"}}"#.utf8),
                                   isBackground: true, dropped: false)

    @Test("a device registers, gets its pushes on the stream, and hangs up; the hub forgets it")
    func roundTrip() async throws {
        let registry = DeviceRegistry()
        let notes = Mutex<[DeliveryNote]>([])
        let hub = DeviceHub(observer: { _, note in notes.withLock { $0.append(note) } })
        let gateway = try await DeviceGateway.start(registry: registry, hub: hub)
        let transport = NIOHTTP1Transport()
        // The gateway's answers bounded at 120 s, not the default 10: with the suite on two busy cores a
        // registration once took longer. The limit bounds a failure.
        let token = try await RemoteDevice.register(gatewayHost: "127.0.0.1", gatewayPort: gateway.port, environment: .sandbox,
                                                    bundleID: "com.example.authsim", transport: transport, timeout: .seconds(120))
        #expect(registry.lookup(token, in: .sandbox)?.bundleID == "com.example.authsim")
        let received = Received()
        let device = try await RemoteDevice.connect(gatewayHost: "127.0.0.1", gatewayPort: gateway.port, token: token,
                                                    environment: .sandbox, transport: transport, timeout: .seconds(120)) { received.add($0) }
        var push = Self.push
        push.deviceToken = token
        await hub.deliver(push)
        await received.wait(count: 1)
        let got = try #require(received.pushes.first)
        #expect(got.apnsID == push.apnsID)
        #expect(got.bundleID == "com.example.authsim")
        let payload = try JSONSerialization.jsonObject(with: Data(got.payload)) as? [String: Any]
        #expect((payload?["com.google.firebase.auth"] as? [String: String])?["secret"] == "S/1")
        await device.disconnect()
        // The gateway notices the hang-up and the hub stops routing to it.
        await hub.waitForConnectedDevices(atMost: 0)
        await hub.deliver(push)
        #expect(notes.withLock { $0 } == [.handedToGateway(latency: .zero), .noDevice])
        await gateway.shutdown()
        transport.shutdown()
    }

    @Test("shutting the gateway down ends open streams at once")
    func shutdownEndsStreams() async throws {
        let gateway = try await DeviceGateway.start(registry: DeviceRegistry(), hub: DeviceHub())
        let transport = NIOHTTP1Transport()
        _ = try await RemoteDevice.connect(gatewayHost: "127.0.0.1", gatewayPort: gateway.port, token: DeviceToken(hex: "cd34")!,
                                           environment: .production, transport: transport, timeout: .seconds(120)) { _ in }
        // Without ending the open stream, a graceful shutdown waits for it for ever: the wait ends
        // with the shutdown; the limit only bounds a test that failed.
        let stopped = await withLimit(.seconds(120)) { await gateway.shutdown() } != nil
        #expect(stopped, "the gateway did not stop within 120 s with a device connected")
        transport.shutdown()
    }

    /// issue 19's crash: a gateway that cannot be reached was a "leaking promise" and SIGILL.
    @Test("no gateway listening: a clear error naming the address and what to start, no crash")
    func unreachable() async throws {
        let transport = NIOHTTP1Transport()
        defer { transport.shutdown() }
        let error = await #expect(throws: ReceiverError.self) {
            try await RemoteDevice.register(gatewayHost: "127.0.0.1", gatewayPort: 1, environment: .sandbox, bundleID: "com.a",
                                            transport: transport)
        }
        #expect(error?.message.contains("cannot reach the device gateway at 127.0.0.1:1") == true)
        #expect(error?.message.contains("push-receiver") == true)
    }

    @Test("bad registrations, unknown paths, other methods and oversized bodies get JSON errors with their status")
    func refusals() async throws {
        let gateway = try await DeviceGateway.start(registry: DeviceRegistry(), hub: DeviceHub())
        let base = "http://127.0.0.1:\(gateway.port)"
        func call(_ method: String, _ path: String, _ body: String? = nil) async throws -> (Int, String) {
            var request = URLRequest(url: URL(string: base + path)!)
            request.httpMethod = method
            request.httpBody = body.map { Data($0.utf8) }
            let (data, response) = try await URLSession.shared.data(for: request)
            let error = (try? JSONSerialization.jsonObject(with: data) as? [String: String])?["error"] ?? ""
            return ((response as! HTTPURLResponse).statusCode, error)
        }
        let (bad, badError) = try await call("POST", "/devices", #"{"environment":"staging","bundleID":"com.a"}"#)
        #expect(bad == 400)
        #expect(badError.contains("sandbox|production"))
        let (badToken, tokenError) = try await call("POST", "/devices", #"{"environment":"sandbox","bundleID":"com.a","token":"xyz"}"#)
        #expect(badToken == 400)
        #expect(tokenError == "token must be even-length hex")
        #expect(try await call("GET", "/nowhere").0 == 404)
        #expect(try await call("GET", "/devices").0 == 405)
        #expect(try await call("GET", "/devices/staging/ab12/notifications").0 == 404)
        let (large, largeError) = try await call("POST", "/devices", String(repeating: " ", count: 70_000))
        #expect(large == 413)
        #expect(largeError.contains("65536"))
        await gateway.shutdown()
    }
}

/// Pushes collected from the stream's callback.
final class Received: Sendable {
    private let state = Mutex<(pushes: [RemotePush], waiters: Waiters<Int>)>(([], Waiters()))
    func add(_ push: RemotePush) {
        let ready = state.withLock { state in
            state.pushes.append(push)
            return state.waiters.ready(for: state.pushes.count)
        }
        for waiter in ready { waiter.resume() }
    }
    var pushes: [RemotePush] { state.withLock { $0.pushes } }

    /// Returns once `count` pushes have come (woken by each push).
    func wait(count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waits = state.withLock { state in state.waiters.add({ $0 >= count }, continuation, now: state.pushes.count) }
            if !waits { continuation.resume() }
        }
    }
}
