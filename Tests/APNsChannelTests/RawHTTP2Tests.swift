import APNsReceiver
import APNsSender
import APNsWire
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The receiver's HTTP/2 is its own (connection-level frames, no per-stream channels), so these
/// tests speak raw frames to it: RFC 9113's connection and stream errors, flow control both ways,
/// the stream limit, and the HPACK shortcut for repeated header blocks.
@Suite("push-receiver's HTTP/2, frame by frame")
struct RawHTTP2Tests {
    /// A client writing frames by hand on a blocking socket (run off the cooperative pool).
    ///
    /// `@unchecked Sendable` because its read buffer is mutable but never shared: each client is
    /// used by one thread at a time, the test that made it or the server thread it was handed to.
    final class RawClient: @unchecked Sendable {
        struct Frame { var type: UInt8; var flags: UInt8; var stream: UInt32; var payload: [UInt8] }
        let fd: Int32
        private var pending: [UInt8] = []
        /// The server side skips the client's 24-byte preface before reading frames.
        private var prefaceToSkip = 0

        /// The server side of a connection a test server accepted (and closes: not this client).
        /// Its reads wait for the client however long it takes: the server ends them by shutting
        /// the socket down.
        init(server fd: Int32) {
            self.fd = fd
            ownsSocket = false
            prefaceToSkip = 24
        }

        init(port: Int, settings: [(UInt16, UInt32)] = []) throws {
            fd = try connectLoopback(port: port)
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var payload: [UInt8] = []
            for (id, value) in settings {
                payload += [UInt8(id >> 8), UInt8(id & 0xFF), UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
            }
            send(Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + frame(type: 4, flags: 0, stream: 0, payload))
        }

        /// Whether this client closes its socket (the server's side is closed by its server).
        private var ownsSocket = true

        deinit { if ownsSocket { close(fd) } }

        func send(_ bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }

        /// The next frame, or nil when the peer closed the connection (or, on a client's side, 10 s
        /// passed: a bound on a test that went wrong, never a wait the test relies on).
        func next() -> Frame? {
            while true {
                if prefaceToSkip > 0, pending.count >= prefaceToSkip {
                    pending.removeFirst(prefaceToSkip)
                    prefaceToSkip = 0
                }
                if prefaceToSkip == 0, pending.count >= 9 {
                    let length = Int(pending[0]) << 16 | Int(pending[1]) << 8 | Int(pending[2])
                    if pending.count >= 9 + length {
                        let stream = UInt32(pending[5] & 0x7F) << 24 | UInt32(pending[6]) << 16 | UInt32(pending[7]) << 8 | UInt32(pending[8])
                        let frame = Frame(type: pending[3], flags: pending[4], stream: stream, payload: Array(pending[9..<(9 + length)]))
                        pending.removeFirst(9 + length)
                        return frame
                    }
                }
                var buffer = [UInt8](repeating: 0, count: 65536)
                let count = recv(fd, &buffer, buffer.count, 0)
                guard count > 0 else { return nil }
                pending += buffer[..<count]
            }
        }

        /// Frames until `done` says stop (true) or the connection ends.
        func read(until done: (Frame) -> Bool) -> [Frame] {
            var frames: [Frame] = []
            while let frame = next() {
                frames.append(frame)
                if done(frame) { break }
            }
            return frames
        }
    }

    /// The `:status` of an answer's header block, as push-receiver writes it (no dynamic table).
    static func status(_ block: [UInt8]) -> Int? {
        guard let first = block.first else { return nil }
        let indexed: [UInt8: Int] = [0x88: 200, 0x89: 204, 0x8A: 206, 0x8B: 304, 0x8C: 400, 0x8D: 404, 0x8E: 500]
        if let status = indexed[first] { return status }
        guard first == 0x08, block.count >= 5 else { return nil }
        return Int(String(decoding: block[2..<(2 + Int(block[1]))], as: UTF8.self))
    }

