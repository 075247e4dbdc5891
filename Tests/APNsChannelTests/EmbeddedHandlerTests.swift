@testable import APNsReceiver
@testable import APNsSender
import APNsWire
import Foundation
import HTTP2Wire
import LocalPKI
import Logging
import NIOCore
import NIOEmbedded
import Synchronization
import TestSupport
import Testing
import Utilities

/// push-receiver's and apns-sender's HTTP/2 handlers without sockets: each in an EmbeddedChannel,
/// fed bytes, its writes read back as frames, time moved by hand. What is left in the handlers
/// is APNs's (the delivery log before the answer, faults, GOAWAY's reason, waiting pushes); the
/// protocol is the core's (HTTP2WireTests).
@Suite("The HTTP/2 handlers in an EmbeddedChannel")
struct EmbeddedHandlerTests {
    struct Receiver {
        let channel: EmbeddedChannel
        let log: DeliveryLog
        let token: DeviceToken
        let key: APNsAuthKey
        let folder: URL

        init(faults: [FaultRule] = [], events: ReceiverEvents = ReceiverEvents(observer: nil)) throws {
            folder = temporaryDirectory("embedded-receiver")
            key = APNsAuthKey.generate()
            token = DeviceToken.random()
            log = try DeliveryLog(file: folder.appendingPathComponent("deliveries.jsonl"))
            let registry = DeviceRegistry(devices: [RegisteredDevice(token: token, environment: .sandbox, bundleID: Fixture.bundleID)])
            let services = ReceiverServices(
                validator: PushValidator(tokens: ProviderTokenVerifier(keys: [key.trusted()]), registry: registry),
                log: log, sharedLog: nil, faults: FaultPlan(faults), delivery: nil, clock: SystemWallClock(),
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), events: events)
            channel = EmbeddedChannel()
            let exchange = PushExchange(services: services, connection: ConnectionContext(environment: .sandbox, serverName: nil))
            try channel.pipeline.syncOperations.addHandler(APNsConnectionHandler(exchange: exchange, handshake: nil, allocator: channel.allocator))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 50_000)).wait()
        }

        /// The client's preface and SETTINGS, and the push requests on streams 1, 3, …
        func pushes(_ count: Int) -> ByteBuffer { pushes(to: Array(repeating: token.hex, count: count)) }

        /// The same, one push to each token (as hex) in turn; every header block written without
        /// touching the HPACK table, as nghttp2's clients send pushes.
        func pushes(to tokens: [String]) -> ByteBuffer {
            var bytes = ByteBuffer(bytes: HTTP2Limits.preface)
            bytes.writeSettingsFrame([])
            let jwt = key.signer.token(issuedAt: Date())
            for (index, hex) in tokens.enumerated() {
                var block = ByteBuffer()
                for (name, value) in [(":method", "POST"), (":scheme", "https"), (":path", "/3/device/\(hex)"), (":authority", "localhost"),
                                      ("authorization", "bearer \(jwt)"), ("apns-push-type", "background"), ("apns-topic", Fixture.bundleID),
                                      ("apns-priority", "5")] {
                    block.writeInteger(UInt8(0))
                    HPACK.writeString(name, into: &block)
                    HPACK.writeString(value, into: &block)
                }
                let stream = UInt32(2 * index + 1)
                bytes.writeFrameHeader(length: block.readableBytes, type: .headers, flags: HTTP2Flag.endHeaders, stream: stream)
                bytes.writeBuffer(&block)
                bytes.writeFrameHeader(length: Fixture.silent.count, type: .data, flags: HTTP2Flag.endStream, stream: stream)
                bytes.writeBytes(Fixture.silent)
            }
            return bytes
        }

        /// Every write the handler made so far, each cut into frames (type, stream, payload).
        func writes() throws -> [[(type: HTTP2FrameType?, stream: UInt32, payload: ByteBuffer)]] {
            var writes: [[(type: HTTP2FrameType?, stream: UInt32, payload: ByteBuffer)]] = []
            while var bytes = try channel.readOutbound(as: ByteBuffer.self) {
                var reader = HTTP2FrameReader()
                reader.append(&bytes)
                var frames: [(type: HTTP2FrameType?, stream: UInt32, payload: ByteBuffer)] = []
                while case .frame(let header, let payload) = reader.next() { frames.append((HTTP2FrameType(rawValue: header.type), header.stream, payload)) }
                writes.append(frames)
            }
            return writes
        }
    }

    @Test("accepted pushes of one read are logged, then answered 200 in that read's one write")
    func acceptedInOneWrite() throws {
        let receiver = try Receiver()
        try receiver.channel.writeInbound(receiver.pushes(3))
        let writes = try receiver.writes()
        #expect(writes.count == 1)
        let answers = writes.first?.filter { $0.type == .headers } ?? []
        #expect(answers.map(\.stream) == [1, 3, 5])
        #expect(answers.allSatisfy { $0.payload.getInteger(at: $0.payload.readerIndex, as: UInt8.self) == 0x88 })
        let logged = try DeliveryLog.entries(in: receiver.log.file)
        #expect(logged.count == 3)
        #expect(try DeliveryLog.count(in: receiver.log.file) == 3)
        // A line a kill cut short (no newline yet) is not a push the log records.
        let handle = try FileHandle(forWritingTo: receiver.log.file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"time":"2026-"#.utf8))
        try handle.close()
        #expect(try DeliveryLog.entries(in: receiver.log.file).count == 3)
        #expect(try DeliveryLog.count(in: receiver.log.file) == 3)
        _ = try? receiver.channel.finish()
    }

    @Test("pushes that repeat a head are read once and answered each on its own; a push with another head between them is read anew")
    func repeatedHeads() throws {
        // The connection hands out one head for a repeated header block, and the handler keeps
        // what it read from it (the token, the headers APNs reads, the head's checks): a push to
        // an unknown token between two to the registered one must not borrow either's reading.
        let events = Mutex<[String]>([])
        let receiver = try Receiver(events: ReceiverEvents(observer: { event in
            switch event {
            case .accepted(let push): events.withLock { $0.append("accepted \(push.deviceToken.short)") }
            case .rejected(let rejection, _, _, let token): events.withLock { $0.append("\(rejection.reason) \(token.prefix(8))") }
            default: break
            }
        }, observesAccepted: false))
        let stranger = DeviceToken.random()
        try receiver.channel.writeInbound(receiver.pushes(to: [receiver.token.hex, receiver.token.hex, stranger.hex, receiver.token.hex]))
        let answers = try receiver.writes().flatMap { $0 }.filter { $0.type == .headers }
        #expect(answers.map(\.stream) == [5, 1, 3, 7])  // the refusal is answered at once, the others after the log's write
        let accepted = answers.filter { $0.payload.getInteger(at: $0.payload.readerIndex, as: UInt8.self) == 0x88 }
        #expect(accepted.map(\.stream) == [1, 3, 7])
        #expect(try DeliveryLog.entries(in: receiver.log.file).map(\.deviceToken) == Array(repeating: receiver.token.hex, count: 3))
        // The observer said it does not hear of accepted pushes; it hears of the refusal.
        #expect(events.withLock { $0 } == ["BadDeviceToken \(stranger.hex.prefix(8))"])
        _ = try? receiver.channel.finish()
    }

    @Test("a delay fault holds the answer until the event loop's clock passes it, and the push is logged before")
    func delayFault() throws {
        let receiver = try Receiver(faults: [FaultRule(.delay(milliseconds: 500))])
        try receiver.channel.writeInbound(receiver.pushes(1))
        #expect(try receiver.writes().flatMap { $0 }.filter { $0.type == .headers }.isEmpty)
        receiver.channel.embeddedEventLoop.advanceTime(by: .milliseconds(499))
        #expect(try receiver.writes().isEmpty)
        receiver.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(try receiver.writes().flatMap { $0 }.map(\.stream) == [1])
        _ = try? receiver.channel.finish()
    }

    @Test("a goaway fault: GOAWAY NO_ERROR with APNs's JSON reason, the push not processed, the connection closed after the grace")
    func goAwayFault() throws {
        let receiver = try Receiver(faults: [FaultRule(.goaway(.shutdown))])
        try receiver.channel.writeInbound(receiver.pushes(1))
        let frames = try receiver.writes().flatMap { $0 }
        let goAway = try #require(frames.first { $0.type == .goAway })
        var payload = goAway.payload
        #expect(payload.readInteger(as: UInt32.self) == 0)  // last stream: nothing processed
        #expect(payload.readInteger(as: UInt32.self) == HTTP2Code.noError.rawValue)
        #expect(payload.readString(length: payload.readableBytes) == #"{"reason":"Shutdown"}"#)
        #expect(!frames.contains { $0.type == .headers })
        #expect(receiver.channel.isActive)
        receiver.channel.embeddedEventLoop.advanceTime(by: GoAwayTiming.grace)
        #expect(!receiver.channel.isActive)
    }

    @Test("shutting down: an idle connection gets GOAWAY Shutdown and is closed at once; one with a push in flight gets its answer first")
    func shutdownGoAway() throws {
        // Idle: the provider's pooled connection after its pushes were answered (aioapns keeps one).
        let idle = try Receiver()
        try idle.channel.writeInbound(idle.pushes(1))
        _ = try idle.writes()
        let handler = try idle.channel.pipeline.syncOperations.handler(type: APNsConnectionHandler.self)
        handler.goAway(reason: .shutdown, lastStreamID: UInt32(Int32.max), closeIfIdle: true)
        let frames = try idle.writes().flatMap { $0 }
        var payload = try #require(frames.first { $0.type == .goAway }).payload
        payload.moveReaderIndex(forwardBy: 8)
        #expect(payload.readString(length: payload.readableBytes) == #"{"reason":"Shutdown"}"#)
        // Closed without the clock moving: nothing waits for a client that may never read.
        #expect(!idle.channel.isActive)

        // A push held by a delay fault is still in flight: its answer goes out, then the grace ends the connection.
        let busy = try Receiver(faults: [FaultRule(.delay(milliseconds: 200))])
        try busy.channel.writeInbound(busy.pushes(1))
        let busyHandler = try busy.channel.pipeline.syncOperations.handler(type: APNsConnectionHandler.self)
        busyHandler.goAway(reason: .shutdown, lastStreamID: UInt32(Int32.max), closeIfIdle: true)
        #expect(busy.channel.isActive)
        busy.channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(try busy.writes().flatMap { $0 }.contains { $0.type == .headers })
        busy.channel.embeddedEventLoop.advanceTime(by: GoAwayTiming.grace)
        #expect(!busy.channel.isActive)
    }

    // MARK: The sender's handler

    /// An active channel with the sender's handler; its preface and SETTINGS already read off.
    private func sender() throws -> (EmbeddedChannel, HTTP2ClientHandler, ClientConnectionState) {
        let channel = EmbeddedChannel()
        let state = ClientConnectionState()
        let handler = HTTP2ClientHandler(state: state, scheme: "https", authority: "api.sandbox.push.apple.com",
                                         behindTLS: false, allocator: channel.allocator)
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        let preface = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(preface.readableBytesView.starts(with: HTTP2Limits.preface))
        return (channel, handler, state)
    }

    private func push(_ reply: UnsafeContinuation<Result<APNsResponse, SenderError>, Never>) -> OutgoingPush {
        OutgoingPush(method: "POST", path: "/3/device/ab", fields: [("apns-topic", Fixture.bundleID)], body: Array("{}".utf8),
                     reply: .task(reply), timeout: .seconds(30))
    }

    @Test("the sender: an answer is read back with its apns-id; a JSON reason with an error status")
    func senderAnswers() async throws {
        let (channel, handler, _) = try sender()
        let result = await withUnsafeContinuation { continuation in
            handler.enqueue([push(continuation)])
            var answer = ByteBuffer()
            answer.writeSettingsFrame([(.maxConcurrentStreams, 10)])
            var block = ByteBuffer(bytes: [0x8C])  // :status 400
            HPACK.writeInteger(0, prefixBits: 4, pattern: 0, into: &block)
            HPACK.writeString("apns-id", into: &block)
            HPACK.writeString("6f1f1b42-4a11-4d5f-a8a4-000000000001", into: &block)
            answer.writeFrameHeader(length: block.readableBytes, type: .headers, flags: HTTP2Flag.endHeaders, stream: 1)
            answer.writeBuffer(&block)
            let body = #"{"reason":"BadTopic"}"#
            answer.writeFrameHeader(length: body.utf8.count, type: .data, flags: HTTP2Flag.endStream, stream: 1)
            answer.writeString(body)
            try! channel.writeInbound(answer)
        }
        let response = try result.get()
        #expect(response.status == 400)
        #expect(response.reason == .badTopic)
        #expect(response.apnsID == "6f1f1b42-4a11-4d5f-a8a4-000000000001")
        _ = try? channel.finish()
    }

    @Test("the sender: a server that breaks HTTP/2's rules (a WINDOW_UPDATE of 0) gets GOAWAY PROTOCOL_ERROR, and the push says why")
    func senderRefusesBrokenServer() async throws {
        let (channel, handler, state) = try sender()
        let result = await withUnsafeContinuation { continuation in
            handler.enqueue([push(continuation)])
            var bytes = ByteBuffer()
            bytes.writeSettingsFrame([])
            bytes.writeWindowUpdate(stream: 0, increment: 0)
            try! channel.writeInbound(bytes)
        }
        guard case .failure(let error) = result else { Issue.record("the push succeeded: \(result)"); return }
        #expect(error.code == .interrupted)
        #expect(state.closedBecause?.contains("WINDOW_UPDATE of 0") == true)
        var written = ByteBuffer()
        while var bytes = try channel.readOutbound(as: ByteBuffer.self) { written.writeBuffer(&bytes) }
        var reader = HTTP2FrameReader()
        reader.append(&written)
        var goAwayCode: UInt32?
        while case .frame(let header, let payload) = reader.next() {
            if header.type == HTTP2FrameType.goAway.rawValue { goAwayCode = payload.getInteger(at: payload.readerIndex + 4, as: UInt32.self) }
        }
        #expect(goAwayCode == HTTP2Code.protocolError.rawValue)
        #expect(!channel.isActive)
    }

    @Test("the sender: a push handed over before the channel is connected goes out right behind the preface, once it is")
    func senderPushBeforeConnected() async throws {
        // APNsConnection hands its handler the pushes that come while connecting, on the event loop.
        let channel = EmbeddedChannel()
        let handler = HTTP2ClientHandler(state: ClientConnectionState(), scheme: "https", authority: "api.sandbox.push.apple.com",
                                         behindTLS: false, allocator: channel.allocator)
        try channel.pipeline.syncOperations.addHandler(handler)
        let result = await withUnsafeContinuation { continuation in
            handler.enqueue([push(continuation)])
            // Nothing is written before the connection is made, not even the preface.
            #expect(try! channel.readOutbound(as: ByteBuffer.self) == nil)
            try! channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
            var written = ByteBuffer()
            while var bytes = try! channel.readOutbound(as: ByteBuffer.self) { written.writeBuffer(&bytes) }
            #expect(written.readableBytesView.starts(with: HTTP2Limits.preface))
            written.moveReaderIndex(forwardBy: HTTP2Limits.preface.count)
            var reader = HTTP2FrameReader()
            reader.append(&written)
            var types: [HTTP2FrameType?] = []
            while case .frame(let header, _) = reader.next() { types.append(HTTP2FrameType(rawValue: header.type)) }
            // In one write: our SETTINGS, then the push's HEADERS and DATA on stream 1.
            #expect(types == [.settings, .headers, .data])
            var answer = ByteBuffer()
            answer.writeSettingsFrame([])
            var block = ByteBuffer(bytes: [0x88])  // :status 200
            answer.writeFrameHeader(length: block.readableBytes, type: .headers, flags: HTTP2Flag.endHeaders | HTTP2Flag.endStream, stream: 1)
            answer.writeBuffer(&block)
            try! channel.writeInbound(answer)
        }
        #expect(try result.get().status == 200)
        _ = try? channel.finish()
    }
}
