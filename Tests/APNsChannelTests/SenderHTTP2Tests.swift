import APNsSender
import APNsWire
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// apns-sender's HTTP/2 is its own; these tests put it in front of a server written frame by frame,
/// to reach what push-receiver never does: no free streams, and no flow-control window.
@Suite("apns-sender's HTTP/2 against a hand-written server")
struct SenderHTTP2Tests {
    /// A one-connection cleartext HTTP/2 server on a thread of its own, scripted by `script`.
    ///
    /// It never gives up on a silent client by the clock: the script reads until the client closes
    /// the connection, or until ``stop()`` (called by the test when it is done) shuts the socket down.
    /// (Until issue 26 it gave up after 10 s of silence, and a test process whose tasks were starved
    /// for 10 s, as they were while backends made RSA keys, saw the connection closed under it.)
    final class ScriptedServer: Sendable {
        let port: Int
        /// The listening socket and the accepted one; closed only by the server's thread, once
        /// the script is done, so no other test's socket can take their numbers while in use.
        private final class Sockets: Sendable {
            let state = Mutex<(listener: Int32, accepted: Int32?, stopped: Bool)>((-1, nil, false))
        }
        private let sockets = Sockets()

        init(script: @escaping @Sendable (RawHTTP2Tests.RawClient) -> Void) throws {
            let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, length) } }
            guard bound == 0, listen(socketFD, 4) == 0 else {
                close(socketFD)
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) } }
            port = Int(UInt16(bigEndian: address.sin_port))
            sockets.state.withLock { $0.listener = socketFD }
            Thread.detachNewThread { [sockets] in
                let fd = accept(socketFD, nil, nil)
                let go = sockets.state.withLock { state -> Bool in
                    if fd >= 0 { state.accepted = fd }
                    return fd >= 0 && !state.stopped
                }
                if go { script(RawHTTP2Tests.RawClient(server: fd)) }
                sockets.state.withLock { state in
                    if let accepted = state.accepted { close(accepted) }
                    close(state.listener)
                    state = (-1, nil, true)
                }
            }
        }

        /// Ends the script: a read in progress returns nil, as when the client closes.
        func stop() {
            sockets.state.withLock { state in
                guard !state.stopped else { return }
                state.stopped = true
                shutdown(state.listener, Int32(SHUT_RDWR))
                if let accepted = state.accepted { shutdown(accepted, Int32(SHUT_RDWR)) }
            }
        }

        deinit { stop() }
    }

    static func client(port: Int, timeout: TimeInterval) throws -> APNsClient {
        let configuration = APNsClientConfiguration(environment: .sandbox, host: "127.0.0.1", port: port, tls: nil,
                                                    timeout: timeout, retries: 0)
        return try APNsClient(configuration: configuration, tokens: try ProviderTokenCache(signer: APNsWireTestKey.signer))
    }

    static let push = PushRequest(rawDeviceToken: "ab12", headers: PushHeaders(pushType: .background, topic: "com.example.app"),
                                  payload: Array(#"{"aps":{"content-available":1}}"#.utf8))

    @Test("a server that allows no streams: the push fails with a timeout after its deadline, it does not hang")
    func noStreams() async throws {
        let server = try ScriptedServer { connection in
            // SETTINGS_MAX_CONCURRENT_STREAMS 0, then read until the client leaves.
            connection.send(HTTP2TestFrames.frame(type: 4, flags: 0, stream: 0, [0, 3, 0, 0, 0, 0]))
            while connection.next() != nil {}
        }
        defer { server.stop() }
        let client = try Self.client(port: server.port, timeout: 1)
        do {
            let response = try await client.send(Self.push)
            Issue.record("an answer from a server that allows no streams: \(response.status)")
        } catch {
            // The push's own deadline, not `connectionClosed` from the server giving up later (the
            // code tells them apart; a bound on the wall time would fail on a loaded machine).
            #expect(error.code == .timeout, "\(error)")
        }
        await client.shutdown()
    }

    @Test("a server that opens no window: the body waits for WINDOW_UPDATE, then goes, and the answer arrives")
    func flowControl() async throws {
        let received = ReceivedBody()
        let server = try ScriptedServer { connection in
            // SETTINGS_INITIAL_WINDOW_SIZE 0: no stream may send DATA yet.
            connection.send(HTTP2TestFrames.frame(type: 4, flags: 0, stream: 0, [0, 4, 0, 0, 0, 0]))
            var sawHeaders = false
            while let frame = connection.next() {
                if frame.type == 1 && !sawHeaders {
                    sawHeaders = true
                    // Give the stream a window only after its headers came alone.
                    connection.send(HTTP2TestFrames.frame(type: 8, flags: 0, stream: frame.stream, [0, 0, 0x10, 0]))
                }
                if frame.type == 0 {
                    received.append(frame.payload, sawHeadersFirst: sawHeaders)
                    if frame.flags & 1 == 1 {
                        // :status 200, apns-id as a literal.
                        let id = Array("0e4b7ed3-1d5b-4a32-9b49-a4b7f4d0f3a1".utf8)
                        let block: [UInt8] = [0x88, 0x00, 7] + Array("apns-id".utf8) + [UInt8(id.count)] + id
                        connection.send(HTTP2TestFrames.frame(type: 1, flags: 0x5, stream: frame.stream, block))
                    }
                }
            }
        }
        defer { server.stop() }
        let client = try Self.client(port: server.port, timeout: 10)
        let response = try await client.send(Self.push)
        await client.shutdown()
        #expect(response.status == 200)
        #expect(response.apnsID == "0e4b7ed3-1d5b-4a32-9b49-a4b7f4d0f3a1")
        #expect(received.bytes == Self.push.payload)
        #expect(received.inOrder)
    }

    @Test("pushes handed over while the connection is being made go out behind the preface, each answered")
    func pushesWhileConnecting() async throws {
        let server = try ScriptedServer { connection in
            // Nothing from the server until the client's frames come: its SETTINGS, then the pushes.
            // (A second connection would wait unaccepted, and its pushes time out.)
            while let frame = connection.next() {
                if frame.type == 4, frame.flags & 1 == 0 {
                    connection.send(HTTP2TestFrames.frame(type: 4, flags: 0, stream: 0, []))
                    connection.send(HTTP2TestFrames.frame(type: 4, flags: 1, stream: 0, []))
                }
                // A push's DATA with END_STREAM: answer it with :status 200.
                if frame.type == 0, frame.flags & 1 == 1 {
                    connection.send(HTTP2TestFrames.frame(type: 1, flags: 0x5, stream: frame.stream, [0x88]))
                }
            }
        }
        defer { server.stop() }
        let client = try Self.client(port: server.port, timeout: 10)
        // APNsClient hands out a connection at once, while it is still being made (sending no
        // longer waits for "connected" in a task): all three go on that first connection.
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<3 { group.addTask { try await client.send(Self.push).status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        await client.shutdown()
        #expect(statuses == [200, 200, 200])
    }

    @Test("a connection that cannot be made: the push fails at once saying so, and the next push tries again")
    func refusedConnection() async throws {
        // Nothing listens on the loopback's port 9 (as in the bulk run's test without a server).
        let port = 9
        let client = try Self.client(port: port, timeout: 10)
        for _ in 0..<2 {
            do {
                let response = try await client.send(Self.push)
                Issue.record("an answer from a closed port: \(response.status)")
            } catch {
                #expect(error.code == .connect, "\(error)")
                #expect(error.message.contains("cannot connect to 127.0.0.1:\(port)"), "\(error)")
                #expect(!error.isRetryable)
            }
        }
        await client.shutdown()
    }

    final class ReceivedBody: Sendable {
        private let state = Mutex<(data: [UInt8], ordered: Bool)>(([], true))
        func append(_ bytes: [UInt8], sawHeadersFirst: Bool) {
            state.withLock { state in
                state.data += bytes
                state.ordered = state.ordered && sawHeadersFirst
            }
        }
        var bytes: [UInt8] { state.withLock { $0.data } }
        var inOrder: Bool { state.withLock { $0.ordered } }
    }
}

/// `frame(type:flags:stream:_:)` under a name that closures with a `frame` variable can still reach.
enum HTTP2TestFrames {
    static func frame(type: UInt8, flags: UInt8, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        APNsChannelTests.frame(type: type, flags: flags, stream: stream, payload)
    }
}