    static func goAwayCode(_ frame: RawClient.Frame) -> UInt32? {
        guard frame.type == 7, frame.payload.count >= 8 else { return nil }
        return frame.payload[4..<8].reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func request(_ fixture: Fixture, token: DeviceToken, extra: [(String, String)] = [], bodyLength: Int? = nil) -> [UInt8] {
        var block: [UInt8] = []
        for (name, value) in [(":method", "POST"), (":scheme", "http"), (":path", "/3/device/\(token.hex)"), (":authority", "localhost")]
            + fixture.goodFields() + [("content-length", String(bodyLength ?? Fixture.silent.count))] + extra {
            block += hpackLiteral(name, value)
        }
        return block
    }

    @Test("repeated header blocks are decoded once while the HPACK table stands still, and again after it changes")
    func repeatedBlocks() async throws {
        try await withFixture { fixture in
            let port = try #require(fixture.channel.receiver.port(for: .sandbox, transport: .cleartext))
            let token = try fixture.device()
            // Everything but the topic as literals that leave the table alone; authorization "never indexed", as curl sends it.
            var common: [UInt8] = []
            for (name, value) in [(":method", "POST"), (":scheme", "http"), (":path", "/3/device/\(token.hex)"), (":authority", "localhost"),
                                  ("apns-push-type", "background"), ("apns-priority", "5"), ("content-length", String(Fixture.silent.count))] {
                common += hpackLiteral(name, value)
            }
            let bearer = "bearer \(fixture.jwt())"
            common += [0x10] + hpackInteger(13, prefixBits: 7) + Array("authorization".utf8) + hpackInteger(bearer.utf8.count, prefixBits: 7) + Array(bearer.utf8)
            func indexing(_ topic: String) -> [UInt8] {  // literal with incremental indexing: becomes dynamic entry 62
                [0x40] + hpackInteger(10, prefixBits: 7) + Array("apns-topic".utf8) + hpackInteger(topic.utf8.count, prefixBits: 7) + Array(topic.utf8)
            }
            let indexed62 = common + [0x80 | 62]   // the same bytes each time: which topic they mean depends on the table
            let indexed63 = common + [0x80 | 63]
            let blocks: [(stream: UInt32, block: [UInt8], status: Int)] = [
                (1, common + indexing(Fixture.bundleID), 200),
                (3, indexed62, 200),
                (5, indexed62, 200),   // decoded from the memo
                (7, common + indexing("com.example.other"), 400),
                (9, indexed62, 400),   // the same bytes now name the other topic: DeviceTokenNotForTopic
                (11, indexed63, 200),
                (13, indexed62, 400),
            ]
            let statuses = try await onOwnThread { () -> [UInt32: Int] in
                let client = try RawClient(port: port)
                var answers: [UInt32: Int] = [:]
                for entry in blocks {
                    client.send(frame(type: 1, flags: 0x4, stream: entry.stream, entry.block)
                                + frame(type: 0, flags: 0x1, stream: entry.stream, Fixture.silent))
                    // One at a time, so each block is decoded against the table the previous ones left.
                    for frame in client.read(until: { $0.type == 1 && $0.stream == entry.stream }) where frame.type == 1 {
                        answers[frame.stream] = Self.status(frame.payload)
                    }
                }
                return answers
            }
            for entry in blocks { #expect(statuses[entry.stream] == entry.status, "stream \(entry.stream)") }
            #expect(try fixture.deliveryLog().count == 4)
        }
    }

    @Test("connection errors: a bad preface, DATA on stream 0, an oversized frame, PUSH_PROMISE from a client, HEADERS on an even stream")
    func connectionErrors() async throws {
        try await withFixture { fixture in
            let port = try #require(fixture.channel.receiver.port(for: .sandbox, transport: .cleartext))
            let cases: [(name: String, bytes: [UInt8], code: UInt32)] = [
                ("DATA on stream 0", frame(type: 0, flags: 0, stream: 0, [1, 2, 3]), 0x1),
                ("a 20000-byte frame", frame(type: 0, flags: 0, stream: 1, [UInt8](repeating: 0, count: 20_000)), 0x6),
                ("PUSH_PROMISE", frame(type: 5, flags: 0x4, stream: 1, [0, 0, 0, 2]), 0x1),
                ("HEADERS on stream 2", frame(type: 1, flags: 0x5, stream: 2, hpackLiteral(":method", "POST")), 0x1),
                ("a PING of 4 bytes", frame(type: 6, flags: 0, stream: 0, [1, 2, 3, 4]), 0x6),
                ("WINDOW_UPDATE of 0", frame(type: 8, flags: 0, stream: 0, [0, 0, 0, 0]), 0x1),
                ("CONTINUATION out of nowhere", frame(type: 9, flags: 0x4, stream: 1, []), 0x1),
                ("SETTINGS_ENABLE_PUSH 2", frame(type: 4, flags: 0, stream: 0, [0, 2, 0, 0, 0, 2]), 0x1),
                ("garbage HPACK", frame(type: 1, flags: 0x5, stream: 1, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]), 0x9),
            ]
            for entry in cases {
                let (code, closed) = try await onOwnThread { () -> (UInt32?, Bool) in
                    let client = try RawClient(port: port)
                    client.send(entry.bytes)
                    let frames = client.read { $0.type == 7 }
                    return (frames.last.flatMap(Self.goAwayCode), client.next() == nil)
                }
                #expect(code == entry.code, "\(entry.name)")
                #expect(closed, "\(entry.name): the connection is closed after GOAWAY")
            }
            // Not HTTP/2 at all: GOAWAY PROTOCOL_ERROR and closed.
            let (code, closed) = try await onOwnThread { () -> (UInt32?, Bool) in
                let fd = try connectLoopback(port: port)
                defer { close(fd) }
                let request = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
                _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                var buffer = [UInt8](repeating: 0, count: 4096)
                var timeout = timeval(tv_sec: 10, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var received: [UInt8] = []
                while true {
                    let count = recv(fd, &buffer, buffer.count, 0)
                    guard count > 0 else { return (count == 0 ? nil : 0, count == 0) }
                    received += buffer[..<count]
                    // The server's SETTINGS is not sent before a valid preface: the first frame is GOAWAY.
                    if received.count >= 17 {
                        let frame = RawClient.Frame(type: received[3], flags: received[4], stream: 0, payload: Array(received[9...]))
                        return (Self.goAwayCode(frame), recv(fd, &buffer, buffer.count, 0) == 0)
                    }
                }
            }
            #expect(code == 0x1)
            #expect(closed)
            // The receiver still answers.
            let client = try fixture.client()
            let token = try fixture.device()
            #expect(try await client.send(PushRequest(deviceToken: token, headers: PushHeaders(pushType: .background, topic: Fixture.bundleID),
                                                      payload: Fixture.silent)).status == 200)
            await client.shutdown()
        }
    }

    @Test("malformed requests are reset with PROTOCOL_ERROR, PING is answered, and the connection goes on")
    func streamErrors() async throws {
        try await withFixture { fixture in
            let port = try #require(fixture.channel.receiver.port(for: .sandbox, transport: .cleartext))
            let token = try fixture.device()
            let good = Self.request(fixture, token: token)
            let uppercase = good + hpackLiteral("X-Upper", "1")
            let connectionHeader = good + hpackLiteral("connection", "keep-alive")
            let withoutScheme = ([(":method", "POST"), (":path", "/3/device/\(token.hex)")] + fixture.goodFields())
                .flatMap { hpackLiteral($0.0, $0.1) }
            let results = try await onOwnThread { () -> ([UInt32: UInt32], [UInt8]?, Int?) in
                let client = try RawClient(port: port)
                client.send(frame(type: 1, flags: 0x5, stream: 1, uppercase)
                            + frame(type: 1, flags: 0x5, stream: 3, connectionHeader)
                            + frame(type: 1, flags: 0x5, stream: 5, withoutScheme)
                            // content-length says 92 bytes, the body has 3.
                            + frame(type: 1, flags: 0x4, stream: 7, good) + frame(type: 0, flags: 0x1, stream: 7, [0x7B, 0x7D, 0x20])
                            + frame(type: 6, flags: 0, stream: 0, [1, 2, 3, 4, 5, 6, 7, 8])
                            + frame(type: 1, flags: 0x4, stream: 9, good) + frame(type: 0, flags: 0x1, stream: 9, Fixture.silent))
                var resets: [UInt32: UInt32] = [:]
                var ping: [UInt8]?
                var status: Int?
                for frame in client.read(until: { $0.type == 1 && $0.stream == 9 }) {
                    if frame.type == 3 { resets[frame.stream] = frame.payload.reduce(0) { $0 << 8 | UInt32($1) } }
                    if frame.type == 6, frame.flags & 1 == 1 { ping = frame.payload }
                    if frame.type == 1 { status = Self.status(frame.payload) }
                }
                return (resets, ping, status)
            }
            #expect(results.0 == [1: 0x1, 3: 0x1, 5: 0x1, 7: 0x1])
            #expect(results.1 == [1, 2, 3, 4, 5, 6, 7, 8], "PING ACK echoes the payload")
            #expect(results.2 == 200)
            #expect(try fixture.deliveryLog().count == 1)
        }
    }

    @Test("flow control: a 100 KB body gets WINDOW_UPDATEs and a 413; an answer body waits for the client's window")
    func flowControl() async throws {
        try await withFixture { fixture in
            let port = try #require(fixture.channel.receiver.port(for: .sandbox, transport: .cleartext))
            let token = try fixture.device()
            // A body larger than the 64 KiB stream window: the client may send only what the windows allow.
            let (status, updates) = try await onOwnThread { () -> (Int?, Int) in
                let client = try RawClient(port: port)
                let length = 100_000
                client.send(frame(type: 1, flags: 0x4, stream: 1, Self.request(fixture, token: token, bodyLength: length)))
                var window = 65_535
                var sent = 0
                var updates = 0
                var status: Int?
                while status == nil {
                    while sent < length, window > 0 {
                        let chunk = min(16_384, window, length - sent)
                        sent += chunk
                        window -= chunk
                        client.send(frame(type: 0, flags: sent == length ? 0x1 : 0, stream: 1, [UInt8](repeating: 0x20, count: chunk)))
                    }
                    guard let frame = client.next() else { break }
                    if frame.type == 8, frame.stream == 1 {
                        updates += 1
                        window += Int(frame.payload.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF)
                    }
                    if frame.type == 1, frame.stream == 1 { status = Self.status(frame.payload) }
                }
                return (status, updates)
            }
            #expect(status == 413)
            #expect(updates >= 1)

            // SETTINGS_INITIAL_WINDOW_SIZE 0: the 400's JSON body waits until the stream's window opens.
            let (frames, late) = try await onOwnThread { () -> ([UInt8], [UInt8]) in
                let client = try RawClient(port: port, settings: [(0x4, 0)])
                client.send(frame(type: 1, flags: 0x5, stream: 1, Self.request(fixture, token: token, extra: [("apns-id", "not-a-uuid")], bodyLength: 0)))
                let before = client.read { $0.type == 1 && $0.stream == 1 }.map(\.type)
                // A window of 10 bytes, then enough for the rest: the body comes in pieces that fit.
                client.send(frame(type: 8, flags: 0, stream: 1, [0, 0, 0, 10]))
                var body = client.read { $0.type == 0 && $0.stream == 1 }.filter { $0.type == 0 }.flatMap(\.payload)
                client.send(frame(type: 8, flags: 0, stream: 1, [0, 0, 0x10, 0]))
                body += client.read { $0.type == 0 && $0.stream == 1 && $0.flags & 1 == 1 }.filter { $0.type == 0 }.flatMap(\.payload)
                return (before, body)
            }
            #expect(!frames.contains(0), "no DATA before the window opens")
            #expect(String(decoding: late, as: UTF8.self) == #"{"reason":"BadMessageId"}"#)
        }
    }

    @Test("past 1,000 open streams a new one is refused with REFUSED_STREAM, and the open ones are still answered")
    func streamLimit() async throws {
        try await withFixture { fixture in
            let port = try #require(fixture.channel.receiver.port(for: .sandbox, transport: .cleartext))
            let token = try fixture.device()
            let (refused, answered) = try await onOwnThread { () -> ([UInt32], Int) in
                let client = try RawClient(port: port)
                let block = Self.request(fixture, token: token)
                var bytes: [UInt8] = []
                // 1,001 requests whose bodies have not come yet.
                for index in 0..<1_001 { bytes += frame(type: 1, flags: 0x4, stream: UInt32(2 * index + 1), block) }
                client.send(bytes)
                var refused: [UInt32] = []
                for frame in client.read(until: { $0.type == 3 }) where frame.type == 3 { refused.append(frame.stream) }
                // Now the bodies of the first ten.
                var bodies: [UInt8] = []
                for index in 0..<10 { bodies += frame(type: 0, flags: 0x1, stream: UInt32(2 * index + 1), Fixture.silent) }
                client.send(bodies)
                var answered = 0
                _ = client.read { frame in
                    if frame.type == 1, Self.status(frame.payload) == 200 { answered += 1 }
                    return answered == 10
                }
                return (refused, answered)
            }
            #expect(refused == [2_001])
            #expect(answered == 10)
        }
    }
}
